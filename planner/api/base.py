"""The API's common parts: the base view, paging, team-scoped lookups and the representations of
workloads, plans, versions and share links that every view module renders."""

from __future__ import annotations

from django.db import connection
from django.db.models import OuterRef, Subquery
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from config.pagination import StrictPageNumberPagination
from planner.choices import FINISHED_STATUSES, VersionStatus
from planner.i18n import for_api
from planner.models import Membership, Plan, PlanVersion, ShareLink, Team, Workload
from planner.selectors import can_edit, teams_for_user

from .errors import FieldErrors, FieldNotFound
from .exports import EXPORT_FORMATS

ID_PARAM = {"min_value": 1, "max_value": 2**63 - 1}
MAX_KEY = 255
VERSION_LIGHT = ("result", "option_catalog", "price_snapshot", "rate_snapshot", "inputs")


class Pagination(StrictPageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request):
        """`page_size` must be 1-200 when given (DRF would silently ignore a bad one, so the
        schema's integer 1-200 would not be what the code accepts)."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            value = int(raw)
        except ValueError:
            raise FieldErrors([("page_size", _("Must be an integer."))]) from None
        if not 1 <= value <= self.max_page_size:
            raise FieldErrors([("page_size", _("Must be between 1 and %(max)s.") % {"max": self.max_page_size})])
        return value


PAGE_PARAMS = [
    OpenApiParameter("page", int, description="Page number (from 1)"),
    OpenApiParameter("page_size", int, description="Items per page (at most 200)"),
]


class ApiView(APIView):
    permission_classes = [IsAuthenticated]


def _int_query(request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if raw == "":  # present but empty is not "no filter": the schema says integer
        raise FieldErrors([(name, _("May not be empty."))])
    try:
        value = int(raw)
    except ValueError:
        raise FieldErrors([(name, _("Must be an integer."))]) from None
    if not 1 <= value <= 2**63 - 1:
        raise FieldErrors([(name, _("Out of range."))])
    return value


def _require_edit(user, team_id: int) -> None:
    if not can_edit(user=user, team_id=team_id):
        raise PermissionDenied(_("Your role in this team is read-only."))


def _editable_team(user, team_id: int, field: str = "team") -> Team:
    """A team the user may write to; unknown and foreign teams read the same (no 403 leak): a
    404 naming the field, as for any id that points at nothing of yours."""
    team = teams_for_user(user=user).filter(pk=team_id).first()
    if team is None:
        raise FieldNotFound([(field, _("No such team among yours."))])
    _require_edit(user, team.pk)
    return team


def _paginate(view, request, items, serialize):
    paginator = Pagination()
    page = paginator.paginate_queryset(items, request, view=view)
    return paginator.get_paginated_response([serialize(x) for x in page])


# --- urls ------------------------------------------------------------------------------


def version_url(plan_id: int, number: int) -> str:
    return reverse("api:version-detail", kwargs={"plan_id": plan_id, "number": number})


def status_url(plan_id: int, number: int) -> str:
    return reverse("api:version-status", kwargs={"plan_id": plan_id, "number": number})


# --- representations -------------------------------------------------------------------


def workload_data(w: Workload) -> dict:
    return {
        "id": w.id, "team": w.team_id, "name": w.name, "kind": w.kind, "spec": w.spec,
        "created_at": w.created_at, "updated_at": w.updated_at,
        "url": reverse("api:workload-detail", kwargs={"pk": w.id}),
    }


def plan_data(p: Plan) -> dict:
    return {
        "id": p.id, "team": p.team_id, "workload": p.workload_id, "name": p.name, "costs": p.cost_options,
        "created_at": p.created_at,
        "latest_version": getattr(p, "latest_number", None), "latest_status": getattr(p, "latest_status", None),
        "url": reverse("api:plan-detail", kwargs={"pk": p.id}),
        "versions_url": reverse("api:version-list", kwargs={"plan_id": p.id}),
    }


def version_summary(v: PlanVersion, plan_id: int | None = None) -> dict:
    plan_id = plan_id or v.plan_id
    return {
        "number": v.number, "status": v.status, "note": v.note, "as_of": v.as_of,
        "engine_version": v.engine_version, "created_at": v.created_at, "finished_at": v.finished_at,
        "url": version_url(plan_id, v.number), "status_url": status_url(plan_id, v.number),
    }


def version_status(v: PlanVersion) -> dict:
    return {
        "number": v.number, "status": v.status, "finished": v.status in FINISHED_STATUSES, "error": v.error,
        "attempts": v.attempts, "created_at": v.created_at, "started_at": v.started_at,
        "finished_at": v.finished_at, "url": version_url(v.plan_id, v.number),
    }


def version_data(v: PlanVersion, *, exports_base: str | None = None) -> dict:
    data = version_summary(v)
    exports, options_url = {}, None
    if v.status == VersionStatus.DONE:
        base = exports_base or version_url(v.plan_id, v.number)
        exports = {fmt: f"{base}export/{fmt}/" for fmt in EXPORT_FORMATS}
        options_url = f"{base}options/"
    data.update({"plan": v.plan_id, "error": v.error, "inputs": v.inputs, "calibrations": v.calibrations,
                 "result": for_api(v.result), "exports": exports, "options_url": options_url})
    return data


def version_options_data(v: PlanVersion) -> dict:
    """Every priced and skipped option of a done version and every price it used with a composed price's parts
    (the engines' whole lists, result_parts.merged)."""
    costs = (for_api(v.full_result) or {}).get("costs") or {}
    options = costs.get("options") or []
    return {"plan": v.plan_id, "number": v.number, "options_listed": len(options), "options": options,
            "skipped": costs.get("skipped") or [], "prices": (costs.get("freshness") or {}).get("prices") or []}


def share_link_data(link: ShareLink) -> dict:
    now = timezone.now()
    active = link.revoked_at is None and (link.expires_at is None or link.expires_at > now)
    return {"id": link.id, "prefix": link.token_prefix, "created_at": link.created_at,
            "expires_at": link.expires_at, "revoked_at": link.revoked_at, "active": active}


# --- lookups (team-scoped: a foreign id is simply not found) ---------------------------


def _plans(user):
    latest = PlanVersion.objects.filter(plan=OuterRef("pk")).order_by("-number")
    return Plan.objects.filter(team__memberships__user=user).annotate(
        latest_number=Subquery(latest.values("number")[:1]),
        latest_status=Subquery(latest.values("status")[:1]),
    ).order_by("-created_at", "-id")


def _plan(user, pk: int) -> Plan:
    return get_object_or_404(Plan.objects.filter(team__memberships__user=user), pk=pk)


def _version(user, plan_id: int, number: int, *, light: bool = False) -> PlanVersion:
    qs = PlanVersion.objects.filter(plan_id=plan_id, number=number, plan__team__memberships__user=user)
    if light:
        qs = qs.defer(*VERSION_LIGHT)
    return get_object_or_404(qs)


def _version_sql() -> str:
    v, p, m = (model._meta.db_table for model in (PlanVersion, Plan, Membership))
    return (f'SELECT v.id, v.status FROM "{v}" v JOIN "{p}" p ON p.id = v.plan_id '
            f'JOIN "{m}" m ON m.team_id = p.team_id '
            "WHERE v.plan_id = %s AND v.number = %s AND m.user_id = %s LIMIT 1")


VERSION_ACCESS_SQL = _version_sql()


def _version_access(*, user_id: int, plan_id: int, number: int) -> tuple[int, str] | None:
    """(id, status) of a version the user's teams may see, else None. Written out because it
    runs on every version GET: compiling the equivalent queryset cost about as much CPU as
    the rest of the request, and the ORM also joins the team table, which the check needs not."""
    if max(plan_id, number) > ID_PARAM["max_value"]:
        return None  # no such row, and SQLite cannot even bind it
    with connection.cursor() as cursor:
        cursor.execute(VERSION_ACCESS_SQL, [plan_id, number, user_id])
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


def _workload(user, pk: int) -> Workload:
    return get_object_or_404(Workload.objects.filter(team__memberships__user=user), pk=pk)
