"""Scale-up domains and scale-out links (catalog/data/system_fabrics.csv, planner/engine/fabrics.py).

docs/SIZING.md "Scale-up domains and scale-out links"; figures: docs/BENCHMARKS.md "Training: scale-up
domains and scale-out links (issue 24, h/fabric)".
"""

import csv
from pathlib import Path

import pytest

from planner.engine import fabrics, moe_comm, parse_workload_spec
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.serving_constants import link

ROOT = Path(__file__).resolve().parents[2]
ACCS = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
ROWS = {r["accelerator"]: r for r in csv.DictReader((ROOT / "catalog" / "data" / "system_fabrics.csv").open(encoding="utf-8"))}

# (domain GPUs, NIC Gb/s per GPU, a string the cited source states)
PUBLISHED = {
    "nvidia-h100-sxm5-80gb": (8, 400, "8x NVIDIA ConnectX-7 400GbE/NDR"),
    "nvidia-h200-sxm-141gb": (8, 400, "10x 400Gbe Infiniband"),
    "nvidia-b200-sxm-180gb": (8, 400, "8x ConnectX-7 IB NDR 400Gb/s"),
    "nvidia-b300-sxm-288gb": (8, 800, "800 Gb/s"),
    "nvidia-gb200-186gb": (72, 400, "72 per rack"),
    "nvidia-gb300-288gb": (72, 800, "800 Gb/s"),
    "amd-mi300x-192gb": (8, 400, "10x 400Gb InfiniBand"),
    "amd-mi325x-256gb": (8, 400, "drop-in replacement for the Instinct MI300X Platform"),
    "amd-mi355x-288gb": (8, 400, "8x AMD Pollara 400G RoCE per node"),
}


def deepseek_v3():
    return parse_workload_spec({"kind": "pretraining", "model": {"preset": "deepseek-v3"},
                                "training": {"tokens": 1e9}}).model


@pytest.mark.parametrize("acc_id", sorted(PUBLISHED))
def test_catalog_values_match_their_sources(acc_id):
    dom, gbit, quote = PUBLISHED[acc_id]
    row = ROWS[acc_id]
    assert acc_id in ACCS  # a catalog accelerator
    assert int(row["scale_up_domain_gpus"]) == dom
    assert float(row["scale_out_gbit_s_per_gpu"]) == gbit
    assert quote in row["source_title"]
    assert row["source_where"] and row["retrieved_on"] and row["verified"] in ("primary", "secondary")
    assert fabrics.scale_out_gb_s(ACCS[acc_id]) == gbit / 8  # Gb/s each way -> GB/s one-way


def test_every_fabric_row_names_a_catalog_accelerator():
    assert set(ROWS) <= set(ACCS)


def test_domain_is_the_server_or_the_rack():
    assert fabrics.scale_up_domain(ACCS["nvidia-gb200-186gb"]) == 72  # NVL72, not the 4-GPU tray
    assert fabrics.scale_up_domain(ACCS["nvidia-gb200-186gb"], 4) == 72
    assert fabrics.scale_up_domain(ACCS["nvidia-h100-sxm5-80gb"]) == 8
    assert fabrics.scale_up_domain(ACCS["nvidia-h100-sxm5-80gb"], 4) == 4  # a 4-GPU HGX board
    a100 = ACCS["nvidia-a100-sxm4-80gb"]  # no row: unknown, the server as before
    assert fabrics.scale_up_domain(a100) == 8 and fabrics.scale_out_gb_s(a100) is None


def test_gb200_nvl72_ep32_stays_inside_the_domain():
    a, gb200 = deepseek_v3(), ACCS["nvidia-gb200-186gb"]
    dom = fabrics.scale_up_domain(gb200)
    assert int(moe_comm.expert_parallel(a, dp=32, cp=1, tp=1, domain=dom)) == 32  # EP4 on the tray before
    assert int(moe_comm.expert_parallel(a, dp=64, cp=1, tp=1, domain=dom)) == 64
    up = link(gb200, 32)[0]
    assert fabrics.all_to_all_link_gb_s(ep=32, tp=1, domain=dom, scale_up_gb_s=up,
                                        scale_out_gb_s=fabrics.scale_out_gb_s(gb200)) == up


def test_hgx_ep_limit_is_the_board():
    assert int(moe_comm.expert_parallel(deepseek_v3(), dp=64, cp=1, tp=1,
                                        domain=fabrics.scale_up_domain(ACCS["nvidia-b200-sxm-180gb"]))) == 8


def test_all_to_all_across_two_hgx_servers_is_slower_and_hand_computed():
    """EP16 over two HGX B200 servers: 7 of 16 ranks over NVLink 5 (900 GB/s one-way), 8 over the
    400 Gb/s NIC (50 GB/s): effective 15 / max(7/900, 8/50) = 93.75 GB/s."""
    b200 = ACCS["nvidia-b200-sxm-180gb"]
    up, out = link(b200, 16)[0], fabrics.scale_out_gb_s(b200)
    assert (up, out) == (900.0, 50.0)
    inside = fabrics.all_to_all_link_gb_s(ep=8, tp=1, domain=8, scale_up_gb_s=up, scale_out_gb_s=out)
    across = fabrics.all_to_all_link_gb_s(ep=16, tp=1, domain=8, scale_up_gb_s=up, scale_out_gb_s=out)
    assert inside == up
    assert across == pytest.approx(15 / max(7 / 900, 8 / 50)) == pytest.approx(93.75)
    a = deepseek_v3()
    for ep, bw in ((8, inside), (16, across)):
        nbytes = float(moe_comm.all_to_all_bytes_per_token(a, ep=ep, full_recompute=False))
        hand = 2 * 58 * 8 * 7168 * 4 * (ep - 1) / ep / (bw * 1e9)  # 2 passes x L_moe x k x h x 4 B
        assert nbytes / (bw * 1e9) == pytest.approx(hand)
    t8 = float(moe_comm.all_to_all_bytes_per_token(a, ep=8, full_recompute=False)) / inside
    t16 = float(moe_comm.all_to_all_bytes_per_token(a, ep=16, full_recompute=False)) / across
    assert t16 > 9 * t8  # the NIC, not NVLink, bounds the group that spans two servers
    f8 = moe_comm.all_to_all_factor(0.4, bytes_per_token=t8 * inside, link_gb_s=inside, peak_tflops=4500,
                                    exec_flops_per_token=6 * 37e9)
    f16 = moe_comm.all_to_all_factor(0.4, bytes_per_token=t16 * across, link_gb_s=across, peak_tflops=4500,
                                     exec_flops_per_token=6 * 37e9)
    assert 0 < f16 < f8 <= 1


def test_unknown_scale_out_keeps_the_scale_up_link():
    assert fabrics.all_to_all_link_gb_s(ep=16, tp=1, domain=8, scale_up_gb_s=900.0, scale_out_gb_s=None) == 900.0


def test_search_catalog_carries_the_domain():
    from planner.engine.search_catalog import catalog_arrays

    accs = [ACCS["nvidia-gb200-186gb"], ACCS["nvidia-h100-sxm5-80gb"], ACCS["nvidia-a100-sxm4-80gb"]]
    cat = catalog_arrays(accs, compute_precision="bf16")
    assert cat.scale_up_domain.tolist() == [72, 8, 8]
    assert cat.scale_out_gb_s[:2].tolist() == [50.0, 50.0] and cat.scale_out_gb_s[2] != cat.scale_out_gb_s[2]  # NaN: unknown
    assert catalog_arrays(accs, compute_precision="bf16", gpus_per_server_pin=4).scale_up_domain.tolist() == [72, 4, 4]
