"""Each engine's memory budget as the engine computes it (serving_constants.RUNTIME_SPECS, budget_rule;
serving_layout.memory_plan), checked with the engines' own numbers, and the chip limit on every layout."""

import numpy as np
import pytest

from planner.engine.presets import preset_arch
from planner.engine.serving_constants import (
    RUNTIME_SPECS,
    sglang_launch_cuda_graph_max_bs,
    sglang_mem_fraction_static,
)
from planner.engine.serving_layout import memory_plan

GIB = 1024 ** 3


# SGLang server_args.py _handle_gpu_memory_settings: reserved MiB = 512 + 1.5 x chunk + 2 x cuda_graph_max_bs
# + tp x pp / 8 x 1024 (+ DP attention terms), >= 10 GiB above 60 GiB, + 2 GiB with an EAGLE/MTP draft;
# fraction = round((gpu_mem - reserved) / gpu_mem, 3). GPU memory as nvidia-smi reports it (MiB).
@pytest.mark.parametrize("gpu_mem, kw, reserved", [
    (81559, dict(tp=1), 512 + 8192 * 1.5 + 256 * 2 + 128),          # H100 80 GB, TP1: chunk 8k, graphs 256
    (81559, dict(tp=8), 512 + 8192 * 1.5 + 512 * 2 + 1024),         # TP >= 4: graphs 512
    (143771, dict(tp=8), 512 + 8192 * 1.5 + 512 * 2 + 1024),        # H200: same sizes below 160 GiB
    (183359, dict(tp=8), 512 + 16384 * 1.5 + 512 * 2 + 1024),       # B200: chunk 16k, graphs 512
    (183359, dict(tp=4, chunked_prefill_size=8192), 512 + 8192 * 1.5 + 512 * 2 + 512),
    (81559, dict(tp=1, chunked_prefill_size=2048, cuda_graph_max_bs=8), 10 * 1024),  # the 10 GiB floor
    (183359, dict(tp=8, speculative=True), 512 + 16384 * 1.5 + 512 * 2 + 1024 + 2048),
    (183359, dict(tp=8, dp_attention=True), 512 + 16384 * 1.5 + 512 * 2 + 1024 + 512 * 8 * 3 + 512 * 8 * 1.5),
])
def test_sglang_mem_fraction_static_is_the_engines_rule(gpu_mem, kw, reserved):
    assert float(sglang_mem_fraction_static(gpu_mem, **kw)) == pytest.approx(round((gpu_mem - reserved) / gpu_mem, 3))


def test_sglang_fraction_grows_with_gpu_memory_and_shrinks_with_tp():
    f = lambda mem, tp: float(sglang_mem_fraction_static(mem, tp=tp, chunked_prefill_size=8192))  # noqa: E731
    assert f(81920, 1) < f(143360, 1) < f(184320, 1) < f(294912, 1)
    assert f(184320, 1) > f(184320, 4) > f(184320, 8)
    assert 0.83 < f(81920, 1) < 0.84 and 0.92 < f(184320, 4) < 0.93


ARCH = preset_arch("deepseek-r1-0528")


def plan(runtime, gib=180, tp=8, dpa=False, mtp=False, isl=1024, osl=1024, launch_batch=None, kv="fp8"):
    return memory_plan(arch=ARCH, capacity_bytes=gib * GIB, runtime=runtime, weights="fp8", compute="fp8",
                       kv_precision=kv, tp=tp, pp=1, isl=isl, osl=osl, dpa=dpa, mtp=mtp, launch_batch=launch_batch)


def test_a_server_launched_for_its_load_captures_graphs_up_to_that_load_only():
    # the default where no load is known or the load is above it; whole requests, at least one
    assert sglang_launch_cuda_graph_max_bs(81920, tp=16).tolist() == 512.0
    assert sglang_launch_cuda_graph_max_bs(81920, tp=2).tolist() == 256.0
    assert sglang_launch_cuda_graph_max_bs(81920, tp=16, launch_batch=[0, 1, 63.2, 64, 4096]).tolist() == [
        1.0, 1.0, 64.0, 64.0, 512.0]


def test_dp_attention_on_h100_holds_deepseek_r1_when_launched_for_its_load():
    # InferenceX's Dynamo-SGLang decode pool: DeepSeek-R1 fp8, TP16 / EP16 with DP attention and MTP on
    # 16 x H100 80 GB, launched for 1-64 clients (srt-slurm recipe: cuda-graph-max-bs 64). With SGLang's default
    # graphs (512 per rank x 16 ranks) the rule leaves ~33 GB per GPU, under R1's ~58 GB: refused. Launched for
    # 64 requests it reserves 512 + 1.5 x 8192 + 2 x 64 + 16 / 8 x 1024 + 3 x 64 x 16 + 2048 (draft) MiB.
    default = plan("sglang", gib=80, tp=16, dpa=True, mtp=True, kv="bf16")
    launched = plan("sglang", gib=80, tp=16, dpa=True, mtp=True, kv="bf16", launch_batch=64)
    assert not bool(default["fits"])
    assert bool(launched["fits"]) and float(launched["n_kv"]) >= 64 / 16
    reserved = 512 + 1.5 * 8192 + 2 * 64 + 2 * 1024 + 3 * 64 * 16 + 2048
    assert float(launched["memory_fraction"]) == pytest.approx(round((81920 - reserved) / 81920, 3))
    # the other engines' budgets do not depend on CUDA graphs
    for rt in ("vllm", "trtllm", "atom"):
        assert float(plan(rt, launch_batch=4)["kv_pool_bytes"]) == float(plan(rt)["kv_pool_bytes"])


def test_vllm_and_atom_budget_is_the_share_of_the_whole_gpu():
    for rt in ("vllm", "atom"):  # gpu_memory_utilization 0.9: weights + activations + KV <= 0.9 x memory
        m = plan(rt)
        frac = RUNTIME_SPECS[rt].gpu_memory_fraction
        assert frac == 0.90 and RUNTIME_SPECS[rt].budget_rule == "total"
        want = frac * 180 * GIB - m["weights_bytes"] - m["activations_bytes"] - m["workspace_bytes"]
        assert float(m["kv_pool_bytes"]) == pytest.approx(float(want))


def test_trtllm_kv_pool_is_the_share_of_the_free_memory():
    m = plan("trtllm")  # KvCacheConfig.free_gpu_memory_fraction 0.9 of what the weights and activations leave
    free = 180 * GIB - m["weights_bytes"] - m["activations_bytes"] - m["workspace_bytes"]
    assert float(m["kv_pool_bytes"]) == pytest.approx(0.9 * float(free))


def test_sglang_static_budget_holds_weights_and_kv_only():
    m = plan("sglang", tp=4)
    frac = float(sglang_mem_fraction_static(180 * 1024, tp=4, chunked_prefill_size=RUNTIME_SPECS["sglang"].step_token_budget))
    assert float(m["memory_fraction"]) == frac
    assert float(m["kv_pool_bytes"]) == pytest.approx(frac * 180 * GIB - float(m["weights_bytes"]))
    # DeepSeek-R1 fp8 on 4 x B200 (InferenceX ran it): held under SGLang's rule for a 180 GB GPU
    assert bool(m["fits"]) and float(m["n_kv"]) >= 1
    # data-parallel attention and an MTP draft reserve more, as the engine does
    assert float(plan("sglang", tp=8, dpa=True)["memory_fraction"]) < float(plan("sglang", tp=8)["memory_fraction"])
    assert float(plan("sglang", tp=8, mtp=True)["memory_fraction"]) < float(plan("sglang", tp=8)["memory_fraction"])


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "trtllm", "atom"])
@pytest.mark.parametrize("gib", [80, 141, 180, 186, 288])
@pytest.mark.parametrize("tp, dpa", [(8, False), (8, True), (16, False)])
def test_nothing_exceeds_the_chip(runtime, gib, tp, dpa):
    m = plan(runtime, gib=gib, tp=tp, dpa=dpa, isl=8192, osl=1024)
    if not bool(m["fits"]):
        return
    used = (m["weights_bytes"] + m["activations_bytes"] + m["workspace_bytes"]
            + np.minimum(m["n_kv"], 1e6) * m["kv_per_seq_bytes"])
    assert float(used) <= gib * GIB * (1 + 1e-9)


def _row(**kw):
    base = {"model_key": "gptoss120b", "model": "openai/gpt-oss-120b", "gpu": "mi355x", "framework": "vllm",
            "precision": "fp4", "consistency": "ok", "disaggregated": "False", "isl": "1024", "osl": "8192",
            "measured_ttft_ms": "45", "measured_tpot_ms": "4.3", "measured_output_tok_s_per_gpu": "",
            "measured_throughput_tok_s_per_gpu": "516.0"}
    return {**base, **kw}


def test_aggregated_rows_without_the_output_split_use_the_documented_lengths():
    from planner.engine.serving_replay_ix import measured_output, refusal
    r = _row(consistency="no_input_output_split")
    assert refusal(r) is None
    assert measured_output(r) == pytest.approx(516.0 * 8192 / (1024 + 8192))
    assert measured_output(_row(measured_output_tok_s_per_gpu="400")) == 400.0


def test_rows_recording_only_the_total_gpus_stay_refused_with_the_reason():
    from planner.engine.serving_replay_ix import refusal
    why = refusal(_row(consistency="v1_disagg_tp_field_is_total_gpus", disaggregated="True", gpu="gb200"))
    assert why == "topology fields incomplete (v1_disagg_tp_field_is_total_gpus)"
    # a disaggregated row missing its split has no per-decode-GPU reading: refused
    assert refusal(_row(consistency="no_input_output_split", disaggregated="True")).startswith("topology")
