"""What a MoE training plan says of its own accuracy (planner.engine.training_fit_errors, issue 24): the
engine's error on the held-out published MoE pre-training rows, quoted per model where it has its own runs."""

import json
from pathlib import Path

import pytest

from planner.engine import parse_workload_spec, size_workload, training_fit_errors
from planner.engine.catalog_csv import load_accelerators_csv
from planner.engine.training_reference import throughput_rows

ROOT = Path(__file__).resolve().parents[2]
ACCS = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")


def test_the_quoted_figures_are_the_engines_own_on_the_rows_today():
    """The file is what --write-moe-errors writes from the current engine: a change to the engine or the
    rows that moves a MoE figure fails here until the file is written again."""
    stored = json.loads(training_fit_errors.ERRORS_JSON.read_text(encoding="utf-8"))
    fresh = training_fit_errors.moe_summary(training_fit_errors.held_out_moe_errors(throughput_rows(ACCS)))
    assert stored["all"] == fresh["all"] and stored["models"] == fresh["models"]
    assert stored["all"]["rows"] >= 20  # the Megatron-Bridge and NeMo MoE rows


def test_figures_by_hand():
    f = training_fit_errors.figures([-0.2, 0.1, 0.5])
    assert f == {"rows": 3, "median_abs": 0.2, "median_signed": 0.1, "min": -0.2, "max": 0.5}
    s = training_fit_errors.moe_summary({"a": [0.1, 0.2, 0.3], "b": [1.0]})
    assert s["all"]["rows"] == 4 and list(s["models"]) == ["a"]  # one run says more of the run than the model


def _warnings(preset):
    spec = parse_workload_spec({"kind": "pretraining", "model": {"preset": preset}, "training": {"tokens": 1e10}})
    return [str(w) for w in size_workload(spec=spec, accelerators=ACCS).to_dict().get("warnings") or []]


@pytest.mark.parametrize("preset", ["gpt-oss-120b", "deepseek-v3"])
def test_a_moe_model_with_published_runs_quotes_its_own(preset):
    own = training_fit_errors.moe_errors()["models"][preset]
    notes = [w for w in _warnings(preset) if "published pre-training runs of this model" in w]
    assert len(notes) == 1
    assert f"{own['rows']} published" in notes[0] and f"{round(own['median_signed'] * 100):+d} %" in notes[0]


def test_another_moe_model_quotes_every_moe_run_and_a_dense_one_nothing():
    every = training_fit_errors.moe_errors()["all"]
    notes = [w for w in _warnings("mixtral-8x7b") if "published MoE pre-training runs" in w]
    assert len(notes) == 1 and f"{every['rows']} published" in notes[0]
    assert not [w for w in _warnings("llama-3.1-8b") if "published" in w and "pre-training runs" in w]


def test_the_decision_carries_the_note_beside_its_run_time():
    from planner.plan_decision import _accuracy

    note = training_fit_errors.moe_accuracy_note("gpt-oss-120b")
    sizing = {"warnings": ["another warning", note]}
    assert _accuracy(sizing, "pretraining") is note
    assert _accuracy(sizing, "inference") is None  # a service states latencies, not a run time
    assert _accuracy({"warnings": ["another warning"]}, "pretraining") is None
