"""Model APIs the catalog prices, as the form, the API and the cost options name them, and the
serving hours a day that token volumes and utilisation follow. Used by both the web form and
the API (below both)."""

from __future__ import annotations

from django.utils.translation import gettext as _


def priced_model_apis() -> list[tuple[str, str]]:
    """The model APIs priced in the catalog today: ("provider/model", "provider model") pairs."""
    from django.db.models import Q
    from django.utils import timezone

    from costs.models import ApiTokenPrice

    today = timezone.localdate()
    rows = (ApiTokenPrice.objects.filter(valid_from__lte=today)
            .filter(Q(valid_to__isnull=True) | Q(valid_to__gt=today))
            .values_list("provider", "model").distinct().order_by("provider", "model"))
    return [(f"{p}/{m}", f"{p} {m}") for p, m in rows]


def check_model_api(spec) -> None:
    """serving.model_api names model APIs the catalog prices (issue 20, 8.): an unknown one is a field
    error that lists what is priced (raises SpecValidationError), before anything is written."""
    from planner.engine.errors import FieldError, SpecValidationError

    named = ((spec or {}).get("serving") or {}).get("model_api") if isinstance(spec, dict) else None
    if not named:
        return
    named = [named] if isinstance(named, str) else [n for n in named if isinstance(n, str)]
    priced = [key for key, _label in priced_model_apis()]
    known = {k.lower() for k in priced}
    unknown = [n.strip() for n in named if n.strip().lower() not in known]
    if unknown:
        raise SpecValidationError([FieldError(field="serving.model_api", message=_(
            "model API %(unknown)s is not priced in the catalog; priced: %(priced)s") % {
                "unknown": ", ".join(unknown), "priced": ", ".join(priced) or _("none")})])


def serving_hours_per_day(spec: dict | None) -> float | None:
    """Hours a day a served workload runs (None when the spec has no serving part)."""
    serving = (spec or {}).get("serving") if isinstance(spec, dict) else None
    if (spec or {}).get("kind") not in ("inference", "rag") or not isinstance(serving, dict):
        return None
    hours = serving.get("hours_per_day", 24)
    return float(hours) if isinstance(hours, (int, float)) and not isinstance(hours, bool) else None
