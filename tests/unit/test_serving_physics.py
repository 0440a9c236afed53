"""Physics as property tests (issue 10, item 8): any candidate a plan marks as meeting the targets
stays within its GPUs' dense peak, memory bandwidth and memory, for random valid specs."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine import parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.precision import weight_bytes_per_param
from planner.engine.presets import preset_arch

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
BY_ID = {a.id: a for a in ACCS}
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PRESETS = ("llama-3.1-8b", "qwen3-32b", "llama-3.1-70b", "mixtral-8x7b", "gpt-j-6b")
PRECISIONS = [("bf16", "bf16", "bf16"), ("fp8", "fp8", "fp8"), ("int4", "bf16", "bf16"), ("fp4", "fp4", "fp8"),
              ("fp16", "fp16", "fp16")]

specs = st.fixed_dictionaries({
    "preset": st.sampled_from(PRESETS),
    "precision": st.sampled_from(PRECISIONS),
    "runtime": st.sampled_from(("vllm", "sglang", "trtllm", "hf_transformers")),
    "isl": st.integers(16, 8000), "osl": st.integers(1, 2000),
    "rps": st.floats(0.0, 50.0), "concurrency": st.integers(1, 256),
    "ttft": st.one_of(st.none(), st.floats(50, 20000)), "tpot": st.one_of(st.none(), st.floats(5, 500)),
})


def _peak_bound_tflops(acc, compute):
    """The highest dense peak the chip could possibly run this compute format at (catalog columns)."""
    cols = ["bf16_tflops_dense", "fp16_tflops_dense", "tf32_tflops_dense", "fp32_tflops"]
    cols += {"fp8": ["fp8_tflops_dense"], "fp4": ["fp4_tflops_dense"], "int8": ["int8_tops_dense"]}.get(compute, [])
    return max(getattr(acc, c) or 0.0 for c in cols)


@SETTINGS
@given(specs)
def test_candidates_meeting_targets_respect_peak_bandwidth_and_memory(d):
    w, c, kv = d["precision"]
    ctx = preset_arch(d["preset"]).max_position_embeddings or 8192
    d["isl"], d["osl"] = min(d["isl"], ctx // 2), min(d["osl"], ctx // 2)  # within the model's context
    serving = {"input_tokens": d["isl"], "output_tokens": d["osl"], "requests_per_second": d["rps"],
               "concurrency": d["concurrency"], "runtime": d["runtime"]}
    if d["ttft"]:
        serving["ttft_p95_ms"] = d["ttft"]
    if d["tpot"]:
        serving["tpot_p95_ms"] = d["tpot"]
    spec = parse_workload_spec({"kind": "inference", "model": {"preset": d["preset"]},
                                "precision": {"weights": w, "compute": c, "kv_cache": kv}, "serving": serving})
    r = size_workload(spec=spec, accelerators=ACCS).to_dict()
    a = spec.model
    for cand in r["candidates"]["ranked"]:
        if not cand["meets_target"]:
            continue
        acc = BY_ID[cand["accelerator_id"]]
        tp, pp = cand["layout"]["tensor_parallel"], cand["layout"]["pipeline_parallel"]
        gpus = tp * pp
        rate = cand["sustained_rps_per_replica"]
        # FLOPs: 2 per active parameter per token, at least (attention only adds).
        flops_s = rate * (d["isl"] + d["osl"]) * 2.0 * a.active_params
        assert flops_s <= gpus * _peak_bound_tflops(acc, c) * 1e12 * 1.0001, cand
        # Bytes: every step reads each GPU's share of the dense weights at least once.
        step_s = cand["tpot_ms"] / 1e3
        dense = a.params if not a.is_moe else a.active_params
        weights_gpu = dense * weight_bytes_per_param(w) / tp
        assert weights_gpu / step_s <= acc.memory_bandwidth_gb_s * 1e9 * 1.0001, cand
        # Memory: the planned batch's KV fits in what the weights and workspace leave.
        assert cand["kv_bytes_per_gpu"] <= cand["kv_memory_left_bytes_per_gpu"] * 1.0001, cand
        assert cand["kv_memory_left_bytes_per_gpu"] + a.params * weight_bytes_per_param(w) / gpus <= acc.memory_gib * 2**30
