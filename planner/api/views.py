"""Thin API views: validate, call a service or selector, render. Every object is looked up
within the caller's teams, so another team's id is a 404 (never a 403 that confirms it)."""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from config.middleware import accepts_gzip
from planner.choices import FINISHED_STATUSES, VersionStatus
from planner.downloads import attachment
from planner.models import PlanVersion, Team, Workload
from planner.selectors import teams_for_user
from planner.services import PlannerError

from . import serializers as s
from .base import (
    MAX_KEY,
    PAGE_PARAMS,
    VERSION_LIGHT,
    ApiView,
    _editable_team,
    _int_query,
    _paginate,
    _plan,
    _plans,
    _require_edit,
    _version,
    _version_access,
    _workload,
    plan_data,
    status_url,
    version_data,
    version_options_data,
    version_status,
    version_summary,
    version_url,
    workload_data,
)
from .errors import Conflict, FieldErrors, FieldNotFound
from .exports import EXPORT_FORMATS, EXPORT_TYPES, export_version
from .schema import ESTIMATE_EXAMPLES, PLAN_EXAMPLES, WORKLOAD_EXAMPLES
from .services import (
    costs_validate,
    json_diff,
    plan_create_api,
    plan_recompute_exclusive,
    request_hash,
    spec_validate,
    workload_delete,
    workload_update,
)
from .tokens import api_token_create, api_token_revoke, api_tokens_for_user

# --- me, teams, tokens -----------------------------------------------------------------


class MeView(ApiView):
    @extend_schema(summary="The authenticated user", responses=s.MeOut, tags=["account"])
    def get(self, request):
        return Response({"id": request.user.pk, "username": request.user.get_username()})


class TeamListView(ApiView):
    @extend_schema(summary="Teams you belong to, with your role", responses=s.TeamOut(many=True), tags=["account"])
    def get(self, request):
        rows = (Team.objects.filter(memberships__user=request.user)
                .values("id", "name", "slug", "procurement", "memberships__role").order_by("name", "id"))
        return Response([{"id": r["id"], "name": r["name"], "slug": r["slug"], "role": r["memberships__role"],
                          "procurement": r["procurement"] or {}} for r in rows])


def token_data(t) -> dict:
    return {"id": t.id, "name": t.name, "prefix": t.prefix, "created_at": t.created_at,
            "expires_at": t.expires_at, "revoked_at": t.revoked_at, "last_used_at": t.last_used_at}


class TokenListView(ApiView):
    @extend_schema(summary="Your API tokens (keys are never shown again)", responses=s.TokenOut(many=True),
                   tags=["account"])
    def get(self, request):
        return Response([token_data(t) for t in api_tokens_for_user(user=request.user)])

    @extend_schema(summary="Create an API token; the key is in this response only",
                   request=s.TokenCreateIn, responses={201: s.TokenCreatedOut}, tags=["account"])
    def post(self, request):
        ser = s.TokenCreateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            token, key = api_token_create(user=request.user, **ser.validated_data)
        except PlannerError as exc:
            raise FieldErrors([("expires_at", str(exc))]) from None
        return Response({**token_data(token), "key": key}, status=status.HTTP_201_CREATED)


class TokenDetailView(ApiView):
    @extend_schema(summary="Revoke an API token", responses={204: None}, tags=["account"])
    def delete(self, request, pk: int):
        api_token_revoke(token=get_object_or_404(api_tokens_for_user(user=request.user), pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- workloads -------------------------------------------------------------------------


class WorkloadListView(ApiView):
    @extend_schema(summary="Workloads of your teams", operation_id="workloads_list", responses=s.paginated(s.WorkloadOut), tags=["workloads"],
                   parameters=[*PAGE_PARAMS, OpenApiParameter("team", int, description="Only this team's workloads"),
                               OpenApiParameter("kind", str, description="Only this kind")])
    def get(self, request):
        qs = Workload.objects.filter(team__memberships__user=request.user).order_by("-created_at", "-id")
        team = _int_query(request, "team")
        if team is not None:
            qs = qs.filter(team_id=team)
        kind = request.query_params.get("kind")
        if kind:
            qs = qs.filter(kind=kind)
        return _paginate(self, request, qs, workload_data)

    @extend_schema(summary="Create a workload", request=s.WorkloadIn, responses={201: s.WorkloadOut},
                   examples=WORKLOAD_EXAMPLES, tags=["workloads"])
    def post(self, request):
        from planner.services import workload_create

        ser = s.WorkloadIn(data=request.data)
        ser.is_valid(raise_exception=True)
        data = ser.validated_data
        team = _editable_team(request.user, data["team"])
        spec = spec_validate(data=data["spec"])
        workload = workload_create(team=team, name=data["name"], spec=spec, user=request.user)
        return Response(workload_data(workload), status=status.HTTP_201_CREATED)


class WorkloadDetailView(ApiView):
    @extend_schema(summary="A workload", responses=s.WorkloadOut, tags=["workloads"])
    def get(self, request, pk: int):
        return Response(workload_data(_workload(request.user, pk)))

    @extend_schema(summary="Replace a workload's name and/or spec", request=s.WorkloadUpdateIn,
                   responses=s.WorkloadOut, tags=["workloads"])
    def put(self, request, pk: int):
        return self._update(request, pk)

    @extend_schema(summary="Change a workload's name and/or spec", request=s.WorkloadUpdateIn,
                   responses=s.WorkloadOut, tags=["workloads"])
    def patch(self, request, pk: int):
        return self._update(request, pk)

    def _update(self, request, pk):
        workload = _workload(request.user, pk)
        _require_edit(request.user, workload.team_id)
        ser = s.WorkloadUpdateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        spec = ser.validated_data.get("spec")
        if spec is not None:
            spec_validate(data=spec)
        workload = workload_update(workload=workload, name=ser.validated_data.get("name"), spec=spec)
        return Response(workload_data(workload))

    @extend_schema(summary="Delete a workload (409 while plans use it)", responses={204: None},
                   tags=["workloads"])
    def delete(self, request, pk: int):
        workload = _workload(request.user, pk)
        _require_edit(request.user, workload.team_id)
        workload_delete(workload=workload)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- plans -----------------------------------------------------------------------------

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=False,
    description="Repeat a creation safely: the same key and body return the same plan (max 255 chars).",
)


class PlanListView(ApiView):
    @extend_schema(summary="Plans of your teams", operation_id="plans_list", responses=s.paginated(s.PlanOut), tags=["plans"],
                   parameters=[*PAGE_PARAMS, OpenApiParameter("team", int), OpenApiParameter("workload", int)])
    def get(self, request):
        qs = _plans(request.user)
        for name in ("team", "workload"):
            value = _int_query(request, name)
            if value is not None:
                qs = qs.filter(**{f"{name}_id": value})
        return _paginate(self, request, qs, plan_data)

    @extend_schema(
        summary="Create a plan and queue its first computation (202)",
        description="Give `workload` (an id), or `team` with an inline `spec`. Poll `status_url` until "
                    "`finished`, then read `version_url`.",
        request=s.PlanCreateIn, parameters=[IDEMPOTENCY_HEADER],
        responses={202: s.PlanAcceptedOut}, examples=PLAN_EXAMPLES, tags=["plans"],
    )
    def post(self, request):
        key = request.headers.get("Idempotency-Key", "").strip() or None
        if key is not None and len(key) > MAX_KEY:
            raise FieldErrors([("Idempotency-Key", _("At most 255 characters."))])
        ser = s.PlanCreateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        data = ser.validated_data
        workload = None
        if "workload" in data:
            workload = Workload.objects.filter(team__memberships__user=request.user, pk=data["workload"]).first()
            if workload is None:
                raise FieldNotFound([("workload", _("No such workload among your teams'."))])
            team = workload.team
            _require_edit(request.user, team.pk)
        else:
            team = _editable_team(request.user, data["team"])
            spec_validate(data=data["spec"])
        costs = costs_validate(data=data.get("costs") or {},
                               spec=workload.spec if workload is not None else data["spec"])
        plan, created = plan_create_api(
            user=request.user, team=team, workload=workload, spec=data.get("spec"), name=data.get("name", ""),
            costs=costs, idempotency_key=key, body_hash=request_hash(request.data),
        )
        plan = _plans(request.user).get(pk=plan.pk)
        version = plan.versions.defer(*VERSION_LIGHT).order_by("number").first()
        body = {
            "plan": plan_data(plan), "version": version_status(version),
            "version_url": version_url(plan.id, version.number), "status_url": status_url(plan.id, version.number),
        }
        headers = {"Location": body["status_url"]}
        if not created:
            headers["Idempotent-Replayed"] = "true"
        return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)


class PlanDetailView(ApiView):
    @extend_schema(summary="A plan with its latest version's number and status", responses=s.PlanOut,
                   tags=["plans"])
    def get(self, request, pk: int):
        return Response(plan_data(get_object_or_404(_plans(request.user), pk=pk)))


class VersionListView(ApiView):
    @extend_schema(summary="Versions of a plan, newest first", operation_id="plans_versions_list", responses=s.paginated(s.VersionSummaryOut),
                   parameters=PAGE_PARAMS, tags=["plans"])
    def get(self, request, plan_id: int):
        plan = _plan(request.user, plan_id)
        qs = plan.versions.defer(*VERSION_LIGHT).order_by("-number")
        return _paginate(self, request, qs, lambda v: version_summary(v, plan.id))


class VersionStatusView(ApiView):
    @extend_schema(summary="Computation status of a version (poll this)", responses=s.VersionStatusOut,
                   tags=["plans"])
    def get(self, request, plan_id: int, number: int):
        version = _version(request.user, plan_id, number, light=True)
        response = Response(version_status(version))
        if version.status not in FINISHED_STATUSES:
            response["Retry-After"] = "2"
        return response


class _DoneBodies:
    """Rendered JSON of done versions, plain and gzipped, per process (LRU), one body per
    (version, language): the engine texts are rendered in the language of Accept-Language
    (planner.i18n.for_api). Safe because a done version never changes; access is still checked
    on every request before a body is served. Results can be megabytes of JSON, so compressing
    once pays off on every reuse."""

    def __init__(self, size: int = 64):
        self.size = size
        self._items: OrderedDict[tuple[int, str], tuple[bytes, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, pk: int, lang: str = "en") -> tuple[bytes, bytes] | None:
        with self._lock:
            bodies = self._items.get((pk, lang))
            if bodies is not None:
                self._items.move_to_end((pk, lang))
            return bodies

    def put(self, pk: int, body: bytes, lang: str = "en") -> tuple[bytes, bytes]:
        bodies = (body, gzip.compress(body, compresslevel=6, mtime=0))
        with self._lock:
            self._items[(pk, lang)] = bodies
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return bodies

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


done_bodies = _DoneBodies()


def api_language() -> str:
    """The language the API renders engine texts in (planner.i18n.for_api): "ru" or "en"."""
    from django.utils import translation

    return "ru" if (translation.get_language() or "en").lower().startswith("ru") else "en"


def _etag_matches(header: str, etag: str) -> bool:
    """Weak comparison (RFC 9110 for GET): W/"x" and "x" match each other."""
    def strip(tag: str) -> str:
        return tag.strip().removeprefix("W/")

    tags = [strip(t) for t in header.split(",")]
    return "*" in tags or strip(etag) in tags


class VersionDetailView(ApiView):
    @extend_schema(
        summary="A version with its frozen inputs and result",
        description="Done versions are immutable: they carry an ETag; send it back in If-None-Match for a 304.",
        parameters=[OpenApiParameter("If-None-Match", str, location=OpenApiParameter.HEADER, required=False)],
        responses={200: s.VersionOut, 304: OpenApiResponse(description="Not modified")}, tags=["plans"],
    )
    def get(self, request, plan_id: int, number: int):
        # First only whether the caller may see it and its status: a small, indexed query.
        row = _version_access(user_id=request.user.pk, plan_id=plan_id, number=number)
        if row is None:
            raise Http404
        pk, version_status_ = row
        if version_status_ != VersionStatus.DONE:
            version = PlanVersion.objects.defer("price_snapshot", "rate_snapshot", "option_catalog").get(pk=pk)
            return Response(version_data(version), headers={"Cache-Control": "no-store"})
        fmt = getattr(request.accepted_renderer, "format", "json")
        lang = api_language()
        # A done version never changes: its id, format and language name the body. Weak,
        # because the same body is also served gzipped.
        etag = f'W/"pv{pk}-{fmt}-{lang}"'
        headers = {"ETag": etag, "Cache-Control": "private, no-cache",
                   "Vary": "Accept, Accept-Encoding, Accept-Language, Authorization, Cookie"}
        if _etag_matches(request.headers.get("If-None-Match", ""), etag):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers=headers)
        if fmt != "json":  # the browsable API: rendered by DRF each time
            version = PlanVersion.objects.defer("price_snapshot", "rate_snapshot", "option_catalog").get(pk=pk)
            return Response(version_data(version), headers=headers)
        bodies = done_bodies.get(pk, lang)
        if bodies is None:
            version = PlanVersion.objects.defer("price_snapshot", "rate_snapshot", "option_catalog").get(pk=pk)
            bodies = done_bodies.put(pk, JSONRenderer().render(version_data(version)), lang)
        if accepts_gzip(request):
            response = HttpResponse(bodies[1], content_type="application/json")
            response["Content-Encoding"] = "gzip"
        else:
            response = HttpResponse(bodies[0], content_type="application/json")
        for name, value in headers.items():
            response[name] = value
        return response


class VersionOptionsView(ApiView):
    @extend_schema(summary="Every priced and skipped option of a done version",
                   description="result.costs.options lists the options the plan names; this lists them all, "
                               "in the same order, with the options not priced and why.",
                   responses=s.VersionOptionsOut, tags=["plans"])
    def get(self, request, plan_id: int, number: int):
        version = _version(request.user, plan_id, number)
        if version.status != VersionStatus.DONE:
            raise Conflict(_("Only a done version lists its options; this one is %(status)s.")
                           % {"status": version.status})
        return Response(version_options_data(version))


class RecomputeView(ApiView):
    @extend_schema(summary="Recompute with today's prices: a new version (409 while one is computing)",
                   request=s.RecomputeIn, responses={202: s.VersionStatusOut}, tags=["plans"])
    def post(self, request, plan_id: int):
        plan = _plan(request.user, plan_id)
        _require_edit(request.user, plan.team_id)
        ser = s.RecomputeIn(data=request.data)
        ser.is_valid(raise_exception=True)
        version = plan_recompute_exclusive(plan=plan, user=request.user, note=ser.validated_data.get("note", ""))
        version.refresh_from_db()
        url = status_url(plan.id, version.number)
        return Response(version_status(version), status=status.HTTP_202_ACCEPTED, headers={"Location": url})


class DiffView(ApiView):
    @extend_schema(
        summary="Differences between two versions of a plan",
        description="`from` and `to` are version numbers of this plan; one it does not have is a 404 "
                    "naming the parameter.",
        parameters=[OpenApiParameter("from", int, required=True), OpenApiParameter("to", int, required=True)],
        responses=s.DiffOut, tags=["plans"],
    )
    def get(self, request, plan_id: int):
        plan = _plan(request.user, plan_id)
        numbers = {name: _int_query(request, name) for name in ("from", "to")}
        missing = [(name, _("This parameter is required.")) for name, n in numbers.items() if n is None]
        if missing:
            raise FieldErrors(missing)
        versions = {v.number: v for v in plan.versions.filter(number__in=numbers.values())}
        unknown = [(name, _("No such version of this plan.")) for name, n in numbers.items() if n not in versions]
        if unknown:  # a well-formed number that names no version: not found, like any unknown id
            raise FieldNotFound(unknown)
        a, b = versions[numbers["from"]], versions[numbers["to"]]
        both_done = a.status == b.status == VersionStatus.DONE
        return Response({
            "plan": plan.id, "from_version": a.number, "to_version": b.number,
            "inputs": json_diff(a.inputs, b.inputs),
            "prices": json_diff(a.price_snapshot, b.price_snapshot),
            "rates": json_diff(a.rate_snapshot, b.rate_snapshot),
            "result": json_diff(a.full_result, b.full_result) if both_done else None,
        })


# The file's media type by format (planner.plan_exports.EXPORT_TYPES; CSV is sent with
# `; charset=utf-8`), so the schema lists what each download really is.
EXPORT_FORMAT_PARAM = OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(EXPORT_FORMATS),
                                       description="csv, xlsx or pdf")
EXPORT_RESPONSES = {
    (200, media.split(";")[0]): OpenApiResponse(OpenApiTypes.BINARY, description=f"The {fmt.upper()} file")
    for fmt, media in EXPORT_TYPES.items()
}


class ExportView(ApiView):
    @extend_schema(
        summary="Download a done version as CSV, XLSX or PDF",
        parameters=[EXPORT_FORMAT_PARAM], responses=EXPORT_RESPONSES, tags=["plans"],
    )
    def get(self, request, plan_id: int, number: int, fmt: str):
        version = _version(request.user, plan_id, number)
        return _export_response(version, fmt, request)


def _export_response(version: PlanVersion, fmt: str, request) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404
    if version.status != VersionStatus.DONE:
        raise Conflict(_("Only a done version can be exported; this one is %(status)s.") % {"status": version.status})
    content, content_type, filename = export_version(version=version, fmt=fmt, request=request._request)
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = attachment(filename)
    return response



# --- estimate --------------------------------------------------------------------------


class EstimateView(ApiView):
    @extend_schema(
        summary="Size and cost a workload now, without saving anything",
        request=s.EstimateIn, responses=s.EstimateOut, examples=ESTIMATE_EXAMPLES, tags=["estimate"],
    )
    def post(self, request):
        from .estimate import estimate

        ser = s.EstimateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        spec = spec_validate(data=ser.validated_data["spec"])
        costs = costs_validate(data=ser.validated_data.get("costs") or {}, spec=spec)
        calibrations = None
        if ser.validated_data.get("team") is not None:
            from planner.calibration.services import active_calibrations

            team = teams_for_user(user=request.user).filter(pk=ser.validated_data["team"]).first()
            if team is None:
                raise FieldNotFound([("team", _("No such team among yours."))])
            calibrations = active_calibrations(team_id=team.id).to_data()
        return Response(estimate(spec=spec, costs=costs, calibrations=calibrations))
