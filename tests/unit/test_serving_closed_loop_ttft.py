"""Closed-loop TTFT (issue 22, docs/SIZING.md "Closed-loop TTFT: median and mean"): the start-up cohort
is in the mean and the tail, not in the median; the scheduler takes new requests in every poll_steps
steps; TTFT grows with the clients; Little's law holds on the mean."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving_disagg import Pool, evaluate_disaggregated
from planner.engine.serving_layout import evaluate_layout, make_engine

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
B200, H200 = BY_ID["nvidia-b200-sxm-180gb"], BY_ID["nvidia-h200-sxm-141gb"]
DSR1 = preset_arch("deepseek-r1-0528")
ENGINE = dict(arch=DSR1, acc=B200, weights="fp4", compute="fp4", kv_precision="fp8", tp=8, pp=1,
              isl=8192.0, osl=1024.0)
CLIENTS = np.array([1.0, 4.0, 16.0, 64.0, 128.0])


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "trtllm"])
def test_median_leaves_out_the_startup_cohort_the_mean_keeps_it(runtime):
    eng, _, _ = make_engine(**ENGINE, runtime=runtime)
    eng = replace(eng, cohort_factor=np.array(1.0))
    s = eng.closed_loop(CLIENTS)
    cohort = eng.cohort_s(CLIENTS)
    assert np.all(cohort[1:] > 0.0)
    assert np.all(s["ttft"] - s["ttft_p50"] >= cohort * (1 - 1e-9))  # the mean holds the cohort wait, the median not
    assert np.all(s["ttft_p50"] <= s["ttft_p95"] * (1 + 1e-9))
    assert np.all(s["ttft_p95"] <= s["ttft_p99"] * (1 + 1e-9))


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "trtllm"])
def test_ttft_grows_with_the_clients_of_a_closed_loop(runtime):
    r = evaluate_layout(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime=runtime, weights="fp4",
                        kv_cache="fp8", input_tokens=8192, output_tokens=1024, concurrency=CLIENTS)
    for key in ("ttft_ms", "ttft_p50_ms", "ttft_p95_ms"):
        assert np.all(np.diff(r[key]) >= -1e-6), key
    # Little's law on the mean: clients = rate x (mean TTFT + (osl - 1) x TPOT)
    cycle_s = (r["ttft_ms"] + 1023.0 * r["tpot_ms"]) / 1e3
    assert r["throughput_rps"] * cycle_s == pytest.approx(CLIENTS, rel=0.02)


@pytest.mark.parametrize("lam", [0.2, 2.0, 8.0])
def test_a_request_waits_half_the_poll_interval_to_be_taken_in(lam):
    eng, _, _ = make_engine(**ENGINE, runtime="sglang")
    every = replace(eng, poll_steps=np.array(1.0))
    tenth = replace(eng, poll_steps=np.array(10.0))
    a, b = every.steady(lam, parts=False), tenth.steady(lam, parts=False)
    assert float(b["T"]) == pytest.approx(float(a["T"]))  # polling delays admission, not the steps
    if np.isfinite(a["T"]) and a["stable"] and b["stable"]:
        # 4.5 more steps at the mean and the median (+ the slot wait a longer residence adds), 9 at p95
        assert float(b["ttft_p50"] - a["ttft_p50"]) >= 4.5 * float(a["T"]) * (1 - 1e-9)
        assert float(b["ttft_p95"] - a["ttft_p95"]) >= 9.0 * float(a["T"]) * (1 - 1e-9)


def test_polling_keeps_littles_law_and_the_peaks_in_the_closed_loop():
    kw = dict(arch=DSR1, accelerator=B200, tensor_parallel=8, runtime="sglang", weights="fp4", kv_cache="fp8",
              input_tokens=1024, output_tokens=1024, concurrency=CLIENTS)
    base = evaluate_layout(**kw, consts={"scheduler_poll_steps": 1.0})
    slow = evaluate_layout(**kw, consts={"scheduler_poll_steps": 30.0})
    assert np.all(slow["ttft_p50_ms"] >= base["ttft_p50_ms"] - 1e-6)
    assert np.all(slow["throughput_rps"] <= base["throughput_rps"] * (1 + 1e-6))  # the cycle is longer
    cycle_s = (slow["ttft_ms"] + 1023.0 * slow["tpot_ms"]) / 1e3
    assert slow["throughput_rps"] * cycle_s == pytest.approx(CLIENTS, rel=0.02)


def test_only_the_runtimes_fitted_for_it_poll_less_often_than_every_step():
    from planner.engine.serving_constants import serving_constants
    for rt in ("vllm", "trtllm"):
        for acc in (B200, H200):
            assert serving_constants(acc, rt, "fp8")["scheduler_poll_steps"] == 1.0


def test_disaggregated_median_is_at_most_the_mean():
    r = evaluate_disaggregated(arch=DSR1, accelerator=B200, runtime="sglang", weights="fp4", kv_cache="fp8",
                               input_tokens=8192, output_tokens=1024, concurrency=CLIENTS,
                               prefill=Pool(2, 4), decode=Pool(1, 8))
    assert np.all(r["ttft_p50_ms"] <= r["ttft_ms"] * (1 + 1e-9))
    assert np.all(np.diff(r["ttft_ms"]) >= -1e-6)


@pytest.mark.parametrize("lam", [0.2, 2.0])
def test_a_prompt_waits_for_the_prompts_batched_with_it_over_the_poll_window(lam):
    """SGLang prefills what one poll takes in as one batch: beyond the half window, a prompt's first token waits
    for the lam x (k - 1) x T prompts that arrived in the rest of its window (docs/SIZING.md "Scheduler polling")."""
    eng, _, _ = make_engine(**ENGINE, runtime="sglang")
    every = replace(eng, poll_steps=np.array(1.0))
    thirty = replace(eng, poll_steps=np.array(30.0))
    a, b = every.steady(lam, parts=False), thirty.steady(lam, parts=False)
    assert a["stable"] and b["stable"]
    T = float(a["T"])
    batched = lam * 29.0 * T * 8192.0 * float(eng.prefill_s_per_token())
    assert batched > 0.0
    # the median gains the half window and the batch (and the slot wait the longer residence adds, >= 0)
    assert float(b["ttft_p50"] - a["ttft_p50"]) >= (14.5 * T + batched) * (1 - 1e-9)
    assert float(b["ttft_p50"] - a["ttft_p50"]) <= (14.5 * T + batched) * 1.05
    assert float(b["tpot"]) == pytest.approx(float(a["tpot"]))  # the steps are the same


def test_the_batched_prompts_grow_with_the_rate():
    eng, _, _ = make_engine(**ENGINE, runtime="sglang")
    thirty = replace(eng, poll_steps=np.array(30.0))
    every = replace(eng, poll_steps=np.array(1.0))
    lams = np.array([0.1, 0.5, 1.0, 2.0])
    gap = thirty.steady(lams, parts=False)["ttft_p50"] - every.steady(lams, parts=False)["ttft_p50"]
    half = 14.5 * every.steady(lams, parts=False)["T"]
    assert np.all(np.diff(gap - half) > 0.0)  # the batch beyond the half window grows with the arrivals


@pytest.mark.parametrize(("row", "k"), [
    ({"concurrency": "8", "gpu": "b200", "model_key": "dsr1", "precision": "fp4", "tensor_parallel": "8"}, 10.0),
    ({"concurrency": "16", "gpu": "b200", "model_key": "dsr1", "precision": "fp4", "tensor_parallel": "8"}, 30.0),
    ({"concurrency": "64", "gpu": "b200", "model_key": "dsr1", "precision": "fp8", "tensor_parallel": "4"}, 10.0),
    ({"concurrency": "64", "gpu": "b300", "model_key": "dsr1", "precision": "fp8", "tensor_parallel": "8"}, 30.0),
    ({"concurrency": "8", "gpu": "b200", "model_key": "qwen3.5", "precision": "fp8", "tensor_parallel": "8"}, 30.0),
    ({"concurrency": "4", "gpu": "b200", "model_key": "qwen3.5", "precision": "fp8", "tensor_parallel": "8"}, 10.0),
    ({"concurrency": "64", "gpu": "mi355x", "model_key": "qwen3.5", "precision": "fp8", "tensor_parallel": "8"}, 30.0),
    ({"concurrency": "64", "gpu": "mi355x", "model_key": "dsr1", "precision": "fp8", "tensor_parallel": "8"}, None),
    ({"concurrency": "64", "gpu": "b200", "model_key": "dsv4", "precision": "fp4", "tensor_parallel": "8"}, None),
    ({"concurrency": "64", "gpu": "h200", "model_key": "dsr1", "precision": "fp8", "tensor_parallel": "8"}, None),
])
def test_the_replay_takes_sglangs_poll_interval_from_the_recipes(row, k):
    from planner.engine.serving_replay_ix import recipe_poll_steps
    r = {"framework": "sglang", "data_parallel_attention": "False", "disaggregated": "False", **row}
    assert recipe_poll_steps(r) == k
    assert recipe_poll_steps({**r, "data_parallel_attention": "True"}) is None  # the skipper needs no DP attention
    assert recipe_poll_steps({**r, "framework": "vllm"}) is None
    assert recipe_poll_steps({**r, "framework": "dynamo-sglang", "disaggregated": "True"}) is None
