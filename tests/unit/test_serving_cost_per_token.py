"""Cost per million output tokens of every priced option (issue 22, item 3), hand-computed: the
option's cost over the horizon / the output tokens served in it at the stated volume
(serving.requests_per_day x output_tokens), in the plan's currency, as Decimal strings."""

from decimal import Decimal as D

from costs.adapters import workloads_from_sizing
from costs.engine.plan import cost_plan, option_to_dict
from planner.engine import parse_workload_spec
from tests.unit.cost_inputs import inputs, offer, rates, usd, workload


def _option(res, kind):
    p = next(p for p in res.options if p.option.kind == kind)
    return option_to_dict(p, currency="USD")


def test_one_gpu_for_a_month_over_ten_million_output_tokens():
    # one GPU at 2.50 USD/h, running all month (u = 1, e = 1): 730 h x 2.50 = 1825.00 USD of GPU time,
    # plus the option's other lines (operations, ...); 10,000,000 output tokens that month: the
    # month's total / 10 per million output tokens
    one = dict(candidate_id="a100x1", accelerator_id="a100", gpu_count=1, gpus_per_server=1, server_count=1)
    res = cost_plan(inputs=inputs(
        workloads=[workload(**one, tokens_in_per_month=D(50_000_000), tokens_out_per_month=D(10_000_000))],
        offers=[offer(accelerator_id="a100", gpus_per_instance=1, on_demand=usd("2.50"), spot=None)],
        servers=[], options=("cloud_on_demand",), horizon_months=1, utilisation=D(1), efficiency=D(1),
    ))
    od = _option(res, "cloud_on_demand")
    net = D(od["totals"]["net"])
    gpu_time = sum(D(ln["total_net"]) for row in od["rows"] for ln in row["lines"] if ln["key"].startswith("gpu_time"))
    assert gpu_time == D("1825.00")
    u = od["unit_costs"]
    assert D(u["per_1m_output_tokens_net"]) == (net / 10).quantize(D("0.0001"))
    assert D(u["per_1m_output_tokens_net"]) > D("182.50")  # at least the GPU time's 1825.00 / 10
    assert D(u["per_1m_output_tokens_gross"]) == (D(od["totals"]["gross"]) / 10).quantize(D("0.0001"))
    assert u["output_tokens"] == "10000000"
    assert u["currency"] == "USD"
    # input + output tokens (60 M) stay the older figure, per million tokens of both kinds
    assert D(u["per_1m_tokens_net"]) == (net / 60).quantize(D("0.0001"))


def test_over_a_horizon_the_tokens_of_every_month_count():
    one = dict(candidate_id="a100x1", accelerator_id="a100", gpu_count=1, gpus_per_server=1, server_count=1)
    res = cost_plan(inputs=inputs(
        workloads=[workload(**one, tokens_out_per_month=D(10_000_000))],
        offers=[offer(accelerator_id="a100", gpus_per_instance=1, on_demand=usd("2.50"), spot=None)],
        servers=[], options=("cloud_on_demand",), horizon_months=12, utilisation=D(1), efficiency=D(1),
    ))
    od = _option(res, "cloud_on_demand")
    assert D(od["unit_costs"]["per_1m_output_tokens_net"]) == (D(od["totals"]["net"]) / 120).quantize(D("0.0001"))


def test_no_output_volume_no_cost_per_token():
    res = cost_plan(inputs=inputs(options=("cloud_on_demand",), horizon_months=1))
    od = _option(res, "cloud_on_demand")
    assert od["unit_costs"]["per_1m_output_tokens_net"] is None


def test_the_volume_comes_from_requests_per_day_times_output_tokens():
    # 6,000 requests a day x 400 output tokens x 730 / 24 days a month = 73,000,000 output tokens a month
    spec = parse_workload_spec({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                                "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5,
                                            "hours_per_day": 10, "requests_per_day": 6000}})
    no_gpu = {"kind": "inference", "gpu_required": False, "recommendation": {}}
    (w,), _ = workloads_from_sizing(no_gpu, price_snapshot={}, spec=spec, rates=rates())
    assert w.tokens_out_per_month == D(73_000_000)
