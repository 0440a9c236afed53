"""A run's total and its steady step are one model (issue 24, h/train6): whole-run GPU-hours = tokens x the
step's GPU-seconds per token / goodput, goodput applied once, the step the same function the per-step
(throughput) rows are predicted with. docs/BENCHMARKS.md "Training: one model for the total and the step"."""

from pathlib import Path

import pytest

from planner.engine import compute, parse_workload_spec, size_workload, training_goodput
from planner.engine import training_reference as ref
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.training_reference import run_goodput, whole_run_spec

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
ROWS = {r["id"]: r for r in ref.load_rows()}
WHOLE = sorted(k for k, r in ROWS.items() if r["kind"] == "whole_run")
REL = 1e-6  # float tolerance: both sides are the same arithmetic in another order


def _compute(spec):
    return size_workload(spec=parse_workload_spec(spec), accelerators=ACCS).to_dict()["compute"]


@pytest.mark.parametrize("row_id", WHOLE)
def test_total_is_tokens_times_step_seconds_per_token_over_goodput(row_id):
    """Every whole run: the total equals the steps alone (goodput 1, same layout search) / the goodput used."""
    row = ROWS[row_id]
    out, steps = _compute(whole_run_spec(row)), _compute(whole_run_spec(row, goodput=1.0))
    tokens = row["observed"]["tokens"]
    gpu_s_per_token = steps["gpu_hours"]["value"] * 3600.0 / tokens
    good = out["goodput"]["value"]
    assert out["gpu_hours"]["value"] == pytest.approx(tokens * gpu_s_per_token / 3600.0 / good, rel=1e-3)  # goodput rounded to 4 digits
    # and the plan's own per-GPU throughput is the same step
    assert out["tokens_per_second_per_gpu"]["value"] == pytest.approx(1.0 / gpu_s_per_token, rel=REL)


def test_llama3_total_is_the_held_out_steady_step_over_its_published_goodput():
    """Llama 3 405B: the whole run's GPU-hours = 15.6T tokens / the tokens/s per GPU the model predicts for the
    steady 16,384-GPU row of Table 4 (same layout: TP8 PP16 VP4, 16 micro-batches, no recomputation) / 0.90,
    the paper's effective training time (sec. 3.3.4), applied once."""
    whole = ROWS["llama3_405b_gpu_hours"]
    steady = next(r for r in ref.throughput_rows(ACCS) if r.id == "llama3_405b_16k_gpus")
    raw = ROWS["llama3_405b_16k_gpus"]
    a = ref.arch_of(raw)
    published_tps = ref.tokens_per_s_per_gpu(raw["observed"], a, peak=steady.peak_tflops,
                                             x=compute.attention_ratio(a, seq=raw["sequence_length"]))
    step_tps = published_tps * steady.predicted() / steady.observed  # same executed FLOPs per token: tps ~ efficiency
    out = _compute(whole_run_spec(whole))
    tokens = whole["observed"]["tokens"]
    assert out["goodput"]["value"] == pytest.approx(0.90)
    assert out["gpu_hours"]["value"] == pytest.approx(tokens / step_tps / 3600.0 / 0.90, rel=1e-5)
    # the step is 15.8 % slower than Table 4's 400 TFLOP/s; the total then can only be 1/(1 - 0.158) x 0.927/0.90 off
    step_error = steady.predicted() / steady.observed - 1
    assert step_error == pytest.approx(-0.158, abs=0.01)
    assert out["gpu_hours"]["value"] / whole["observed"]["gpu_hours"] - 1 == pytest.approx(0.224, abs=0.01)


def test_a_published_effective_training_time_is_applied_once():
    """The double count this would have caught: Llama 3's 'higher than 90% effective training time' (useful
    training over elapsed, every loss included) set the interruption term to 0.90 at 16,384 GPUs, and the
    default then multiplied it by GOODPUT_BASE (the other runs' scale-free losses): 0.72 for the run the 0.90
    was read from, whose published GPU-hours against its steady 400 TFLOP/s say 0.927."""
    row = ROWS["llama3_405b_gpu_hours"]
    assert run_goodput(row) == pytest.approx(float(training_goodput.interruption_goodput(16384)))
    out = _compute(whole_run_spec(row))
    assert out["goodput"]["value"] == pytest.approx(run_goodput(row))
    assert out["goodput"]["value"] > float(training_goodput.default_goodput(16384)) + 0.1  # not 0.80 x 0.90
    # runs that publish no effective training time keep the default by GPU count
    for rid in WHOLE:
        if run_goodput(ROWS[rid]) is None:
            c = _compute(whole_run_spec(ROWS[rid]))
            n = size_workload(spec=parse_workload_spec(whole_run_spec(ROWS[rid])), accelerators=ACCS).to_dict()[
                "recommendation"]["count"]
            assert c["goodput"]["value"] == pytest.approx(float(training_goodput.default_goodput(n)), abs=1e-4)


@pytest.mark.parametrize("good", [0.3, 0.72, 0.9, 1.0])
def test_a_given_goodput_divides_the_steps_once(good):
    """training.goodput g: GPU-hours x g = the steps' GPU-hours, whatever the GPU count (no default on top)."""
    row = ROWS["llama3_405b_gpu_hours"]
    steps = _compute(whole_run_spec(row, goodput=1.0))["gpu_hours"]["value"]
    assert _compute(whole_run_spec(row, goodput=good))["gpu_hours"]["value"] * good == pytest.approx(steps, rel=REL)
