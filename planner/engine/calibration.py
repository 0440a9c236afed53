"""A team's calibrations: measured efficiencies that replace the engine's presets.

The planner app (issue 12) builds a `Calibrations` from the team's active calibrations and passes
it to `size_workload(..., calibrations=...)`; the engines stay pure and never look anything up.
Each `Calibration` carries values under the engine's own constant names and a label the
explanations quote, e.g. "efficiency 0.43 from 3 runs on H100 SXM, vLLM 0.19, 2026-11-20".

Keys:
- serving: (accelerator slug, runtime, compute precision) -> values named as the serving model's
  efficiency constants (planner/engine/serving*: see `serving_constants()` there);
- training: accelerator slug -> {"mfu": ..., "goodput": ...} (either may be absent).
A version stores the calibrations it used (`to_data`), so recomputing it gives the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Calibration:
    label: str
    values: Mapping[str, float]

    def to_data(self) -> dict:
        return {"label": str(self.label), "values": dict(self.values)}


@dataclass(frozen=True)
class Calibrations:
    serving: Mapping[tuple[str, str, str], Calibration] = field(default_factory=lambda: MappingProxyType({}))
    training: Mapping[str, Calibration] = field(default_factory=lambda: MappingProxyType({}))

    def for_serving(self, accelerator: str, runtime: str, precision: str) -> Calibration | None:
        return self.serving.get((accelerator, runtime, precision))

    def for_training(self, accelerator: str) -> Calibration | None:
        return self.training.get(accelerator)

    def __bool__(self) -> bool:
        return bool(self.serving or self.training)

    def to_data(self) -> dict:
        return {"serving": [{"accelerator": a, "runtime": r, "precision": p, **c.to_data()}
                            for (a, r, p), c in sorted(self.serving.items())],
                "training": [{"accelerator": a, **c.to_data()} for a, c in sorted(self.training.items())]}

    @classmethod
    def from_data(cls, data: dict | None) -> Calibrations:
        data = data or {}
        serving = {(d["accelerator"], d["runtime"], d["precision"]): Calibration(d["label"], dict(d["values"]))
                   for d in data.get("serving", [])}
        training = {d["accelerator"]: Calibration(d["label"], dict(d["values"])) for d in data.get("training", [])}
        return cls(MappingProxyType(serving), MappingProxyType(training))


NO_CALIBRATIONS = Calibrations()
