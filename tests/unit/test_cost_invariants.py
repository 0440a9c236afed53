"""Invariants of the cost engine that must hold for any inputs."""

import datetime as dt
from decimal import Decimal as D

from hypothesis import given, settings
from hypothesis import strategies as st

from costs.cash_flow import cumulative
from costs.engine.analysis import break_even_month
from costs.engine.inputs import DedicatedOffer
from costs.engine.money import Price, cents
from costs.engine.plan import cost_plan, option_to_dict
from tests.unit.cost_inputs import FX, VAT, inputs, offer, usd, workload


def _by_kind(result, kind):
    return next(p for p in result.options if p.option.kind == kind)


def test_zero_utilisation_makes_cloud_gpu_time_zero():
    res = cost_plan(inputs=inputs(utilisation=D(0)))
    od = option_to_dict(_by_kind(res, "cloud_on_demand"))
    assert next(r for r in od["rows"] if r["row"] == "gpu_time")["total_net"] == "0.00"


def test_zero_utilisation_leaves_onprem_capex_unchanged():
    def capex(u):
        p = _by_kind(cost_plan(inputs=inputs(utilisation=u)), "onprem")
        return sum(lt.upfront_net for lt in p.lines)

    assert capex(D(0)) == capex(D("0.7")) > 0


@settings(max_examples=25, deadline=None)
@given(
    u=st.decimals(min_value=0, max_value=1, places=3),
    horizon=st.integers(min_value=1, max_value=60),
    eff=st.decimals(min_value=D("0.05"), max_value=1, places=2),
    drift=st.sampled_from(["0", "0.05", "-0.1"]),
)
def test_totals_equal_the_sum_of_their_rows_and_cash_flow_to_the_cent(u, horizon, eff, drift):
    res = cost_plan(
        inputs=inputs(
            utilisation=u,
            efficiency=eff,
            horizon_months=horizon,
            workloads=[
                workload(
                    storage_gb={"object": D("5000"), "nvme": D("800")},
                    egress_gb_per_month=D("123.4"),
                    is_training=True,
                )
            ],
            rate_values={"price_drift_per_year": drift},
            as_of=dt.date(2025, 6, 1),  # the horizon crosses the VAT change on 2026-01-01
        )
    )
    for p in res.options:
        d = option_to_dict(p)
        # the budget: every row but the expected cost of downtime (listed beside it, unpriced here)
        assert [r["row"] for r in d["rows"] if not r.get("in_total", True)] == ["downtime_risk"]
        rows = sum(D(r["total_net"]) for r in d["rows"] if r.get("in_total", True))
        lines = sum(D(ln["total_net"]) for r in d["rows"] if r.get("in_total", True) for ln in r["lines"])
        flow = sum(D(v) for v in d["cash_flow"]["net"]) + D(d["cash_flow"]["terminal_net"])
        gross_flow = sum(D(v) for v in d["cash_flow"]["gross"]) + D(d["cash_flow"]["terminal_gross"])
        assert rows == lines == flow == D(d["totals"]["net"])
        assert gross_flow == D(d["totals"]["gross"]) == D(d["totals"]["net"]) + D(d["totals"]["vat"])


def test_break_even_month_matches_the_cumulative_curves():
    res = cost_plan(inputs=inputs(utilisation=D("0.9")))
    d = res.to_dict()
    crossing = [b for b in d["break_even_months"] if b["state"] == "crossing"]
    assert crossing, "expected on-prem to overtake on-demand cloud at 90 % utilisation"
    opts = {o["id"]: o for o in d["options"]}
    for b in crossing:
        # on the decision's basis: gross when VAT is shown and not recovered
        cum_a, cum_b = cumulative(opts[b["a"]], b["on"]), cumulative(opts[b["b"]], b["on"])
        m = b["month"]
        winner, loser = (cum_a, cum_b) if b["cheaper_after"] == "a" else (cum_b, cum_a)
        assert all(winner[k] <= loser[k] for k in range(m, len(cum_a)))
        assert winner[m - 1] > loser[m - 1]


def test_break_even_month_of_two_crossing_lines():
    # a: 100 upfront then 10 a month; b: 30 a month -> both 150 at month 5, a cheaper after
    cum_a = [D(100 + 10 * m) for m in range(8)]
    cum_b = [D(30 * m) for m in range(8)]
    assert break_even_month(cum_a, cum_b) == {"month": 5, "cheaper_after": "a", "state": "crossing"}


def test_break_even_utilisation_separates_owning_and_renting():
    res = cost_plan(inputs=inputs())
    be = next(b for b in res.to_dict()["break_even_utilisation"] if b["state"] == "crossing")
    u = D(be["utilisation"])

    def diff(util):
        r = cost_plan(inputs=inputs(utilisation=util))
        return r.option(be["own"]).net - r.option(be["rent"]).net

    assert diff(u - D("0.05")) > 0 > diff(u + D("0.05"))


def test_fx_there_and_back_is_consistent_to_the_cent():
    on = dt.date(2026, 3, 1)
    for amount in (D("0.01"), D("1234.56"), D("99999999.99")):
        rub = FX.convert(amount=amount, base="USD", quote="RUB", on=on)
        eur = FX.convert(amount=rub, base="RUB", quote="EUR", on=on)
        assert cents(FX.convert(amount=eur, base="EUR", quote="USD", on=on)) == amount


def test_cross_rate_goes_through_roubles():
    # 1 EUR = 90 RUB, 1 USD = 80 RUB -> 1 EUR = 1.125 USD
    assert FX.rate(base="EUR", quote="USD", on=dt.date(2026, 3, 1)) == D("1.125")


def test_vat_boundary_at_2026_01_01():
    assert VAT.rate(country="RU", on=dt.date(2025, 12, 31)) == D("0.20")
    assert VAT.rate(country="RU", on=dt.date(2026, 1, 1)) == D("0.22")


def test_vat_inclusive_price_is_reduced_to_net_before_costing():
    # 122000 RUB incl. 22 % VAT = 100000 RUB net = 1250.00 USD a month per server
    ded = DedicatedOffer(
        provider="R",
        name="8xH100",
        accelerator_id="h100",
        gpus_per_server=8,
        monthly=Price(
            amount=D("122000"), currency="RUB", vat_included=True, as_of=dt.date(2026, 2, 1), source="test"
        ),
    )
    inp = inputs(options=("dedicated",), horizon_months=1)
    inp = type(inp)(
        workloads=inp.workloads,
        prices=type(inp.prices)(dedicated_offers=(ded,), fx=FX, vat=VAT),
        rates=inp.rates,
        options=inp.options,
    )
    d = option_to_dict(_by_kind(cost_plan(inputs=inp), "dedicated"))
    assert next(r for r in d["rows"] if r["row"] == "gpu_time")["total_net"] == "1250.00"


def test_monte_carlo_is_seeded():
    a = cost_plan(inputs=inputs(seed=7)).to_dict()["monte_carlo"]
    b = cost_plan(inputs=inputs(seed=7)).to_dict()["monte_carlo"]
    c = cost_plan(inputs=inputs(seed=8)).to_dict()["monte_carlo"]
    assert a == b
    assert a["options"] != c["options"]


def test_monte_carlo_percentiles_are_ordered_and_bracket_the_median():
    mc = cost_plan(inputs=inputs(monte_carlo_samples=10_000)).to_dict()["monte_carlo"]
    assert mc["samples"] == 10_000
    for q in mc["options"].values():
        assert D(q["p10_net"]) < D(q["p50_net"]) < D(q["p90_net"])
        assert D(q["p10_gross"]) < D(q["p50_gross"]) < D(q["p90_gross"])


def test_probability_of_being_cheaper_is_complementary():
    mc = cost_plan(inputs=inputs()).to_dict()["monte_carlo"]
    pair = mc["p_cheaper"][0]
    assert 0 <= pair["p_a_cheaper"] <= 1
    # on-demand at 40 USD/h never beats spot at 20 USD/h with the same random draws
    od_vs_spot = next(p for p in mc["p_cheaper"] if "cloud_on_demand" in p["a"] and "cloud_spot" in p["b"])
    assert od_vs_spot["p_a_cheaper"] == 0.0


def test_sensitivity_lists_utilisation_first_for_on_demand_cloud():
    sens = cost_plan(inputs=inputs()).to_dict()["sensitivity"]
    od = next(v for k, v in sens.items() if "cloud_on_demand" in k)
    assert od["factors"][0]["factor"] == "utilisation"
    swings = [D(f["swing"]) for f in od["factors"]]
    assert swings == sorted(swings, reverse=True)


def test_every_candidate_configuration_is_priced():
    res = cost_plan(
        inputs=inputs(workloads=[workload(), workload(candidate_id="h100x16", gpu_count=16, server_count=2)])
    )
    assert {p.option.candidate_id for p in res.options} == {"h100x8", "h100x16"}


def test_hybrid_splits_owned_baseline_and_cloud_burst():
    res = cost_plan(inputs=inputs(workloads=[workload(gpu_count=16, server_count=2)], options=("hybrid",)))
    d = option_to_dict(_by_kind(res, "hybrid"))
    assert d["detail"]["owned_servers"] == 1 and d["detail"]["burst_gpus"] == 8
    keys = {ln["key"] for r in d["rows"] for ln in r["lines"]}
    assert {"gpu_time.useful.owned", "gpu_time.useful.cloud"} <= keys


def test_a_training_run_is_never_split_between_own_servers_and_the_cloud():
    # the same 16 GPUs as above, as a training job: one synchronous run cannot span two networks
    w = workload(gpu_count=16, server_count=2, is_training=True, training_gpu_hours_per_run=D("100"))
    res = cost_plan(inputs=inputs(workloads=[w], options=("hybrid", "onprem")))
    assert not [p for p in res.options if p.option.kind == "hybrid"]
    assert [p for p in res.options if p.option.kind == "onprem"]
    reasons = [str(s["reason"]) for s in res.skipped if s["kind"] == "hybrid"]
    assert reasons and "gradients" in reasons[0]


def test_result_is_json_serialisable():
    import json

    json.dumps(cost_plan(inputs=inputs()).to_dict())


def test_unknown_power_is_reported_not_guessed():
    res = cost_plan(inputs=inputs(workloads=[workload(server_power_w=None)], options=("onprem",)))
    p = _by_kind(res, "onprem")
    assert p.option.unknowns and not any(lt.line.key == "infrastructure.power" for lt in p.lines)


def test_same_inputs_same_result():
    assert cost_plan(inputs=inputs()).to_dict() == cost_plan(inputs=inputs()).to_dict()


def test_only_the_cheapest_offer_of_a_provider_is_kept_per_candidate_and_kind():
    cheap = offer(instance_type="cheap", on_demand=usd("30"), spot=None)
    dear = offer(instance_type="dear", on_demand=usd("50"), spot=None)
    d = cost_plan(inputs=inputs(offers=[cheap, dear], options=("cloud_on_demand",))).to_dict()
    assert [o["detail"]["instance_type"] for o in d["options"]] == ["cheap"]
    assert d["offers_priced"] == 2


def test_only_the_compared_options_carry_lines_and_a_cash_flow():
    # one way of paying, 8 providers: the decided option and the cheapest of each of the next four
    # providers are compared in full (page 1 has something to compare); every other is listed with
    # its row totals
    offers = [offer(provider=f"P{k}", on_demand=usd(str(30 + k)), spot=None) for k in range(8)]
    d = cost_plan(inputs=inputs(offers=offers, options=("cloud_on_demand",))).to_dict()
    detailed = {o["detail"]["provider"] for o in d["options"] if o["cash_flow"] is not None}
    lined = {o["detail"]["provider"] for o in d["options"] if o["rows"][0]["lines"] is not None}
    decided = next(o for o in d["options"] if o["id"] == d["decision"]["recommended"]["id"])
    assert decided["detail"]["provider"] == "P0"
    assert detailed == lined == {"P0", "P1", "P2", "P3", "P4"}
    assert {o["detail"]["provider"] for o in d["options"]} == {f"P{k}" for k in range(8)}
    assert (d["options_listed"], d["options_left_out"]) == (8, 0)
    # two ways of paying: the decided option and the cheapest of the other kind carry their lines
    d = cost_plan(inputs=inputs(offers=offers, options=("cloud_on_demand", "onprem"))).to_dict()
    full = {o["kind"] for o in d["options"] if o["cash_flow"] is not None}
    assert full == {"cloud_on_demand", "onprem"}
    # every option left out costs more, on the decision's basis, than every option listed in its kind
    assert all(o["rows"][0]["lines"] is None for o in d["options"] if o["cash_flow"] is None)


def test_the_decision_order_points_at_the_listed_options():
    offers = [offer(provider=f"P{k}", on_demand=usd(str(30 + k)), spot=None) for k in range(12)]
    d = cost_plan(inputs=inputs(offers=offers, options=("cloud_on_demand",))).to_dict()
    order = d["decision"]["order"]
    assert sorted(order) == list(range(len(d["options"])))
    totals = [D(d["options"][i]["totals"]["decision"]) for i in order]
    assert totals == sorted(totals) and d["options"][order[0]]["id"] == d["decision"]["recommended"]["id"]


def test_comparisons_cover_the_shortlist():
    many = [workload(candidate_id=f"h100x{8 * k}", gpu_count=8 * k, server_count=k) for k in range(1, 11)]
    d = cost_plan(inputs=inputs(workloads=many, options=("cloud_on_demand", "onprem"))).to_dict()
    six = sorted(d["options"], key=lambda o: D(o["totals"]["net"]))[:6]
    cands = {o["candidate"] for o in six}
    assert d["compared_candidates"] == [w.candidate_id for w in many if w.candidate_id in cands]
    assert set(d["monte_carlo"]["options"]) == {i for ids in d["shortlist"].values() for i in ids}


def test_shortlist_keeps_the_recommended_configuration_even_when_dearer():
    # the first workload is the sizing's recommendation; here it is the biggest fleet
    many = [workload(candidate_id=f"h100x{8 * k}", gpu_count=8 * k, server_count=k) for k in (10, 1, 2, 3, 4)]
    d = cost_plan(inputs=inputs(workloads=many, options=("cloud_on_demand", "onprem"))).to_dict()
    assert len(d["shortlist"]["h100x80"]) == 2


def test_csv_export_covers_options_priced_in_totals_only():
    from costs.exports import costs_csv

    offers = [offer(provider=f"P{k}", on_demand=usd(str(30 + k)), spot=None) for k in range(7)]
    d = cost_plan(inputs=inputs(offers=offers, options=("cloud_on_demand",))).to_dict()
    from costs.labels import option_label

    text = costs_csv(d).decode("utf-8-sig")
    # an option listed with its row totals only (not one the plan compares in full)
    dear = option_label(next(o for o in d["options"] if o["cash_flow"] is None))
    assert text.count(dear) == 5  # four rows and the total


@settings(max_examples=25, deadline=None)
@given(
    gpu_hours=st.integers(min_value=1, max_value=200_000),
    horizon=st.integers(min_value=1, max_value=60),
    eff=st.decimals(min_value=D("0.05"), max_value=1, places=2),
    runs=st.integers(min_value=1, max_value=5),
    recurring=st.booleans(),
    drift=st.sampled_from(["0", "0.05"]),
)
def test_jobs_totals_equal_rows_lines_and_cash_flow(gpu_hours, horizon, eff, runs, recurring, drift):
    # one-off and recurring runs: scheduled lines still sum to the totals, to the cent
    res = cost_plan(
        inputs=inputs(
            efficiency=eff,
            horizon_months=horizon,
            workloads=[workload(is_training=True, training_gpu_hours_per_run=D(gpu_hours),
                                storage_gb={"ssd": D("100")}, egress_gb_per_month=D("10"))],
            rate_values={"price_drift_per_year": drift},
            **({"runs_per_month": D(runs)} if recurring else {"runs": runs}),
        )
    )
    for p in res.options:
        d = option_to_dict(p, runs=res.jobs.get(p.option.option_id), basis=res.basis)
        # the budget: every row but the expected cost of downtime (listed beside it, unpriced here)
        assert [r["row"] for r in d["rows"] if not r.get("in_total", True)] == ["downtime_risk"]
        rows = sum(D(r["total_net"]) for r in d["rows"] if r.get("in_total", True))
        lines = sum(D(ln["total_net"]) for r in d["rows"] if r.get("in_total", True) for ln in r["lines"])
        assert rows == lines == cumulative(d, "net")[-1] == D(d["totals"]["net"])
        if p.option.kind == "cloud_on_demand" and drift == "0":
            # the fleet bills the runs' hours: runs x GPU-h / efficiency / 8 GPUs, at most the horizon's
            # hours, x 40 USD an instance-hour (per-second rounding: under 1 s a month)
            total_runs = runs * horizon if recurring else runs
            hours = min(D(total_runs) * gpu_hours / eff / 8, D(730) * horizon)
            # (the GPU time re-run after failures is its own line, checked by hand in test_cost_decisions)
            paid = sum(D(ln["total_net"]) for r in d["rows"] for ln in r["lines"]
                       if ln["key"].startswith("gpu_time") and ln["key"] != "gpu_time.rerun_after_failures")
            assert abs(paid - hours * 40) <= D(40) * horizon / 3600 + D("0.01") * horizon
