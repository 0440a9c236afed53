"""Scheduler mechanisms of the serving model added for the InferenceX fit (issue 22): the per-rank
scheduler cap of data-parallel attention, TensorRT-LLM's attention-DP context balancing, the
disaggregated handoff, and the AMD scale-up links the collectives now use (docs/SIZING.md)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving_constants import RUNTIME_SPECS
from planner.engine.serving_disagg import Pool, evaluate_disaggregated
from planner.engine.serving_layout import evaluate_layout, make_engine
from planner.engine.serving_model import DP_BALANCE_TIMEOUT_STEPS, balance_arrivals
from planner.engine.serving_moe import group_link

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
B200, MI355X = BY_ID["nvidia-b200-sxm-180gb"], BY_ID["amd-mi355x-288gb"]
DSR1 = preset_arch("deepseek-r1-0528")
ENGINE = dict(arch=DSR1, acc=B200, weights="fp4", compute="fp4", kv_precision="fp8", tp=8, pp=1,
              isl=1024.0, osl=1024.0)


def test_data_parallel_attention_admits_the_cap_of_every_rank():
    rt = RUNTIME_SPECS["sglang"]
    tp_only = evaluate_layout(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="sglang", weights="fp4",
                              kv_cache="fp8", input_tokens=1024, output_tokens=1024, concurrency=64)
    dpa = evaluate_layout(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="sglang", weights="fp4",
                          kv_cache="fp8", input_tokens=1024, output_tokens=1024, concurrency=64,
                          expert_parallel=8, data_parallel_attention=True)
    assert float(tp_only["n_max"]) <= rt.max_running_seqs
    n_kv = float(dpa["memory"]["n_kv"])
    assert float(dpa["n_max"]) == min(n_kv, 8 * rt.max_running_seqs)
    assert float(dpa["n_max"]) > rt.max_running_seqs  # the KV pool of 8 ranks holds more than one rank's cap


@pytest.mark.parametrize("lam", [0.5, 5.0, 20.0])
def test_trtllm_attention_dp_balancing_waits_for_the_other_ranks_at_most_the_timeout(lam):
    trt, _, _ = make_engine(**ENGINE, runtime="trtllm", ep=8, dpa=True)
    assert float(trt.dp_balance_ranks) == 8.0
    plain = replace(trt, dp_balance_ranks=np.array(1.0))
    s, p = trt.steady(lam, parts=False), plain.steady(lam, parts=False)
    assert float(s["T"]) == pytest.approx(float(p["T"]))  # balancing delays prompts, not steps
    wait = min(float(balance_arrivals(8.0)) / lam, DP_BALANCE_TIMEOUT_STEPS * float(s["T"]))
    assert float(s["ttft"] - p["ttft"]) == pytest.approx(wait, rel=1e-6)
    assert float(s["ttft_p95"]) >= float(s["ttft"])


@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_balance_wait_is_the_coupon_collectors_by_simulation(ranks):
    """Arrivals go to random ranks; a context batch leaves when every rank holds one: the mean number of later
    arrivals a request waits for, simulated, against the closed form (and above the ranks-in-turn (r - 1) / 2)."""
    rng = np.random.default_rng(7)
    waited, count = 0.0, 0
    for _ in range(4000):
        seen, n = set(), 0
        while len(seen) < ranks:
            seen.add(int(rng.integers(ranks)))
            n += 1
        waited += n * (n - 1) / 2.0  # the i-th of n arrivals waits for n - i more
        count += n
    assert float(balance_arrivals(float(ranks))) == pytest.approx(waited / count, rel=0.05)
    assert float(balance_arrivals(float(ranks))) > (ranks - 1) / 2.0
    assert float(balance_arrivals(1.0)) == 0.0


def test_only_trtllm_with_data_parallel_attention_balances():
    sgl, _, _ = make_engine(**ENGINE, runtime="sglang", ep=8, dpa=True)
    trt_tp, _, _ = make_engine(**ENGINE, runtime="trtllm", ep=8, dpa=False)
    assert float(sgl.dp_balance_ranks) == 1.0 and float(trt_tp.dp_balance_ranks) == 1.0


def test_balancing_keeps_littles_law_in_the_closed_loop():
    r = evaluate_layout(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="trtllm", weights="fp4",
                        kv_cache="fp8", input_tokens=1024, output_tokens=1024, concurrency=np.array([8.0, 128.0]),
                        expert_parallel=8, data_parallel_attention=True)
    cycle_s = (r["ttft_ms"] + 1023.0 * r["tpot_ms"]) / 1e3
    per_gpu = np.array([8.0, 128.0]) * 1024.0 / cycle_s / 8.0
    assert r["output_tokens_per_s_per_gpu"] == pytest.approx(per_gpu, rel=0.02)


def test_disaggregated_handoff_adds_to_every_first_token():
    kw = dict(arch=DSR1, accelerator=B200, runtime="sglang", weights="fp4", kv_cache="fp8", input_tokens=1024,
              output_tokens=1024, concurrency=np.array([1.0, 64.0]), prefill=Pool(1, 8), decode=Pool(1, 8))
    base = evaluate_disaggregated(**kw, consts={"disagg_handoff_s": 0.0})
    slow = evaluate_disaggregated(**kw, consts={"disagg_handoff_s": 0.2})
    # one client: the handoff, less the little queueing its lower rate saves on the pools
    assert 150.0 < float(slow["ttft_ms"][0] - base["ttft_ms"][0]) <= 200.0 + 1e-6
    assert np.all(slow["throughput_rps"] <= base["throughput_rps"] * (1 + 1e-6))
    cycle_s = (slow["ttft_ms"] + 1023.0 * slow["tpot_ms"]) / 1e3
    assert slow["throughput_rps"] * cycle_s == pytest.approx(np.array([1.0, 64.0]), rel=0.02)


def test_mi355x_collectives_run_over_infinity_fabric_not_pcie():
    bw, _, kind = group_link(MI355X, 8)
    assert kind == "scale-up" and bw == pytest.approx(1075.2 / 2)
    assert MI355X.interconnect_gb_s == pytest.approx(1075.2)
    assert BY_ID["amd-mi325x-256gb"].interconnect_gb_s == pytest.approx(896.0)
    assert group_link(MI355X, 16)[2] == "network"  # beyond the 8-GPU baseboard
