"""What a MoE training plan says of its own accuracy: the engine's error on the published MoE pre-training
runs it was not fitted on (planner/engine/data/training_published.json, the held-out MoE rows:
Megatron-Bridge and NeMo tables; docs/BENCHMARKS.md "Training: MoE pre-training rows").
`scripts/fit_training_efficiency.py --write-moe-errors` writes the figures after a change to the engine;
tests/unit/test_training_fit_errors.py recomputes them, so the file cannot go stale.

Error = predicted / published throughput - 1: above 0 the engine promises more than was measured, so a
plan's run time is optimistic by about that much.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from statistics import median

from catalog.domain.messages import Msg, figure

ERRORS_JSON = Path(__file__).resolve().parent / "data" / "training_fit_errors.json"
MIN_OWN_ROWS = 3  # a model's own runs are quoted from this many; fewer say more of the run than of the model


def figures(errors: list[float]) -> dict:
    return {"rows": len(errors), "median_abs": round(median(abs(e) for e in errors), 4),
            "median_signed": round(median(errors), 4), "min": round(min(errors), 4), "max": round(max(errors), 4)}


def moe_summary(errors_by_model: dict[str, list[float]]) -> dict:
    """``errors_by_model``: model preset id -> the errors of its held-out MoE rows."""
    every = [e for es in errors_by_model.values() for e in es]
    return {"all": figures(every) if every else None,
            "models": {m: figures(es) for m, es in sorted(errors_by_model.items()) if len(es) >= MIN_OWN_ROWS}}


def held_out_moe_errors(rows) -> dict[str, list[float]]:
    """training_reference.ThroughputRow list -> model preset id -> errors of its held-out MoE rows, as the
    engine predicts them (its constants and bases)."""
    out: dict[str, list[float]] = {}
    for r in rows:
        if r.arch.is_moe and r.role == "held_out" and r.use == "efficiency":
            out.setdefault(r.arch.preset_id, []).append(r.predicted() / r.observed - 1)
    return out


def write_moe_errors(errors_by_model: dict[str, list[float]]) -> None:
    ERRORS_JSON.write_text(json.dumps({
        "source": "planner/engine/data/training_published.json: the held-out MoE throughput rows",
        "command": ".venv/bin/python scripts/fit_training_efficiency.py --write-moe-errors",
        **moe_summary(errors_by_model),
    }, indent=1) + "\n", encoding="utf-8")
    moe_errors.cache_clear()


@lru_cache(maxsize=1)
def moe_errors() -> dict:
    if not ERRORS_JSON.exists():
        return {}
    return json.loads(ERRORS_JSON.read_text(encoding="utf-8"))


def _pct(x: float) -> float:
    return figure(round(x * 100))


OWN_RUNS_NOTE = ("the estimate was checked against {n} published pre-training runs of this model that it was not "
                 "fitted on: its throughput is {signed:+g} % against the published at the median ({lo:+g} to "
                 "{hi:+g} %; above 0 the run time is optimistic by about that much)")
ALL_RUNS_NOTE = ("MoE training: the estimate was checked against {n} published MoE pre-training runs it was not "
                 "fitted on (several models): its throughput is off by {abs:g} % at the median ({lo:+g} to {hi:+g} %)")
NOTE_TEMPLATES = frozenset({OWN_RUNS_NOTE, ALL_RUNS_NOTE})


def moe_accuracy_note(preset_id: str | None) -> Msg | None:
    """The note a MoE training plan carries: its model's own published runs where there are enough, else
    every MoE run's."""
    data = moe_errors()
    own = (data.get("models") or {}).get(preset_id or "")
    if own:
        return Msg(OWN_RUNS_NOTE,
                   n=own["rows"], signed=_pct(own["median_signed"]), lo=_pct(own["min"]), hi=_pct(own["max"]))
    every = data.get("all")
    if not every:
        return None
    return Msg(ALL_RUNS_NOTE,
               n=every["rows"], abs=_pct(every["median_abs"]), lo=_pct(every["min"]), hi=_pct(every["max"]))
