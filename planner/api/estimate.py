"""Stateless estimate: size and cost a validated spec against today's catalog; nothing saved.

The same computation as a plan version (planner.services.compute_from_inputs) on the
snapshots a new version would freeze right now.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from planner.choices import VersionStatus
from planner.services import compute_from_inputs

from .errors import FieldErrors

logger = logging.getLogger(__name__)


def estimate(*, spec: dict, costs: dict) -> dict:
    from catalog.selectors import price_snapshot
    from costs.selectors import rate_card_snapshot

    as_of = timezone.localdate()
    try:
        outcome = compute_from_inputs(
            inputs={"spec": spec, "costs": costs},
            price_snapshot=price_snapshot(as_of=as_of),
            rate_snapshot=rate_card_snapshot(as_of=as_of),
        )
    except (ArithmeticError, OverflowError, ValueError, LookupError) as exc:
        # Valid-looking input the engines cannot compute (e.g. absurd magnitudes): a 400, not a 500.
        logger.warning("estimate could not be computed: %s", exc)
        raise FieldErrors([(None, f"The workload could not be computed: {exc}")]) from None
    if outcome.status != VersionStatus.DONE:
        raise FieldErrors([(None, outcome.error)])
    return {"as_of": as_of, "engine_version": outcome.engine_version, **outcome.result}
