"""Hand-computed cases: the arithmetic is written out in each test."""

import datetime as dt
from decimal import Decimal as D

from costs.engine.inputs import ApiPrice, ServerPrice
from costs.engine.plan import cost_plan, option_to_dict
from tests.unit.cost_inputs import inputs, offer, usd, workload

ONE_GPU = dict(candidate_id="a100x1", accelerator_id="a100", gpu_count=1, gpus_per_server=1, server_count=1)


def _line(option: dict, key: str) -> dict:
    return next(ln for row in option["rows"] for ln in row["lines"] if ln["key"] == key)


def _row(option: dict, row: str) -> dict:
    return next(r for r in option["rows"] if r["row"] == row)


def _only(result, kind: str) -> dict:
    return option_to_dict(next(p for p in result.options if p.option.kind == kind))


def _one_gpu_cloud(**opts):
    return cost_plan(
        inputs=inputs(
            workloads=[workload(**ONE_GPU)],
            offers=[
                offer(accelerator_id="a100", gpus_per_instance=1, on_demand=usd("2.50"), spot=usd("1.00"))
            ],
            servers=[],
            options=("cloud_on_demand", "cloud_spot"),
            **opts,
        )
    )


def test_one_cloud_gpu_for_a_month_at_a_known_rate():
    # 1 GPU x 730 h x 2.50 USD/h = 1825.00 USD, all of it useful at u = 1, e = 1
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1)), "cloud_on_demand")
    assert _row(od, "gpu_time")["total_net"] == "1825.00"
    assert _line(od, "gpu_time.idle")["total_net"] == "0.00"


def test_idle_time_is_its_own_line():
    # efficiency 0.8: useful 0.8 x 1825 = 1460.00, idle 0.2 x 1825 = 365.00
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D("0.8")), "cloud_on_demand")
    assert _line(od, "gpu_time.useful")["total_net"] == "1460.00"
    assert _line(od, "gpu_time.idle")["total_net"] == "365.00"


def test_cloud_gpu_time_scales_with_utilisation():
    # u = 0.5: 365 billed hours x 2.50 = 912.50
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D("0.5"), efficiency=D(1)), "cloud_on_demand")
    assert _row(od, "gpu_time")["total_net"] == "912.50"


def test_spot_pays_for_lost_work_and_restarts():
    # 4 interruptions x (1 h checkpoint interval / 2 + 0.25 h restart) = 3 h extra: 733 h x 1.00 = 733.00
    spot = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1)), "cloud_spot")
    assert _row(spot, "gpu_time")["total_net"] == "733.00"


def test_vat_on_cloud_gpu_time_in_2026_is_22_percent():
    # 1825.00 x 0.22 = 401.50
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1)), "cloud_on_demand")
    assert _line(od, "gpu_time.useful")["vat"] == "401.50"


def test_engineering_is_priced_in_roubles_and_converted():
    # cloud setup: floor 40 h x 4000 RUB + 16 h x 3000 RUB = 208000 RUB, plus per instance
    # 0 h mlops + 1 h x 3000 RUB: 211000 RUB / 80 = 2637.50 USD, no VAT on own staff
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1)), "cloud_on_demand")
    setup = _line(od, "engineering.setup")
    assert (setup["total_net"], setup["vat"]) == ("2637.50", "0.00")


def _onprem(horizon: int, **rate_values):
    rv = {"amortisation_years": "3", "residual_value_share": "0", "pue": "1.5", "power_tariff_per_kwh": "8"}
    rv.update(rate_values)
    return _only(
        cost_plan(
            inputs=inputs(
                workloads=[workload(server_power_w=D("10000"))],
                servers=[ServerPrice(accelerator_id="h100", gpus_per_server=8, price=usd("360000"))],
                options=("onprem",),
                utilisation=D(1),
                efficiency=D(1),
                horizon_months=horizon,
                rate_values=rv,
            )
        ),
        "onprem",
    )


def test_onprem_server_amortised_over_36_months():
    # 360000 USD / 36 months x 36 months, no residual value: 360000.00, all useful at u = e = 1
    op = _onprem(36)
    assert _row(op, "gpu_time")["total_net"] == "360000.00"


def test_onprem_power_at_stated_pue_and_tariff():
    # 10 kW x 1.5 PUE x 730 h = 10950 kWh x 8 RUB = 87600 RUB = 1095 USD a month; x 36 = 39420.00
    op = _onprem(36)
    assert _line(op, "infrastructure.power")["total_net"] == "39420.00"


def test_onprem_horizon_shorter_than_amortisation_credits_book_value():
    # capex 360000, residual 10 % = 36000; (360000 - 36000) / 36 = 9000 a month; 12 months = 108000.00
    op = _onprem(12, residual_value_share="0.1")
    line = _line(op, "gpu_time.useful")
    assert (line["upfront_net"], line["terminal_net"], line["total_net"]) == (
        "360000.00",
        "-252000.00",
        "108000.00",
    )


def test_commitment_longer_than_horizon_is_still_owed():
    # 3-year commitment at 1.50 USD/h, horizon 6 months: 30 more months x 730 h x 1.50 = 32850.00 owed
    res = cost_plan(
        inputs=inputs(
            workloads=[workload(**ONE_GPU)],
            offers=[
                offer(
                    accelerator_id="a100", gpus_per_instance=1, on_demand=usd("2.50"), commit_3y=usd("1.50")
                )
            ],
            servers=[],
            options=("cloud_commit_3y",),
            horizon_months=6,
        )
    )
    assert (
        _line(_only(res, "cloud_commit_3y"), "gpu_time.commitment_after_horizon")["total_net"] == "32850.00"
    )


def test_api_tokens_priced_per_million():
    # 100M input x 1 USD/M + 20M output x 4 USD/M = 180.00 USD a month
    res = cost_plan(
        inputs=inputs(
            workloads=[workload(tokens_in_per_month=D(100_000_000), tokens_out_per_month=D(20_000_000))],
            offers=[],
            servers=[],
            options=("api",),
            horizon_months=1,
            user_api_prices=(
                ApiPrice(
                    provider="X", model="m", input_per_1m_tokens=usd("1"), output_per_1m_tokens=usd("4")
                ),
            ),
        )
    )
    api = _only(res, "api")
    assert _line(api, "gpu_time.api_tokens")["total_net"] == "180.00"


def test_cost_per_useful_gpu_hour():
    # 1 month, u = e = 1: 1825 USD GPU time
    # + engineering: setup 2637.50 (see above); ops floor 10 h x 4000 / 80 + 4 h x 3000 / 80 = 650 plus one
    #   instance x (0.5 h x 4000 + 0.5 h x 3000) / 80 = 43.75: 693.75
    # = 5156.25 USD over 730 useful h = 7.0634. The expected cost of downtime is not in the budget
    # (and without a cost of an hour of downtime it is not priced at all).
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1)), "cloud_on_demand")
    assert od["totals"]["net"] == "5156.25"
    assert od["unit_costs"]["per_useful_gpu_hour_net"] == "7.0634"


def test_downtime_is_a_risk_figure_beside_the_budget():
    # the same option with the cost of an hour of downtime given: 625 USD (50000 RUB / 80)
    # platform 4 / 12 x 2 h x 625 = 416.67; GPU failures 1 GPU x 0.173 / 12 x 2 h x 1/1 of capacity
    # x 625 = 18.02: 434.69 expected, not in the total (still 5156.25); outage hours a year:
    # 4 x 2 + 0.173 x 2 = 8.346 -> 8.3
    od = _only(
        _one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1), downtime_cost_per_hour=D(625)),
        "cloud_on_demand",
    )
    assert od["totals"]["net"] == "5156.25"
    assert od["risk"]["expected_downtime_net"] == "434.69"
    assert od["risk"]["expected_downtime_gross"] == "434.69"  # no VAT on the cost of an outage
    assert od["risk"]["expected_downtime_hours_per_year"] == "8.3"
    assert _row(od, "downtime_risk")["total_net"] == "434.69"
    assert _row(od, "downtime_risk")["in_total"] is False
    # without it: hours, no money, and the text says what pricing it needs
    od = _only(_one_gpu_cloud(horizon_months=1, utilisation=D(1), efficiency=D(1)), "cloud_on_demand")
    assert od["risk"]["expected_downtime_net"] is None and od["risk"]["expected_downtime_gross"] is None
    assert od["risk"]["expected_downtime_hours_per_year"] == "8.3"
    assert od["risk"]["text"] == (
        "8.3 expected hours of downtime a year; enter the cost of an hour of downtime to price it"
    )
    assert _row(od, "downtime_risk")["total_net"] is None
    assert all(ln["total_net"] is None for ln in _row(od, "downtime_risk")["lines"])


def test_vat_changes_at_2026_01_01():
    # November and December 2025 at 20 %, January 2026 at 22 %: 1825 x (0.2 + 0.2 + 0.22) = 1131.50
    od = _only(
        _one_gpu_cloud(horizon_months=3, utilisation=D(1), efficiency=D(1), as_of=dt.date(2025, 11, 1)),
        "cloud_on_demand",
    )
    assert _row(od, "gpu_time")["total_gross"] == str(D("1825") * 3 + D("1131.50"))


def test_price_drift_raises_rental_prices_month_by_month():
    # +10 % a year: month 1 at 730 h x 1.00 = 730.00; month 13 at 730 x 1.1^(12/12) = 803.00
    res = cost_plan(
        inputs=inputs(
            workloads=[workload(**ONE_GPU)],
            offers=[offer(accelerator_id="a100", gpus_per_instance=1, on_demand=usd("1.00"), spot=None)],
            servers=[],
            options=("cloud_on_demand",),
            horizon_months=13,
            utilisation=D(1),
            efficiency=D(1),
            rate_values={"price_drift_per_year": "0.1"},
        )
    )
    line = next(lt for lt in res.options[0].lines if lt.line.key == "gpu_time.useful")
    assert (line.months_net[0], line.months_net[12]) == (D("730.00"), D("803.00"))
    assert line.months_vat[12] == D("176.66")  # 803.00 x 0.22 = 176.66


def test_rack_space_priced_per_u():
    # 1 server of 8 U x 2000 RUB per U a month = 16000 RUB = 200.00 USD a month
    op = _only(
        cost_plan(
            inputs=inputs(
                workloads=[workload(server_rack_units=8)],
                options=("onprem",),
                horizon_months=1,
                rate_values={"colocation_per_u_month": "2000"},
            )
        ),
        "onprem",
    )
    assert _line(op, "infrastructure.rack_space")["total_net"] == "200.00"


def test_billing_granularity_rounds_up_and_per_second_billing_adds_no_noise():
    from costs.engine.model import ceil_to

    assert ceil_to(D("365.2"), D(1)) == D(366)  # hourly billing: a started hour is paid
    assert ceil_to(D("730"), D(1) / 3600) == D(730)  # per second: exact, no rounding residue
