"""Stateless estimate: size and cost a validated spec against today's catalog; nothing saved.

The same computation as a plan version (planner.services.compute_from_inputs) on the
snapshots a new version would freeze right now, cached per catalog revision (catalog.revision):
a catalog edit shows in the next estimate.
"""

from __future__ import annotations

import logging

from django.utils import timezone
from django.utils.translation import gettext as _

from planner.choices import VersionStatus
from planner.services import compute_from_inputs

from .errors import FieldErrors

logger = logging.getLogger(__name__)


def _snapshots(as_of) -> tuple[dict, dict]:
    # Exactly what a new plan version would freeze (prices, rates and the ranked accelerators),
    # cached per catalog revision by plan_snapshots: a price written is in the next estimate.
    from planner.services import plan_snapshots as version_snapshots

    return version_snapshots(as_of=as_of)


def estimate(*, spec: dict, costs: dict, calibrations: dict | None = None) -> dict:
    as_of = timezone.localdate()
    prices, rates = _snapshots(as_of)
    try:
        outcome = compute_from_inputs(inputs={"spec": spec, "costs": costs}, price_snapshot=prices,
                                      rate_snapshot=rates, calibrations=calibrations)
    except (ArithmeticError, OverflowError, ValueError, LookupError) as exc:
        # Valid-looking input the engines cannot compute (e.g. absurd magnitudes): a 400, not a 500.
        logger.warning("estimate could not be computed: %r", exc)
        reason = (_("its numbers are too large to compute with") if isinstance(exc, ArithmeticError | OverflowError)
                  else str(exc))
        raise FieldErrors([(None, _("The workload could not be computed: %(error)s") % {"error": reason})]) from None
    if outcome.status != VersionStatus.DONE:
        raise FieldErrors([(None, outcome.error)])
    from planner.i18n import for_api

    return {"as_of": as_of, "engine_version": outcome.engine_version, **for_api(outcome.result)}
