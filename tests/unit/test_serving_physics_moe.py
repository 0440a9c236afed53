"""Physics as property tests for the MoE mechanisms of issue 22 (item 8): with expert parallel,
data-parallel attention, MTP and disaggregated pools, the sustained FLOP/s, memory bytes/s and link
bytes/s stay within the hardware's peaks and the KV cache within memory, for random valid layouts.
Every bound is computed here from the architecture and the catalog, not read from the model."""

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine.architecture import kv_cache_bytes_per_token
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.precision import weight_bytes_per_param
from planner.engine.presets import preset_arch
from planner.engine.serving_disagg import Pool, evaluate_disaggregated
from planner.engine.serving_layout import evaluate_layout
from planner.engine.serving_model import moe_split
from planner.engine.serving_moe import group_link

ROOT = Path(__file__).resolve().parents[2]
BY_ID = {a.id: a for a in load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")}
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = ("deepseek-r1-0528", "gpt-oss-120b", "qwen3.5-397b-a17b", "mixtral-8x7b")
GPUS = ("nvidia-h200-sxm-141gb", "nvidia-b200-sxm-180gb", "nvidia-gb200-186gb", "amd-mi355x-288gb",
        "amd-mi300x-192gb")
PREC = {"fp8": ("fp8", "fp8", "fp8"), "fp4": ("fp4", "fp4", "fp8")}


def _peak(acc, fmt):
    cols = ["bf16_tflops_dense", "fp16_tflops_dense", {"fp8": "fp8_tflops_dense", "fp4": "fp4_tflops_dense"}[fmt]]
    return max(getattr(acc, c) or 0.0 for c in cols) * 1e12


def _check_engine(a, acc, res, *, prec, tp, isl, osl, dpa, out_key="output_tokens_per_s_per_gpu", gpus=None,
                  prompt=True):
    eng = res["engine"] if "engine" in res else res["decode_engine"]
    ok = np.asarray(res["fits"]) & np.isfinite(res["tpot_ms"]) & (np.asarray(res[out_key]) > 0)
    if not ok.any():
        return
    gpus = gpus or tp
    rate = np.asarray(res[out_key]) * (gpus if out_key == "output_tokens_per_s_per_gpu" else tp) / osl
    # FLOPs: every output token (and, prefilling, every prompt token) passes the active parameters once
    flops = rate * ((isl if prompt else 0.0) + osl) * 2.0 * a.active_params / tp
    assert np.all(flops[ok] <= _peak(acc, prec) * 1.0001)
    # Bytes: each step reads at least each GPU's share of the always-read weights
    step = np.asarray(res["tpot_ms"]) / 1e3 * np.asarray(eng.spec_a)
    dense, _ = moe_split(a)
    w = dense * weight_bytes_per_param(prec) / tp
    assert np.all((w / step)[ok] <= acc.memory_bandwidth_gb_s * 1e9 * 1.0001)
    # Link: the all-reduces (no DPA) carry every step token's hidden state over the one-way link
    if tp > 1 and not dpa:
        tokens_s = rate * ((isl if prompt else 0.0) + osl * np.asarray(eng.dq) / np.asarray(eng.spec_a))
        link_bytes = tokens_s * 2 * a.layers * 2 * (tp - 1) / tp * a.hidden_size * 2
        assert np.all(link_bytes[ok] <= group_link(acc, tp)[0] * 1e9 * 1.0001)


layouts = st.fixed_dictionaries({
    "model": st.sampled_from(MODELS), "gpu": st.sampled_from(GPUS), "prec": st.sampled_from(("fp8", "fp4")),
    "tp": st.sampled_from((2, 4, 8)), "ep": st.booleans(), "dpa": st.booleans(),
    "mtp": st.one_of(st.none(), st.floats(1.0, 4.0)), "runtime": st.sampled_from(("vllm", "sglang", "trtllm")),
    "isl": st.integers(128, 8192), "osl": st.integers(16, 4096), "clients": st.integers(1, 2048),
})


@SETTINGS
@given(layouts)
def test_aggregated_moe_layouts_respect_peaks_bandwidth_links_and_memory(d):
    a, acc = preset_arch(d["model"]), BY_ID[d["gpu"]]
    w, c, kv = PREC[d["prec"]]
    tp = d["tp"]
    ep = tp if d["ep"] and a.experts % tp == 0 else 1
    res = evaluate_layout(arch=a, accelerator=acc, tensor_parallel=tp, runtime=d["runtime"], weights=w, compute=c,
                          kv_cache=kv, input_tokens=d["isl"], output_tokens=d["osl"], concurrency=d["clients"],
                          expert_parallel=ep, data_parallel_attention=d["dpa"],
                          speculative="mtp" if d["mtp"] else "none", mtp_accepted_tokens=d["mtp"])
    _check_engine(a, acc, res, prec=c, tp=tp, isl=d["isl"], osl=d["osl"], dpa=d["dpa"])
    mem = res["memory"]
    if bool(res["fits"]) and np.isfinite(res["tpot_ms"]):
        kv_gpu = float(res["running_sequences"]) * (d["isl"] + d["osl"] / 2) * float(mem["kv_bytes_per_token_gpu"])
        assert kv_gpu <= float(mem["kv_pool_bytes"]) * 1.0001
        split = tp if d["dpa"] else (1 if a.is_mla else min(tp, a.kv_heads))
        assert float(mem["kv_bytes_per_token_gpu"]) == kv_cache_bytes_per_token(a, kv_precision=kv) / split
        assert float(mem["weights_bytes"] + mem["kv_pool_bytes"]) <= acc.memory_gib * 2**30


pools = st.fixed_dictionaries({
    "gpu": st.sampled_from(("nvidia-b200-sxm-180gb", "nvidia-gb200-186gb", "amd-mi355x-288gb")),
    "pw": st.integers(1, 4), "ptp": st.sampled_from((4, 8)), "dw": st.integers(1, 2), "dtp": st.sampled_from((8, 16)),
    "dpa": st.booleans(), "mtp": st.one_of(st.none(), st.floats(1.0, 4.0)),
    "isl": st.integers(512, 8192), "osl": st.integers(64, 4096), "clients": st.integers(1, 4096),
})


@SETTINGS
@given(pools)
def test_disaggregated_pools_respect_peaks_bandwidth_and_memory(d):
    a, acc = preset_arch("deepseek-r1-0528"), BY_ID[d["gpu"]]
    pre, dec = Pool(d["pw"], d["ptp"], d["ptp"], d["dpa"]), Pool(d["dw"], d["dtp"], d["dtp"], d["dpa"])
    res = evaluate_disaggregated(arch=a, accelerator=acc, prefill=pre, decode=dec, runtime="sglang", weights="fp4",
                                 kv_cache="fp8", input_tokens=d["isl"], output_tokens=d["osl"],
                                 concurrency=d["clients"], speculative="mtp" if d["mtp"] else "none",
                                 mtp_accepted_tokens=d["mtp"])
    if not (bool(res["fits"]) and np.isfinite(res["tpot_ms"])):
        return
    rate = float(res["throughput_rps"])
    # prefill pool: the prompts' FLOPs within its GPUs' peak
    assert rate * d["isl"] * 2 * a.active_params <= pre.gpus * _peak(acc, "fp4") * 1.0001
    # decode pool: one decode engine's rate, per GPU within peak / bandwidth
    per_engine = {**res, "output_tokens_per_s_per_decode_gpu": np.asarray(res["output_tokens_per_s_per_decode_gpu"])}
    _check_engine(a, acc, per_engine, prec="fp4", tp=dec.tensor_parallel, isl=d["isl"], osl=d["osl"], dpa=d["dpa"],
                  out_key="output_tokens_per_s_per_decode_gpu", prompt=False)
    mem = res["memory"]["decode"]
    assert float(mem["weights_bytes"] + mem["kv_pool_bytes"]) <= acc.memory_gib * 2**30
