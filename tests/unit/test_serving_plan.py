"""Serving plans (issue 10): load-driven replicas, exact pinned layouts, runtimes, precision on hardware,
calibrations and bad input."""

import math
from pathlib import Path

import pytest

from planner.engine import SpecValidationError, parse_workload_spec, size_workload
from planner.engine.calibration import Calibration, Calibrations
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.presets import preset_arch
from planner.engine.serving import evaluate_layout, serving_constants
from planner.engine.serving_constants import CONSTANT_NAMES, RUNTIME_VENDORS, RUNTIMES, compute_format

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
BY_ID = {a.id: a for a in ACCS}


def run(data, **kw):
    return size_workload(spec=parse_workload_spec(data), accelerators=ACCS, **kw).to_dict()


def errors_of(data) -> dict:
    with pytest.raises(SpecValidationError) as exc:
        run(data)
    return {e.field: str(e.message) for e in exc.value.errors}


LLAMA70 = {"kind": "inference", "model": {"preset": "llama-3.1-70b"},
           "serving": {"requests_per_second": 5, "input_tokens": 2000, "output_tokens": 400}}


# ------------------------------------------------------------------------------- the 70B example

def test_70b_at_5_rps_is_not_served_by_four_a100s():
    """docs/SIZING.md works this by hand: 5 x 2 x 70.6e9 x 2400 = 1.69 PFLOP/s > 4 x 312 TFLOP/s."""
    r = run({**LLAMA70, "serving": {**LLAMA70["serving"], "ttft_p95_ms": 2000, "tpot_p95_ms": 60},
             "hardware": {"accelerator": "nvidia-a100-sxm4-80gb", "count": 4, "tensor_parallel": 4}})
    assert r["recommendation"]["count"] == 4  # the pin is evaluated, never replaced
    assert r["recommendation"]["layout"] == {"tensor_parallel": 4, "pipeline_parallel": 1, "replicas": 1}
    assert r["serving"]["meets_targets"] is False
    assert any("does not" in w or "cannot sustain" in w for w in r["warnings"])
    assert not any(c["meets_target"] for c in r["candidates"]["ranked"])


def test_70b_plan_has_enough_compute_for_the_load():
    r = run({**LLAMA70, "hardware": {"accelerator": "nvidia-a100-sxm4-80gb"}})
    need_flops = 5 * 2 * 70.6e9 * 2400
    assert r["serving"]["meets_targets"] is True
    assert r["recommendation"]["count"] * 312e12 > need_flops
    assert r["recommendation"]["count"] >= 8


def test_prompt_heavy_traffic_needs_more_replicas():
    """The old model charged one prefill per batch; prefill work grows with every request's prompt."""
    def count(isl):
        return run({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                    "serving": {"requests_per_second": 20, "input_tokens": isl, "output_tokens": 100},
                    "hardware": {"accelerator": "nvidia-l4-24gb"}})["recommendation"]["count"]
    short, long = count(500), count(8000)
    assert long >= 4 * short


# --------------------------------------------------------------------------- exact-layout what-if

def test_pinned_layout_is_evaluated_exactly_and_reports_the_figures():
    r = run({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
             "serving": {"requests_per_second": 2, "concurrency": 8, "input_tokens": 1000, "output_tokens": 200,
                         "ttft_p95_ms": 2000, "tpot_p95_ms": 50},
             "hardware": {"accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "tensor_parallel": 2}})
    s = r["serving"]
    assert r["recommendation"]["count"] == 2 and r["recommendation"]["layout"]["tensor_parallel"] == 2
    for key in ("ttft_ms", "ttft_p95_ms", "tpot_p50_ms", "tpot_p95_ms", "output_tokens_per_s_per_gpu",
                "output_tokens_per_s_per_user", "max_rps_per_replica_meeting_targets"):
        assert s[key]["value"] > 0, key
    assert s["bottleneck"] in ("compute", "memory_bandwidth", "kv_capacity", "interconnect", "overhead")
    assert s["meets_targets"] is True
    assert s["ttft_p95_ms"]["value"] <= 2000 and s["tpot_p95_ms"]["value"] <= 50


def test_a_failing_pin_never_says_it_meets_the_targets():
    r = run({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
             "serving": {"requests_per_second": 200, "input_tokens": 2000, "output_tokens": 500,
                         "ttft_p95_ms": 500, "tpot_p95_ms": 30},
             "hardware": {"accelerator": "nvidia-l4-24gb", "count": 1}})
    assert r["recommendation"]["count"] == 1
    assert r["serving"]["meets_targets"] is False
    (w,) = [w for w in r["warnings"] if "pinned" in w]
    assert "What would" in w and "L4" in w


def test_pinned_accelerator_that_cannot_hold_the_model_within_the_count_is_a_field_error():
    errs = errors_of({"kind": "inference", "model": {"preset": "llama-3.1-405b"},
                      "hardware": {"accelerator": "nvidia-t4-16gb", "count": 1}})
    assert "hardware.accelerator" in errs
    assert "cannot hold" in errs["hardware.accelerator"] and "what would" in errs["hardware.accelerator"]


# ------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize(("patch", "field"), [
    ({"serving": {"runtime": "tgi"}}, "serving.runtime"),
    ({"hardware": {"tensor_parallel": 3}}, "hardware.tensor_parallel"),
    ({"hardware": {"count": 4, "tensor_parallel": 4, "pipeline_parallel": 2}}, "hardware.tensor_parallel"),
    ({"serving": {"concurrency": 0}}, "serving.concurrency"),
    ({"hardware": {"count": 6, "tensor_parallel": 4, "pipeline_parallel": 1}}, "hardware.count"),
])
def test_bad_serving_input_gets_field_errors(patch, field):
    data = {"kind": "inference", "model": {"preset": "llama-3.1-8b"}, **patch}
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec(data)
    assert field in {e.field for e in exc.value.errors}


def test_serving_layout_pins_are_refused_for_training():
    with pytest.raises(SpecValidationError) as exc:
        parse_workload_spec({"kind": "finetuning", "model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e7},
                             "hardware": {"tensor_parallel": 2}})
    assert "hardware.tensor_parallel" in {e.field for e in exc.value.errors}


# ------------------------------------------------------------------------------ runtimes, precision

def test_every_runtime_plans_and_hf_eager_needs_more_gpus_than_vllm():
    counts = {}
    for rt in RUNTIMES:
        if RUNTIME_VENDORS.get(rt, "NVIDIA") != "NVIDIA":  # ATOM runs on AMD only: test_atom_runs_on_amd_only
            continue
        r = run({"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                 "serving": {"requests_per_second": 5, "concurrency": 4, "runtime": rt},
                 "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"}})
        counts[rt] = r["recommendation"]["count"]
        assert r["serving"]["runtime"]
    assert counts["hf_transformers"] > counts["vllm"]


def test_atom_runs_on_amd_only():
    """ATOM (ROCm/AITER) plans on an AMD Instinct GPU and is a field error on an NVIDIA one."""
    spec = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
            "serving": {"requests_per_second": 5, "concurrency": 4, "runtime": "atom"}}
    r = run({**spec, "hardware": {"accelerator": "amd-mi300x-192gb"}})
    assert r["serving"]["runtime"] == "ATOM (AMD)"
    with pytest.raises(SpecValidationError) as exc:
        run({**spec, "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"}})
    assert {e.field for e in exc.value.errors} == {"serving.runtime"}


def test_tensorrt_llm_runs_on_nvidia_only():
    """TensorRT-LLM (CUDA, NVIDIA's TensorRT) is never planned on an AMD Instinct GPU: a whole-catalog
    search leaves AMD out, a pinned AMD GPU is a field error, before the catalog is read and after."""
    spec = {"kind": "inference", "model": {"preset": "deepseek-r1-0528"},
            "serving": {"requests_per_second": 5, "input_tokens": 2000, "output_tokens": 400, "runtime": "trtllm"}}
    r = run(spec)
    assert r["recommendation"]["accelerator_id"].startswith("nvidia-")
    assert all(c["accelerator_id"].startswith("nvidia-") for c in r["candidates"]["best_per_accelerator"])
    for pinned in ("amd-mi355x-288gb", "MI355X"):
        with pytest.raises(SpecValidationError) as exc:
            run({**spec, "hardware": {"accelerator": pinned}})
        assert {e.field for e in exc.value.errors} == {"serving.runtime"}


def test_precision_meets_hardware():
    a100, t4, h100, gb200 = (BY_ID[k] for k in ("nvidia-a100-sxm4-80gb", "nvidia-t4-16gb", "nvidia-h100-sxm5-80gb",
                                                "nvidia-gb200-186gb"))
    peak, fmt, note = compute_format(a100, weights="fp8", compute="fp8")
    assert (peak, fmt) == (312.0, "bf16") and "weight-only" in note  # no FP8 units on Ampere
    peak, fmt, note = compute_format(t4, weights="bf16", compute="bf16")
    assert fmt == "fp16" and "no bf16" in note
    assert compute_format(h100, weights="fp8", compute="fp8")[:2] == (1979.0, "fp8")
    assert compute_format(gb200, weights="fp4", compute="fp4")[:2] == (10000.0, "fp4")
    peak, fmt, note = compute_format(h100, weights="fp4", compute="fp4")
    assert fmt == "bf16" and "weight-only" in note  # Hopper has no FP4 units


def test_fp4_on_blackwell_is_faster_than_bf16():
    def tpot(w):
        r = evaluate_layout(arch=preset_arch("qwen3-32b"), accelerator=BY_ID["nvidia-gb200-186gb"], runtime="trtllm",
                            weights=w, compute=w, kv_cache="fp8", input_tokens=4000, output_tokens=1000, concurrency=64)
        return float(r["tpot_ms"])
    assert tpot("fp4") < tpot("bf16")


# ---------------------------------------------------------------------------------- calibrations

def test_serving_constants_are_named_and_a_calibration_replaces_them_with_its_label():
    h100 = BY_ID["nvidia-h100-sxm5-80gb"]
    preset = serving_constants(h100, "vllm", "bf16")
    assert set(CONSTANT_NAMES) <= set(preset)
    base = {"kind": "inference", "model": {"preset": "llama-3.1-8b"}, "serving": {"requests_per_second": 20},
            "hardware": {"accelerator": "nvidia-h100-sxm5-80gb"}}
    label = "efficiency 0.20 from 3 runs on H100 SXM, vLLM 0.12, 2026-11-20"
    cal = Calibrations(serving={("nvidia-h100-sxm5-80gb", "vllm", "bf16"): Calibration(
        label, {"prefill_efficiency": 0.20, "decode_bandwidth_efficiency": 0.30})})
    plain, slow = run(base), run(base, calibrations=cal)
    assert label in slow["serving"]["constants"]
    assert slow["serving"]["single_stream_tokens_per_s"]["value"] < plain["serving"]["single_stream_tokens_per_s"]["value"]
    assert slow["recommendation"]["count"] >= plain["recommendation"]["count"]


# -------------------------------------------------------------------------------------- the curve

def test_throughput_latency_curve_is_data_and_monotone():
    r = run({"kind": "inference", "model": {"preset": "llama-3.1-8b"}, "serving": {"requests_per_second": 10}})
    curves = r["candidates"]["curves"]
    assert curves and curves[0]["accelerator_id"] == r["recommendation"]["accelerator_id"]
    pts = curves[0]["points"]
    assert len(pts) >= 5
    tok = [p["output_tokens_per_s_per_gpu"] for p in pts]
    tpot = [p["tpot_p50_ms"] for p in pts]
    assert tok == sorted(tok) and tpot == sorted(tpot)
    assert all(math.isfinite(p["ttft_p95_ms"]) for p in pts)


# ------------------------------------------------------------------- fine-grained MoE uncertainty

def _moe_warning(r) -> list[str]:
    return [str(w) for w in r["warnings"] if "fine-grained MoE" in str(w)]


def test_fine_grained_moe_plans_say_their_capacity_is_an_upper_bound():
    """A fine-grained MoE plan says how far to trust it (issue 22, part 3): no team calibration and
    no measured MoE run of that engine on that chip generation -> the upper-bound warning."""
    spec = {"kind": "inference", "model": {"preset": "deepseek-v3"},
            "serving": {"requests_per_second": 1, "input_tokens": 1000, "output_tokens": 500, "runtime": "vllm"},
            "hardware": {"accelerator": "nvidia-a100-sxm4-80gb"}}
    r = run(spec)
    (warning,) = _moe_warning(r)
    assert "256 experts, 8 per token" in warning and "upper bound" in warning
    assert not _moe_warning(run(LLAMA70))
    assert not _moe_warning(run({**LLAMA70, "model": {"preset": "mixtral-8x7b"}}))
    parsed = parse_workload_spec(spec)
    key = (r["recommendation"]["accelerator_id"], parsed.serving.runtime, parsed.precision.compute)
    cal = Calibrations(serving={key: Calibration(label="team run", values={})})
    assert not _moe_warning(run(spec, calibrations=cal))


def test_fine_grained_moe_plans_quote_the_measured_error_of_their_engine_and_generation(monkeypatch):
    """Where the constants were fitted on MoE runs of that engine and generation (FITTED_IX), the plan
    quotes the replay's median error there instead of the upper-bound warning; where runs were measured
    but not fitted, it quotes the error and asks for headroom (planner/engine/data/serving_fit_errors.json)."""
    from planner.engine.serving_constants_ix import FITTED_IX
    from planner.engine.serving_fit_errors import group_errors

    # every (engine, generation) with InferenceX runs has a fitted entry since 2026-12-05 (vLLM Hopper: its MoE layer
    # time, on gpt-oss); the "measured, not fitted" branch is checked with vLLM Hopper's entry taken out
    assert ("sglang", "hopper") in FITTED_IX and ("vllm", "hopper") in FITTED_IX
    base = {"kind": "inference", "model": {"preset": "deepseek-v3"},
            "serving": {"requests_per_second": 1, "input_tokens": 1000, "output_tokens": 500},
            "hardware": {"accelerator": "nvidia-h200-sxm-141gb"}}
    fitted = _moe_warning(run({**base, "serving": {**base["serving"], "runtime": "sglang"}}))[0]
    err = group_errors()[("sglang", "hopper")]
    assert "were fitted on" in fitted and "upper bound" not in fitted
    assert f"{err['evaluated']} measured InferenceX runs" in fitted and f"TPOT {err['tpot_mdape'] * 100:.0f} %" in fitted
    vllm_fitted = _moe_warning(run({**base, "serving": {**base["serving"], "runtime": "vllm"}}))[0]
    assert "were fitted on" in vllm_fitted and "upper bound" not in vllm_fitted
    monkeypatch.delitem(FITTED_IX, ("vllm", "hopper"))
    measured = _moe_warning(run({**base, "serving": {**base["serving"], "runtime": "vllm"}}))[0]
    assert "not fitted on MoE runs" in measured and "keep headroom" in measured and "upper bound" not in measured


def test_a_moe_plan_quotes_its_own_models_measured_error_and_says_when_it_is_overrated():
    """Where the replay has this model's own runs on the engine and chip generation (at least
    MIN_OWN_RUNS), the plan quotes them, not the group's, which other models' runs make up; a model the
    engine overrates by more than OVERRATED in output tokens/s (DeepSeek-V4-Pro's compressed attention,
    not in the fitted constants) is told to treat its capacity as an upper bound."""
    from planner.engine.serving_fit_errors import MIN_OWN_RUNS, OVERRATED, model_errors

    v4 = model_errors()[("deepseek-v4-pro", "vllm", "blackwell")]
    assert v4["evaluated"] >= MIN_OWN_RUNS and v4["out_signed"] > OVERRATED
    spec = {"kind": "inference", "model": {"preset": "deepseek-v4-pro"},
            "serving": {"requests_per_second": 1, "input_tokens": 1000, "output_tokens": 500, "runtime": "vllm"},
            "hardware": {"accelerator": "nvidia-b200-sxm-180gb"}}
    (warning,) = _moe_warning(run(spec))
    assert f"on {v4['evaluated']} measured InferenceX runs of this model" in warning and "upper bound" in warning
    assert f"{v4['out_signed'] * 100:.0f} % more output tokens/s" in warning
    r1 = model_errors()[("deepseek-r1-0528", "sglang", "blackwell")]
    assert r1["out_signed"] < OVERRATED
    (warning,) = _moe_warning(run({**spec, "model": {"preset": "deepseek-r1-0528"},
                                   "serving": {**spec["serving"], "runtime": "sglang"}}))
    assert f"{r1['evaluated']} measured InferenceX runs" in warning and f"TPOT {r1['tpot_mdape'] * 100:.0f} %" in warning


def test_a_transformer_without_a_head_count_gets_layouts_instead_of_a_crash():
    """Found by schemathesis: layers and width known, heads not; no TP divisibility rule then."""
    import dataclasses

    from planner.engine import search

    arch = dataclasses.replace(preset_arch("llama-3.1-8b"), attention_heads=None)
    assert arch.is_transformer
    si = search.ServingInputs(arch=arch, weights="bf16", compute_precision="bf16", kv_precision="bf16",
                              context_length=4096, input_tokens=1000, output_tokens=200, concurrency=8,
                              requests_per_second=None, ttft_ms=None, tpot_ms=None, runtime="vllm",
                              tp_pin=None, pp_pin=None, count_pin=None)
    tp, pp = search.serving_layouts(si)
    assert len(tp) > 0 and set(tp.tolist()) >= {1, 8}
