"""Only buyable shapes (issue 20 part 6): servers in the shapes vendors sell, hand-checked, and the
sizing's infrastructure block and the cost engine use the same shape."""

from dataclasses import replace
from decimal import Decimal as D
from pathlib import Path

import pytest

from costs.adapters import workloads_from_sizing
from costs.engine.inputs import ServerPrice
from costs.engine.plan import cost_plan
from planner.engine import infra
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.shapes import cloud_only, server_shape, sold_only_in_cloud, sold_shapes
from planner.i18n import render
from tests.unit.cost_inputs import inputs, usd, workload

ROOT = Path(__file__).resolve().parents[2]
ACCS = {a.id: a for a in load_accelerators_csv(ROOT / "catalog/data/accelerators.csv")}
H100 = ACCS["nvidia-h100-sxm5-80gb"]  # SXM5, 700 W
L40S = ACCS["nvidia-l40s-48gb"]  # PCIe, 350 W


def test_the_catalog_table_says_what_is_sold():
    assert sold_shapes() == {"SXM": ("board", (4, 8)), "OAM": ("board", (8,)), "PCIE": ("chassis", (1, 3, 4, 8, 10))}


@pytest.mark.parametrize(
    ("form", "count", "max_per_server", "tp", "servers", "per_server", "slots", "spare"),
    [
        ("SXM5", 3, 8, 1, 1, 4, 4, 1),  # 3 GPUs needed: one 4-GPU HGX board, 1 spare
        ("SXM5", 4, 8, 4, 1, 4, 4, 0),
        ("SXM5", 5, 8, 1, 1, 8, 8, 3),
        # 12: the sizing's 2 servers of at most 8 keep their count; 6 per server -> 2 x 8-GPU boards,
        # 4 spare (one server model per fleet: no 8 + 4 mix, the cost engine prices one model)
        ("SXM5", 12, 8, 1, 2, 8, 8, 4),
        ("SXM5", 12, 8, 4, 2, 8, 8, 4),  # 3 TP4 groups: 2 + 1 per server
        ("SXM5", 16, 8, 8, 2, 8, 8, 0),
        ("SXM5", 32, 16, 8, 4, 8, 8, 0),  # a pinned 16 per server: no 16-GPU board is sold
        ("OAM", 3, 8, 1, 1, 8, 8, 5),  # OAM only on 8-way boards
        ("PCIe dual-slot", 5, 8, 1, 1, 5, 8, 0),  # 5 cards in an 8-slot chassis
        ("PCIe dual-slot", 2, 8, 1, 1, 2, 3, 0),
        ("PCIe dual-slot", 12, 8, 1, 2, 6, 8, 0),  # 6 + 6, not 8 + 4 bought as 8 + 8
        ("PCIe dual-slot", 12, 8, 4, 2, 8, 8, 4),  # whole TP4 groups: 8 + 4 bought as 2 x 8
        ("PCIe dual-slot", 20, 16, 1, 2, 10, 10, 0),  # pinned 16: the largest chassis holds 10
    ],
)
def test_hand_checked_shapes(form, count, max_per_server, tp, servers, per_server, slots, spare):
    s = server_shape(form_factor=form, count=count, max_per_server=max_per_server, tensor_parallel=tp)
    assert (s.servers, s.gpus_per_server, s.slots, s.spare) == (servers, per_server, slots, spare)
    assert s.buyable


@pytest.mark.parametrize("form", ["Superchip module", "TPU chip (Cloud TPU only)"])
def test_systems_and_tpus_are_not_built_from_loose_gpus(form):
    s = server_shape(form_factor=form, count=6, max_per_server=4)
    assert not s.buyable and (s.servers, s.gpus_per_server) == (2, 4)


def test_infra_block_uses_the_board_and_its_power():
    sp = infra.servers_and_power(acc=H100, count=3, gpus_per_server=8)
    assert sp["servers"]["value"] == 1 and sp["gpus_per_server"]["value"] == 4
    # (4 x 700 W + 1500 W host) x 1.2 = 5160 W: the spare GPU is on the board bought
    assert sp["server_power_kw"]["value"] == pytest.approx(5.16)
    assert render(sp["servers"]["explain"]) == "3 GPUs needed, 1 x 4-GPU HGX board (SXM5): 1 spare"
    assert render(sp["servers"]["explain"], "ru") == "нужно GPU: 3; 1 × плата HGX на 4 GPU (SXM5); запасных: 1"


def test_infra_block_pcie_holds_the_cards_needed():
    sp = infra.servers_and_power(acc=L40S, count=5, gpus_per_server=8)
    assert (sp["servers"]["value"], sp["gpus_per_server"]["value"]) == (1, 5)
    assert sp["server_power_kw"]["value"] == pytest.approx(round((5 * 350 + 1500) * 1.2 / 1000, 2))
    assert "5 of 8 GPU slots" in render(sp["servers"]["explain"])
    sp12 = infra.servers_and_power(acc=L40S, count=12, gpus_per_server=8)
    host = infra.host_cpu_ram(kind="inference", per_server=sp12["gpus_per_server"]["value"], acc=L40S, vision=False)
    assert host["cpu_cores_per_server"]["value"] == 4 * 6 + 4  # 6 cards per server, as servers_and_power says


def test_host_of_a_rented_instance_is_the_instance_not_a_bought_board():
    """A 2-GPU cloud instance's host is sized for 2 GPUs, not for the 4-GPU board a purchase would
    round up to (the plan page described a 2 x B200 rental with 20 cores and 1.1 TiB of RAM)."""
    from planner.engine import parse_workload_spec, size_workload
    from planner.engine.result import Configuration

    spec = parse_workload_spec({"kind": "inference", "model": {"preset": "llama-3.1-70b"},
                                "hardware": {"accelerator": "nvidia-b200-sxm-180gb", "count": 2},
                                "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 1}})
    b200 = [ACCS["nvidia-b200-sxm-180gb"]]
    bought = size_workload(spec=spec, accelerators=b200).to_dict()["recommendation"]
    row = {"accelerator_id": bought["accelerator_id"], "count": bought["count"], "layout": bought["layout"]}
    chosen = replace(Configuration.of_candidate(row), gpus_per_server=2, as_instances=True)
    rented = size_workload(spec=spec, accelerators=b200, chosen=chosen).to_dict()["recommendation"]
    assert rented["gpus_per_server"]["value"] == 2
    assert rented["cpu_cores_per_server"]["value"] == 4 * 2 + 4
    assert rented["host_ram_per_server_bytes"]["value"] == round(1.5 * 2 * 180 * 2**30)
    assert bought["gpus_per_server"]["value"] == 4  # HGX B200 boards hold 4 or 8: two spare
    assert bought["cpu_cores_per_server"]["value"] == 4 * 4 + 4


def _sizing(acc_id, count, tp=1):
    rec = {"accelerator_id": acc_id, "count": count, "layout": {"tensor_parallel": tp, "pipeline_parallel": 1}}
    return {"kind": "inference", "recommendation": rec, "candidates": {"best_per_accelerator": [dict(rec, fits=True)]}}


@pytest.mark.parametrize(("acc_id", "count", "tp"), [("nvidia-h100-sxm5-80gb", 3, 1), ("nvidia-h100-sxm5-80gb", 12, 4),
                                                     ("nvidia-l40s-48gb", 5, 1), ("amd-mi300x-192gb", 3, 1)])
def test_cost_workload_and_infra_block_agree(acc_id, count, tp):
    snap = {"accelerators": [{k: getattr(ACCS[acc_id], k) for k in ("id", "vendor", "model", "architecture",
                                                                    "form_factor", "memory_gib",
                                                                    "memory_bandwidth_gb_s", "tdp_w")}]}
    (w,), _ = workloads_from_sizing(_sizing(acc_id, count, tp), price_snapshot=snap)
    sp = infra.servers_and_power(acc=ACCS[acc_id], count=count, gpus_per_server=8, tensor_parallel=tp)
    assert (w.server_count, w.gpus_per_server) == (sp["servers"]["value"], sp["gpus_per_server"]["value"])
    assert w.buyable_gpus_per_server == (w.gpus_per_server,)
    assert w.server_power_w == D(str(sp["server_power_kw"]["value"])) * 1000


def test_cloud_only_table():
    assert cloud_only() == {"nvidia-a10g-24gb": "AWS", "google-tpu-v4-32gb": "GCP", "google-tpu-v5e-16gb": "GCP",
                            "google-tpu-v5p-95gb": "GCP"}
    assert sold_only_in_cloud("nvidia-a10g-24gb") == "AWS" and sold_only_in_cloud("nvidia-a10-24gb") == ""
    assert all(acc in ACCS for acc in cloud_only())


def test_a_cloud_only_accelerator_is_never_bought_even_with_a_server_price():
    w = workload(accelerator_id="a10g", accelerator_name="A10G", sold_only_in_cloud="AWS")
    a10g = ServerPrice(accelerator_id="a10g", gpus_per_server=8, price=usd("40000", "per server"))
    res = cost_plan(inputs=inputs(workloads=[w], servers=[a10g], offers=[], options=("onprem", "hybrid")))
    assert not [o for o in res.options if o.option.kind in ("onprem", "hybrid")]
    reasons = {s["kind"]: render(s["reason"]) for s in res.skipped}
    assert reasons["onprem"] == reasons["hybrid"] == "sold only as AWS instances"
    assert render(next(s["reason"] for s in res.skipped if s["kind"] == "onprem"), "ru") == (
        "продаётся только как инстансы AWS")


def test_spare_gpus_bought_are_in_the_onprem_option():
    w = workload(gpu_count=3, gpus_per_server=4, buyable_gpus_per_server=(4,))
    hgx4 = ServerPrice(accelerator_id="h100", gpus_per_server=4, price=usd("150000", "per server"),
                       name="HGX 4-GPU server")
    res = cost_plan(inputs=inputs(workloads=[w], servers=[hgx4], options=("onprem",)))
    (o,) = [p.option for p in res.options if p.option.kind == "onprem"]
    assert (o.detail["servers"], o.detail["gpus_bought"], o.detail["spare_gpus"]) == (1, 4, 1)


def test_one_gpu_reads_singular():
    sp = infra.servers_and_power(acc=H100, count=1, gpus_per_server=8)
    assert render(sp["servers"]["explain"]) == "1 GPU needed, 1 x 4-GPU HGX board (SXM5): 3 spare"
