"""Spec rules that need the catalog, judged before anything is written (issue 24: FP8 training on a chip
without FP8 units is a field error, not a failed plan)."""

from __future__ import annotations


def check_training_chip(spec) -> None:
    """A training spec pinning an accelerator whose catalog row has no dense peak for the FP8/FP4 compute
    format: SpecValidationError on precision.compute (planner.engine.training_layout.check_precision_on_chip).
    An unknown or ambiguous accelerator is left to the sizing, which says why."""
    from django.utils import timezone

    from catalog.selectors import accelerator_specs
    from planner.engine.errors import SpecValidationError
    from planner.engine.resolve import resolve_accelerator
    from planner.engine.spec import parse_workload_spec
    from planner.engine.training_layout import LOW_BIT_TRAINING, check_precision_on_chip

    if not isinstance(spec, dict) or not isinstance(spec.get("hardware"), dict):
        return
    parsed = parse_workload_spec(spec)
    if parsed.training is None or not parsed.hardware.accelerator or parsed.precision.compute not in LOW_BIT_TRAINING:
        return
    specs = accelerator_specs(as_of=timezone.localdate())
    try:
        acc, _note = resolve_accelerator(parsed.hardware.accelerator, specs)
    except SpecValidationError:
        return
    check_precision_on_chip(parsed.precision.compute, acc, kind=parsed.kind)
