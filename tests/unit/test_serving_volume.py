"""Peak and volume (issue 20 part 3): serving.requests_per_second is the peak that sizes capacity;
serving.requests_per_day (or peak x 3600 x hours_per_day x AVERAGE_TO_PEAK_RATIO) is the volume
that model-API tokens, egress and the useful share of GPU time are priced on. Hand-computed."""

from decimal import Decimal as D
from pathlib import Path

import pytest

from costs.adapters import workloads_from_sizing
from costs.engine.inputs import HOURS_PER_MONTH, ApiPrice
from costs.engine.plan import cost_plan, option_to_dict
from planner.engine import SpecValidationError, parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.spec import AVERAGE_TO_PEAK_RATIO
from tests.unit.cost_inputs import inputs, offer, rates, usd, workload

CSV = Path(__file__).resolve().parents[2] / "catalog" / "data" / "accelerators.csv"
# A chat service for 300 employees: 5 requests/s at peak over a 10-hour working day,
# 20 requests per employee a day; 2000 tokens in, 400 out.
SERVING = {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5, "hours_per_day": 10}
NO_GPU = {"kind": "inference", "gpu_required": False, "recommendation": {}}
DAYS_PER_MONTH = HOURS_PER_MONTH / 24  # the cost engine's month: 730 h / 24 = 30.41666... days


def _spec(**serving):
    return parse_workload_spec({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                                "serving": {**SERVING, **serving}})


def _errors(**serving) -> dict[str, str]:
    with pytest.raises(SpecValidationError) as exc:
        _spec(**serving)
    return {e.field: str(e.message) for e in exc.value.errors}


def _workload(spec, rate_values=None):
    (w,), notes = workloads_from_sizing(NO_GPU, price_snapshot={}, spec=spec, rates=rates(**(rate_values or {})))
    return w, [str(n) for n in notes]


def _line(option: dict, key: str) -> dict:
    return next(ln for row in option["rows"] for ln in row["lines"] if ln["key"] == key)


def _only(result, kind: str) -> dict:
    return option_to_dict(next(p for p in result.options if p.option.kind == kind))


# ---- the spec ----------------------------------------------------------------------------------


def test_requests_per_day_is_read_and_the_default_is_the_documented_ratio():
    assert _spec(requests_per_day=6000).serving.requests_per_day == 6000
    s = _spec().serving
    assert s.requests_per_day is None
    assert AVERAGE_TO_PEAK_RATIO == 0.3
    # 5 requests/s x 3600 s x 10 h = 180 000 at most; x 0.3 = 54 000 a day
    assert s.peak_requests_per_day == 180_000
    assert s.volume_requests_per_day == pytest.approx(54_000)


def test_requests_per_day_up_to_the_peaks_daily_maximum_is_accepted():
    assert _spec(requests_per_day=180_000).serving.requests_per_day == 180_000


def test_requests_per_day_above_the_peaks_daily_maximum_is_a_field_error_naming_the_maximum():
    errors = _errors(requests_per_day=180_001)
    assert set(errors) == {"serving.requests_per_day"}
    assert "180,000" in errors["serving.requests_per_day"]


@pytest.mark.parametrize("value", [0, -6000])
def test_requests_per_day_must_be_positive(value):
    errors = _errors(requests_per_day=value)
    assert set(errors) == {"serving.requests_per_day"}
    assert "must be more than 0" in errors["serving.requests_per_day"]


@pytest.mark.parametrize("value", ["many", [6000], True, float("nan")])
def test_requests_per_day_must_be_a_number(value):
    assert set(_errors(requests_per_day=value)) == {"serving.requests_per_day"}


def test_no_serving_hours_leave_no_room_for_a_volume():
    # a peak of 0 requests/s allows no request a day
    assert set(_errors(requests_per_second=0, requests_per_day=1)) == {"serving.requests_per_day"}


# ---- the volume prices tokens, egress and the useful share ---------------------------------------


def test_api_tokens_follow_requests_per_day_not_the_peak():
    # 6000 requests/day x 730/24 days = 182 500 requests a month
    #   input:  182 500 x 2000 = 365 000 000 tokens = 365 M x 0.60 USD = 219.00
    #   output: 182 500 x  400 =  73 000 000 tokens =  73 M x 2.40 USD = 175.20   -> 394.20 USD a month
    w, _ = _workload(_spec(requests_per_day=6000))
    assert 6000 * DAYS_PER_MONTH == D(182_500)
    assert (w.tokens_in_per_month, w.tokens_out_per_month) == (D(365_000_000), D(73_000_000))
    res = cost_plan(inputs=inputs(
        workloads=[w], offers=[], servers=[], options=("api",), horizon_months=1,
        user_api_prices=(ApiPrice(provider="X", model="m", input_per_1m_tokens=usd("0.60"),
                                  output_per_1m_tokens=usd("2.40")),),
    ))
    assert _line(_only(res, "api"), "gpu_time.api_tokens")["total_net"] == "394.20"


def test_egress_follows_the_volume():
    # 73 000 000 output tokens a month x 4 bytes streamed per token = 0.292 GB (rate set for the test)
    w, _ = _workload(_spec(requests_per_day=6000), rate_values={"egress_bytes_per_output_token": "4"})
    assert w.egress_gb_per_month == D("0.292")
    # the peak held around the clock would send 180 000 / 6000 = 30 times as much
    peak, _ = _workload(_spec(requests_per_day=180_000), rate_values={"egress_bytes_per_output_token": "4"})
    assert peak.egress_gb_per_month == D("8.760")


def test_without_requests_per_day_the_volume_is_the_peak_times_the_ratio_and_the_plan_says_so():
    # 5 x 3600 x 10 x 0.3 = 54 000 requests a day x 730/24 = 1 642 500 a month
    #   x 2000 = 3 285 000 000 tokens in; x 400 = 657 000 000 tokens out
    w, notes = _workload(_spec())
    assert (w.tokens_in_per_month, w.tokens_out_per_month) == (D(3_285_000_000), D(657_000_000))
    assert any("volume assumed: 54,000 requests a day" in n and "0.3" in n for n in notes), notes


def test_a_given_volume_is_stated_too():
    _, notes = _workload(_spec(requests_per_day=6000))
    assert any("volume: 6,000 requests a day" in n for n in notes), notes
    assert not any("volume assumed" in n for n in notes)


def test_the_useful_share_of_a_serving_fleet_follows_the_load():
    # one GPU at 2.50 USD/h, running all month (u = 1, e = 1): 730 h x 2.50 = 1825.00 USD paid;
    # the traffic fills a quarter of it: useful 456.25, idle 1368.75
    one = dict(candidate_id="a100x1", accelerator_id="a100", gpu_count=1, gpus_per_server=1, server_count=1)
    res = cost_plan(inputs=inputs(
        workloads=[workload(**one, load_share=D("0.25"))],
        offers=[offer(accelerator_id="a100", gpus_per_instance=1, on_demand=usd("2.50"), spot=None)],
        servers=[], options=("cloud_on_demand",), horizon_months=1, utilisation=D(1), efficiency=D(1),
    ))
    od = _only(res, "cloud_on_demand")
    assert _line(od, "gpu_time.useful")["total_net"] == "456.25"
    assert _line(od, "gpu_time.idle")["total_net"] == "1368.75"


def test_the_adapter_gives_the_serving_fleet_the_volume_over_the_peak():
    from costs.adapters.workloads import _load_share

    assert _load_share(_spec(requests_per_day=6000).serving) == D(6000) / D(180_000)
    assert _load_share(_spec().serving) == D("0.3")


def test_capacity_stays_sized_on_the_peak():
    accs = load_accelerators_csv(CSV)
    a = size_workload(spec=_spec(), accelerators=accs).to_dict()
    b = size_workload(spec=_spec(requests_per_day=6000), accelerators=accs).to_dict()
    assert a["recommendation"]["accelerator_id"] == b["recommendation"]["accelerator_id"]
    assert a["recommendation"]["count"] == b["recommendation"]["count"]
