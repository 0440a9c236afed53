"""Every 2026 catalog model (issue 22) sizes for serving on every catalog GPU without a crash.

A GPU whose memory can hold the fp8 weights within the search's reach (8-way tensor x 8-way
pipeline parallel) and that has a published tensor peak must get a plan; any other GPU may be
refused, but only with a reason (a field error naming hardware.accelerator, or a warning).
Kept fast: one short serving workload per (model, GPU), each GPU sized alone (no alternatives
searched): about 15 s of CPU for the whole sweep (wall time grows with the machine's load).
"""

from pathlib import Path

import pytest

from planner.engine import SpecValidationError, parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.precision import peak_tflops
from planner.engine.presets import preset_arch

ROOT = Path(__file__).resolve().parents[2]
ACCELERATORS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")

MODELS = ["gpt-oss-120b", "gpt-oss-20b", "deepseek-r1-0528", "qwen3.5-397b-a17b", "kimi-k2.5", "glm-5",
          "glm-5.1", "minimax-m2.5", "deepseek-v4-pro"]
MAX_GPUS = 64  # the search's reach: up to 8-way tensor x 8-way pipeline parallelism
FP8_BYTES = 1.0
GIB = 1024**3


def _spec(model: str, accelerator: str):
    return parse_workload_spec({
        "kind": "inference", "model": {"preset": model}, "precision": {"weights": "fp8"},
        "serving": {"input_tokens": 1000, "output_tokens": 200, "requests_per_second": 1},
        "hardware": {"accelerator": accelerator},
    })


def _can_hold(model: str, acc) -> bool:
    """Weights alone fit in 90 % of MAX_GPUS GPUs' memory (a lower bound on what the search needs)."""
    return preset_arch(model).params * FP8_BYTES <= 0.9 * MAX_GPUS * acc.memory_gib * GIB


def _has_peak(acc, spec) -> bool:
    return peak_tflops(acc, spec.precision.compute)[0] is not None


@pytest.mark.parametrize("model", MODELS)
def test_model_plans_on_every_gpu_that_can_hold_it(model):
    planned, refused = [], []
    for acc in ACCELERATORS:
        spec = _spec(model, acc.id)
        try:
            result = size_workload(spec=spec, accelerators=[acc])  # alone: no alternatives searched
        except SpecValidationError as exc:  # a refusal must say which field and why
            assert exc.errors and all(e.field.startswith("hardware") and str(e.message) for e in exc.errors), exc.errors
            refused.append(acc.id)
            continue
        if result.recommendation is None:
            assert result.warnings, f"{model} on {acc.id}: no plan and no reason"
            refused.append(acc.id)
            # the holdable GPUs with a tensor peak must not land here
            assert not (_can_hold(model, acc) and _has_peak(acc, spec)), (model, acc.id, [str(w) for w in result.warnings])
        else:
            planned.append(acc.id)
    assert planned, f"{model} planned on no GPU at all"
