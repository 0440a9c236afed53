"""SizingResult: the engine's output. Every reported number is {"value", "unit", "explain"}."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from catalog.domain.messages import with_structured


def q(value, unit: str, explain: str) -> dict:
    """One reported quantity; non-finite numbers become None ("unknown")."""
    if isinstance(value, float):
        if not math.isfinite(value):
            value = None
        elif value.is_integer() and abs(value) < 2**53 and unit in ("bytes", "FLOP", "GPUs", "replicas", "sequences"):
            value = int(value)
    return {"value": value, "unit": unit, "explain": explain}


# The serving layout keys of a searched MoE variant (search_serving.serving_variants)
MECHANISM_KEYS = ("expert_parallel", "data_parallel_attention", "speculative")


def pools_of(layout: dict | None) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((prefill workers, TP), (decode workers, TP)) of a disaggregated layout (search_disagg.layout_of);
    None: aggregated replicas."""
    d = (layout or {}).get("disaggregated")
    if not d:
        return None
    return ((int(d["prefill"]["workers"]), int(d["prefill"]["tensor_parallel"])),
            (int(d["decode"]["workers"]), int(d["decode"]["tensor_parallel"])))


def candidate_id(row: dict) -> str:
    """The cost engine's id of a sizing candidate row: "<accelerator id> x<count>", and for a
    disaggregated layout its pools after it ("... x24 disagg P4xTP4 D1xTP8"), so both layouts of one
    accelerator and count are priced apart."""
    base = f"{row.get('accelerator_id')} x{row.get('count')}"
    pools = pools_of(row.get("layout"))
    if pools is None:
        return base
    (pw, pt), (dw, dt) = pools
    return f"{base} disagg P{pw}xTP{pt} D{dw}xTP{dt}"


@dataclass(frozen=True, kw_only=True)
class Configuration:
    """One candidate configuration: an accelerator, a GPU count and (optionally) its parallel layout.
    The plan's decision names one; the sizing then describes that configuration (its hardware,
    layout, memory, latency or run time) instead of its own fewest-GPU pick."""

    accelerator_id: str
    count: int
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    # the option's server shape (GPUs per bought server or per cloud instance); None: the catalog's maximum
    gpus_per_server: int | None = None
    as_instances: bool = False  # rented cloud instances of that many GPUs, not servers bought in sold shapes
    # a serving layout's MoE mechanisms (serving_candidates.mechanisms); None: any
    mechanisms: tuple[tuple[str, object], ...] | None = None
    # a disaggregated layout's pools (pools_of); None: aggregated replicas
    disaggregated: tuple[tuple[int, int], tuple[int, int]] | None = None

    @classmethod
    def of_candidate(cls, row: dict) -> Configuration:
        """From a sizing candidate row ({"accelerator_id", "count", "layout": {...}})."""
        lay = row.get("layout") or {}
        mech = tuple((k, lay[k]) for k in MECHANISM_KEYS if k in lay) or None
        return cls(accelerator_id=row["accelerator_id"], count=int(row["count"]),
                   tensor_parallel=lay.get("tensor_parallel"), pipeline_parallel=lay.get("pipeline_parallel"),
                   mechanisms=mech, disaggregated=pools_of(lay))

    def matches(self, accelerator_id: str, count: int, tp: int, pp: int, mechanisms: dict | None = None,
                disaggregated: tuple | None = None) -> bool:
        return (accelerator_id == self.accelerator_id and int(count) == self.count
                and self.disaggregated == disaggregated
                and (self.tensor_parallel is None or int(tp) == self.tensor_parallel)
                and (self.pipeline_parallel is None or int(pp) == self.pipeline_parallel)
                and (self.mechanisms is None or mechanisms is None
                     or all(mechanisms.get(k) == v for k, v in self.mechanisms)))


@dataclass(frozen=True, kw_only=True)
class SizingResult:
    engine_version: str
    kind: str
    gpu_required: bool
    model: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)
    compute: dict = field(default_factory=dict)
    serving: dict = field(default_factory=dict)
    rag: dict = field(default_factory=dict)
    candidates: dict = field(default_factory=dict)
    recommendation: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-ready; every engine text keeps its English string and gains an `<key>_i18n`
        sibling with its template and parameters (catalog.domain.messages.with_structured).
        Figures keep 7 significant digits and the ranked list its first RANKED_LISTED entries
        (with `ranked_total`): a stored plan stays small enough to load at once (issue 20)."""
        candidates = dict(self.candidates)
        if isinstance(candidates.get("ranked"), list | tuple):
            candidates["ranked_total"] = len(candidates["ranked"])
            candidates["ranked"] = list(candidates["ranked"])[:RANKED_LISTED]
        return with_structured({
            "engine_version": self.engine_version,
            "kind": self.kind,
            "gpu_required": self.gpu_required,
            "model": self.model,
            "memory": self.memory,
            "compute": self.compute,
            "serving": self.serving,
            "rag": self.rag,
            "candidates": candidates,
            "recommendation": self.recommendation,
            "warnings": list(self.warnings),
            "assumptions": list(self.assumptions),
        }, floats=_significant)


# The best configurations a stored plan lists, as many as the page shows (the count of all is kept).
RANKED_LISTED = 10
SIGNIFICANT_DIGITS = 7


def _significant(x: float) -> float:
    """A float at SIGNIFICANT_DIGITS (the models' own uncertainty is percents: 17 digits only make
    a plan heavier); 0, inf and nan as they are."""
    return float(f"{x:.{SIGNIFICANT_DIGITS}g}") if x and math.isfinite(x) else x
