"""Issue 22, Build 4: the serving search generates disaggregated (prefill + decode pool) candidates where
the runtime runs them and a split can pay, sizes them against the targets, and the cost engine can
decide on one by the same rule as every other option (planner/engine/search_disagg.py)."""

from decimal import Decimal as D
from pathlib import Path

import pytest

from costs.adapters.workloads import MAX_DISAGGREGATED, configurations_to_price
from costs.engine.plan import cost_plan
from planner import plan_decision
from planner.engine import parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.result import candidate_id, pools_of
from planner.engine.search_disagg import ACCELERATORS_TRIED, rdma_platform
from tests.unit.cost_inputs import inputs, offer, usd, workload

ACCS = load_accelerators_csv(Path(__file__).resolve().parents[2] / "catalog" / "data" / "accelerators.csv")
LOAD = {"kind": "inference", "model": {"preset": "deepseek-r1-0528"},
        "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 40, "runtime": "sglang"}}


@pytest.fixture(scope="module")
def sized():
    return size_workload(spec=parse_workload_spec(LOAD), accelerators=ACCS).to_dict()


def test_disaggregated_candidates_are_few_sized_and_add_up(sized):
    rows = sized["candidates"]["disaggregated"]
    assert 0 < len(rows) <= ACCELERATORS_TRIED
    assert len({r["accelerator_id"] for r in rows}) == len(rows)  # one per accelerator
    by_id = {a.id: a for a in ACCS}
    assert all(rdma_platform(by_id[r["accelerator_id"]]) for r in rows)  # an RDMA NIC per GPU for the KV
    for r in rows:
        d = r["layout"]["disaggregated"]
        pre, dec = d["prefill"], d["decode"]
        assert r["count"] == pre["workers"] * pre["tensor_parallel"] + dec["workers"] * dec["tensor_parallel"]
        assert pre["tensor_parallel"] <= dec["tensor_parallel"] <= 2 * pre["tensor_parallel"]
        assert not pre["data_parallel_attention"]  # DPA only where the decode pool's KV gains from it
        if r["meets_target"]:
            assert r["ttft_p95_ms"] is not None and r["tpot_p95_ms"] is not None
        # per GPU deployed counts both pools: rate x output tokens / all GPUs (Little's law, as aggregated)
        assert r["output_tokens_per_s_per_gpu"] == pytest.approx(
            r["sustained_rps_per_replica"] * 400 / r["count"])
        assert r["in_flight_requests_per_replica"] == pytest.approx(
            r["sustained_rps_per_replica"] * (r["ttft_ms"] + 399 * r["tpot_ms"]) / 1e3)
    ids = {candidate_id(r) for r in rows}
    assert all(" disagg P" in i for i in ids) and len(ids) == len(rows)


def test_a_met_target_is_the_evaluated_operating_point(sized):
    spec = parse_workload_spec({**LOAD, "serving": {**LOAD["serving"], "ttft_p95_ms": 2000, "tpot_p95_ms": 40}})
    r = size_workload(spec=spec, accelerators=ACCS).to_dict()
    rows = r["candidates"]["disaggregated"]
    assert rows and any(x["meets_target"] for x in rows)
    for x in rows:
        if x["meets_target"]:
            assert x["ttft_p95_ms"] <= 2000 * (1 + 1e-6) and x["tpot_p95_ms"] <= 40 * (1 + 1e-6)


@pytest.mark.parametrize("change", [
    {"serving": {**LOAD["serving"], "runtime": "atom"}},  # no disaggregated mode
    {"hardware": {"count": 16}},  # an aggregated pin
    {"model": {"preset": "llama-3.1-8b"}, "serving": {**LOAD["serving"], "requests_per_second": 0.2,
                                                      "concurrency": 1}},  # one engine holds the load
    {"model": {"preset": "llama-3.1-8b"}, "hardware": {"accelerator": "nvidia-l4-24gb"}},  # PCIe: no RDMA NIC
])
def test_no_disaggregated_candidates_where_a_split_cannot_pay(change):
    r = size_workload(spec=parse_workload_spec({**LOAD, **change}), accelerators=ACCS).to_dict()
    assert not r["candidates"].get("disaggregated")


def test_disaggregated_rows_are_priced_beside_the_aggregated_ones(sized):
    priced = configurations_to_price(sized)
    dis = [c for c in priced if pools_of(c.get("layout"))]
    assert 0 < len(dis) <= MAX_DISAGGREGATED
    aggregated = {candidate_id(c) for c in priced if not pools_of(c.get("layout"))}
    assert not aggregated & {candidate_id(c) for c in dis}


def test_the_decided_disaggregated_candidate_is_what_the_plan_describes(sized):
    row = sized["candidates"]["disaggregated"][0]
    chosen = plan_decision.configuration_of(sized, candidate_id(row))
    assert chosen is not None and chosen.disaggregated == pools_of(row["layout"])
    redone = size_workload(spec=parse_workload_spec(LOAD), accelerators=ACCS, chosen=chosen).to_dict()
    assert plan_decision.describes(redone, chosen)
    rec = redone["recommendation"]
    assert rec["count"] == row["count"] and rec["layout"]["disaggregated"] == row["layout"]["disaggregated"]
    assert redone["memory"]["layout"]["count"] == row["count"]
    assert redone["serving"]["disaggregated"]["prefill"] == row["layout"]["disaggregated"]["prefill"]
    assert redone["serving"]["ttft_p95_ms"]["value"] == pytest.approx(row["ttft_p95_ms"])
    # an aggregated configuration of the same accelerator and count is not the disaggregated one
    agg = plan_decision.configuration_of(sized, f"{row['accelerator_id']} x{row['count']}")
    assert agg is None or agg.disaggregated is None


def test_the_decision_rule_picks_a_disaggregated_layout_that_alone_meets_the_targets():
    """The same rule as every other option: meets the targets first, then the cheapest."""
    agg = dict(candidate_id="b200 x16", accelerator_id="b200", gpu_count=16, gpus_per_server=8, server_count=2,
               meets_targets=False, sizing_recommended=True)
    dis = dict(candidate_id="b200 x24 disagg P4xTP4 D1xTP8", accelerator_id="b200", gpu_count=24, gpus_per_server=8,
               server_count=3, meets_targets=True)
    res = cost_plan(inputs=inputs(
        workloads=[workload(**agg), workload(**dis)],
        offers=[offer(accelerator_id="b200", gpus_per_instance=8, on_demand=usd("40.00"), spot=None)],
        servers=[], options=("cloud_on_demand",), horizon_months=1, utilisation=D(1), efficiency=D(1),
    ))
    assert res.analysis["decision"]["recommended"]["candidate"] == dis["candidate_id"]


def test_a_split_is_kept_only_where_it_needs_fewer_gpus_than_a_replica_meeting_the_targets(sized):
    """At as many GPUs or more of one accelerator a split costs as much or more by the hour (and adds a pool,
    a router and a KV transfer): the search keeps it only with fewer GPUs than that accelerator's aggregated
    pick meeting the same targets. Volta (DGX-1: 4 NICs for 8 GPUs) is never split."""
    agg = {b["accelerator_id"]: b for b in sized["candidates"]["best_per_accelerator"]}
    rows = sized["candidates"]["disaggregated"]
    assert rows
    for d in rows:
        b = agg.get(d["accelerator_id"])
        if b is not None and b.get("meets_target"):
            assert d["count"] < b["count"], (d["accelerator_id"], d["count"], b["count"])
    assert not rdma_platform(next(a for a in ACCS if a.id == "nvidia-v100-sxm2-32gb"))
    assert rdma_platform(next(a for a in ACCS if a.id == "nvidia-a100-sxm4-80gb"))
