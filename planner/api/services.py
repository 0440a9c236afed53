"""API-specific writes and helpers on top of planner.services / planner.selectors:
validation into field-path errors, idempotent plan creation, exclusive recompute, diffs."""

from __future__ import annotations

import hashlib
import json

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.utils.translation import gettext as _

from planner.choices import VersionStatus
from planner.model_apis import (  # noqa: F401 (re-exported)
    check_model_api,
    priced_model_apis,
    serving_hours_per_day,
)
from planner.models import IdempotencyKey, Plan, PlanVersion, Workload
from planner.services import PlannerError, plan_create, plan_recompute, workload_create
from planner.training_checks import check_training_chip

from .errors import Conflict, FieldErrors, engine_errors

MAX_CHANGES = 2000  # a diff longer than this is cut (and says so)


# --- validation ------------------------------------------------------------------------


def spec_validate(*, data: dict, prefix: str = "spec") -> dict:
    """Validate a WorkloadSpec with the sizing engine's parser; errors carry `prefix.` paths."""
    from planner.engine.errors import SpecValidationError
    from planner.engine.spec import parse_workload_spec

    try:
        parse_workload_spec(data)
        check_model_api(data)
        check_training_chip(data)
    except SpecValidationError as exc:
        raise engine_errors(exc, prefix=prefix) from None
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        # The parser reports field errors itself; this catches a value it could not even read.
        raise FieldErrors([(prefix, _("invalid value: %(error)s") % {"error": exc})]) from None
    return data


def costs_validate(*, data: dict, prefix: str = "costs", spec: dict | None = None) -> dict:
    """Validate cost options with the cost engine's parser; errors carry `prefix.` paths.
    With the (already validated) `spec`, also the rules that join the two (a service at
    utilisation 0)."""
    from costs.adapters import parse_options
    from costs.engine.errors import CostValidationError
    from costs.engine.options import check_options_for_service

    try:
        options = parse_options(data, prefix=prefix)  # its paths already start with `prefix`
        check_options_for_service(options, serving_hours_per_day=serving_hours_per_day(spec), prefix=prefix)
    except CostValidationError as exc:
        raise engine_errors(exc) from None
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        raise FieldErrors([(prefix, _("invalid value: %(error)s") % {"error": exc})]) from None
    if "country" in data:
        known = vat_countries()
        if known and options.country not in known:
            # the costing needs the country's VAT rate; without one the version would only fail later
            raise FieldErrors([(f"{prefix}.country", _("no VAT rate for %(country)s in the catalog; known: %(known)s")
                                % {"country": options.country, "known": ", ".join(known)})])
    return data


def vat_countries() -> list[str]:
    """Countries whose VAT rate the catalog holds (the costing needs it); the schema lists them."""
    from catalog.models import VatRate

    return list(VatRate.objects.values_list("country", flat=True).distinct().order_by("country"))


# --- workloads -------------------------------------------------------------------------


def workload_update(*, workload: Workload, name: str | None = None, spec: dict | None = None) -> Workload:
    """Rename and/or replace the spec. Existing plan versions keep the spec they froze."""
    fields = ["updated_at"]
    if name is not None:
        workload.name = name
        fields.append("name")
    if spec is not None:
        workload.spec = spec
        workload.kind = spec["kind"]
        fields += ["spec", "kind"]
    workload.save(update_fields=fields)
    return workload


def workload_delete(*, workload: Workload) -> None:
    try:
        with transaction.atomic():
            workload.delete()
    except ProtectedError:
        raise Conflict(_("The workload has plans; delete or keep them first.")) from None


# --- plans -----------------------------------------------------------------------------


def request_hash(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def plan_create_api(*, user, team, workload: Workload | None, spec: dict | None, name: str, costs: dict,
                    idempotency_key: str | None, body_hash: str) -> tuple[Plan, bool]:
    """Create a plan (and its workload when given inline) with its first version queued.

    With an Idempotency-Key the same key and body return the same plan: (plan, False).
    The same key with another body is a 409. Returns (plan, created).
    """
    if idempotency_key:
        seen = _idempotent_plan(user=user, key=idempotency_key, body_hash=body_hash)
        if seen is not None:
            return seen, False
    try:
        with transaction.atomic():
            if workload is None:
                # spec.name is at most 200 characters (parse_workload_spec), like the column.
                workload = workload_create(team=team, name=name or spec.get("name") or "workload", spec=spec,
                                           user=user)
            plan = plan_create(team=team, workload=workload, options=costs, user=user, name=name)
            if idempotency_key:
                IdempotencyKey.objects.create(user=user, key=idempotency_key, request_hash=body_hash, plan=plan)
    except IntegrityError:
        # A concurrent request with the same key won the race: answer with its plan.
        seen = _idempotent_plan(user=user, key=idempotency_key, body_hash=body_hash) if idempotency_key else None
        if seen is None:
            raise
        return seen, False
    except PlannerError as exc:
        raise FieldErrors([("workload", str(exc))]) from None
    return plan, True


def _idempotent_plan(*, user, key: str, body_hash: str) -> Plan | None:
    record = IdempotencyKey.objects.select_related("plan").filter(user=user, key=key).first()
    if record is None:
        return None
    if record.request_hash != body_hash:
        raise Conflict(_("This Idempotency-Key was already used with a different request body."))
    return record.plan


def plan_recompute_exclusive(*, plan: Plan, user, note: str = "") -> PlanVersion:
    """A new version, unless one is already pending or running (409)."""
    with transaction.atomic():
        Plan.objects.select_for_update().filter(pk=plan.pk).first()
        busy = plan.versions.filter(status__in=(VersionStatus.PENDING, VersionStatus.RUNNING)).order_by("-number")
        current = busy.values_list("number", flat=True).first()
        if current is not None:
            raise Conflict(_("Version %(number)s of this plan is still being computed; wait for it to finish.")
                           % {"number": current})
        if note:
            return plan_recompute(plan=plan, user=user, note=note)
        return plan_recompute(plan=plan, user=user)


# --- diff ------------------------------------------------------------------------------


def json_diff(before, after, path: str = "") -> list[dict]:
    """Leaf-level changes between two JSON documents as [{path, before, after}]."""
    out: list[dict] = []
    _diff(before, after, path, out)
    return out


def _diff(a, b, path: str, out: list[dict]) -> None:
    if len(out) >= MAX_CHANGES:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                out.append({"path": sub, "before": None, "after": b[key]})
            elif key not in b:
                out.append({"path": sub, "before": a[key], "after": None})
            else:
                _diff(a[key], b[key], sub, out)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}.{i}" if path else str(i), out)
        return
    if a != b or type(a) is not type(b):
        out.append({"path": path, "before": a, "after": b})
