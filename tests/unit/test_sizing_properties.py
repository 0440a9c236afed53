"""Property tests (hypothesis): monotonic, finite and non-negative results for any valid input."""

import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine import parse_workload_spec, size_workload
from planner.engine.architecture import ModelArch, count_params
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.memory import training_model_state_bytes
from planner.engine.precision import weight_bytes_per_param

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

archs = st.fixed_dictionaries({
    "layers": st.integers(1, 96),
    "heads_kv": st.sampled_from([(8, 8), (16, 4), (32, 8), (64, 8), (12, 12)]),
    "head_dim": st.sampled_from([64, 128]),
    "ffn_mult": st.integers(2, 6),
    "vocab_size": st.integers(1000, 200_000),
    "gated_ffn": st.booleans(),
})


def to_arch(d) -> dict:
    heads, kv = d["heads_kv"]
    hidden = heads * d["head_dim"]
    return {"layers": d["layers"], "hidden_size": hidden, "attention_heads": heads, "kv_heads": kv,
            "ffn_hidden_size": hidden * d["ffn_mult"], "vocab_size": d["vocab_size"], "gated_ffn": d["gated_ffn"]}


def all_numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from all_numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from all_numbers(v)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield obj


@SETTINGS
@given(archs, st.integers(1, 48))
def test_more_layers_never_means_fewer_parameters_or_less_memory(d, extra):
    small = to_arch(d)
    big = {**small, "layers": small["layers"] + extra}
    spec = lambda a: parse_workload_spec({"kind": "inference", "model": {"architecture": a},  # noqa: E731
                                          "serving": {"input_tokens": 256, "output_tokens": 64},
                                          "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"}})
    s, b = spec(small), spec(big)
    assert b.model.params > s.model.params
    rs = size_workload(spec=s, accelerators=ACCS).to_dict()
    rb = size_workload(spec=b, accelerators=ACCS).to_dict()
    assert rb["model"]["weight_bytes"]["value"] > rs["model"]["weight_bytes"]["value"]
    assert rb["model"]["kv_cache_bytes_per_token"]["value"] >= rs["model"]["kv_cache_bytes_per_token"]["value"]


@given(st.integers(1, 10**12))
def test_int4_below_int8_below_bf16_weights(params):
    b = [params * weight_bytes_per_param(p) for p in ("int4", "int8", "bf16")]
    assert b[0] < b[1] < b[2]


@given(st.floats(1e6, 1e12), st.integers(1, 511))
def test_zero3_per_gpu_model_states_shrink_as_data_parallelism_grows(params, dp):
    def states(n_dp):
        w, g, o = training_model_state_bytes(params_gpu=params, trainable_gpu=params, frozen_weight_bytes_pp=2,
                                             trainable_weight_bytes_pp=2, grad_bytes_pp=2, optimizer_bytes_pp=12,
                                             zero_stage=3, dp=n_dp)
        return float(w + g + o)
    assert states(dp + 1) < states(dp)


@SETTINGS
@given(st.integers(1, 512), st.integers(1, 512), st.floats(0.1, 0.7))
def test_more_gpus_never_raise_wall_clock_at_the_same_efficiency(c1, c2, mfu):
    lo, hi = sorted((c1, c2))

    def wall(count):
        spec = parse_workload_spec({"kind": "pretraining", "model": {"preset": "llama-3.2-1b"},
                                    "training": {"tokens": 1e10, "global_batch_tokens": 4 * 1024 * 1024},
                                    "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": count, "mfu": mfu}})
        return size_workload(spec=spec, accelerators=ACCS).to_dict()["compute"]["wall_clock_hours"]["value"]
    assert wall(hi) <= wall(lo) * (1 + 1e-12)


kinds = st.sampled_from(["pretraining", "finetuning", "inference", "rag", "external_api"])


@SETTINGS
@given(kinds, archs, st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"]),
       st.integers(16, 4096), st.integers(1, 512), st.floats(0, 200), st.sampled_from(["full", "lora", "qlora"]))
def test_outputs_are_finite_non_negative_and_json(kind, d, prec, inp, out, rps, method):
    data = {"kind": kind, "model": {"architecture": to_arch(d)}}
    if kind in ("pretraining", "finetuning"):
        method = "full" if kind == "pretraining" else method
        weights = "int4" if method == "qlora" else ("bf16" if prec in ("int8", "int4") else prec)
        data["precision"] = {"weights": weights, "compute": "bf16"}
        data["training"] = {"tokens": 1e9, "sequence_length": 512, "method": method}
    else:
        data["precision"] = {"weights": prec, "compute": prec, "kv_cache": prec}
        data["serving"] = {"input_tokens": inp, "output_tokens": out, "requests_per_second": rps}
    if kind == "rag":
        data["rag"] = {"documents": 1000}
    if kind == "external_api":
        del data["model"]
    result = size_workload(spec=parse_workload_spec(data), accelerators=ACCS).to_dict()
    json.dumps(result, allow_nan=False)
    for n in all_numbers(result):
        assert math.isfinite(n) and n >= 0


def test_count_params_grows_with_hidden_size():
    base = dict(name="x", params=0, active_params=0, layers=4, attention_heads=8, kv_heads=8, head_dim=64,
                ffn_hidden_size=2048, vocab_size=1000)
    assert count_params(ModelArch(hidden_size=1024, **base))[0] > count_params(ModelArch(hidden_size=512, **base))[0]
