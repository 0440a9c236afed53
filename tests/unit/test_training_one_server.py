"""Training: the cost engine also gets each accelerator's best configuration on one server. The sizing
chooses its best per accelerator on GPU time alone; what grows with the servers (each node's disks, a
cluster's setup, whole instances) only the cost engine prices. A QLoRA of Llama 3.1 70B (200 M tokens x 2)
was decided on 352 x A100 for an hour at 543 k RUB while one 8-GPU server of them costs 280 k."""

from __future__ import annotations

from pathlib import Path

from costs.adapters.workloads import configurations_to_price
from planner.engine import parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
QLORA = {"kind": "finetuning", "model": {"preset": "llama-3.1-70b"},
         "training": {"method": "qlora", "tokens": 200_000_000, "epochs": 2, "lora_rank": 16}}


def _sizing(spec):
    return size_workload(spec=parse_workload_spec(spec), accelerators=ACCS).to_dict()


def test_each_accelerator_also_offers_its_best_on_one_server():
    cands = _sizing(QLORA)["candidates"]
    best = {(r["accelerator_id"], r["count"]) for r in cands["best_per_accelerator"]}
    one = cands["one_server_per_accelerator"]
    assert one, "a QLoRA of a 70B model fits on one server of several accelerators"
    multi = [r for r in cands["best_per_accelerator"] if r["count"] > 16]
    assert multi, "the sizing's own best per accelerator is a multi-server cluster here"
    for r in one:
        assert (r["accelerator_id"], r["count"]) not in best
        assert r["meets_target"] and r["fits"]
    assert {r["accelerator_id"] for r in multi} & {r["accelerator_id"] for r in one}
    # the smallest that meets the deadline and a full server, for the A100 whose best is 352 of them
    a100 = sorted(r["count"] for r in one if r["accelerator_id"] == "nvidia-a100-sxm4-40gb")
    assert a100[-1] == 8 and len(a100) == 2, a100


def test_the_one_server_rows_are_priced_beside_the_best():
    sizing = _sizing(QLORA)
    priced = {(r["accelerator_id"], r["count"]) for r in configurations_to_price(sizing)}
    kept = {a for a, _count in priced}
    assert len(priced) > len(kept), "some accelerators are priced at two counts or more"
    for r in sizing["candidates"]["one_server_per_accelerator"]:
        if r["accelerator_id"] in kept:
            assert (r["accelerator_id"], r["count"]) in priced


def test_a_pinned_count_adds_nothing():
    pinned = {**QLORA, "hardware": {"accelerator": "nvidia-a100-sxm4-40gb", "count": 16}}
    cands = _sizing(pinned)["candidates"]
    assert all(r["count"] == 16 for r in cands["best_per_accelerator"] + cands["one_server_per_accelerator"])


def test_the_plan_knows_the_one_server_rows_meet_the_deadline():
    # the PDF's and the compare pages' "targets met" column reads it: "—" for these rows before
    from planner.presentation import meets_by_candidate

    sizing = _sizing(QLORA)
    meets = meets_by_candidate(sizing)
    for r in sizing["candidates"]["one_server_per_accelerator"]:
        assert meets[f"{r['accelerator_id']} x{r['count']}"] is True
