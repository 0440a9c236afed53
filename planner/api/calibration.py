"""/api/v1/calibration/: measured runs, the scoreboard and calibrations (docs/CALIBRATION.md).

Same conventions as the rest of the API (planner/api/base.py): team-scoped lookups (another
team's id is a 404 or "no such team"), editors and owners write, one error shape with field
paths, OpenAPI through drf-spectacular.
"""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from planner import i18n
from planner.calibration import services as cs
from planner.calibration.formats import DuplicateRunsError, RunFileError
from planner.calibration.models import Calibration, MeasuredRun
from planner.selectors import teams_for_user

from .base import PAGE_PARAMS, ApiView, _editable_team, _int_query, _paginate, _require_edit
from .body_schema import check_body
from .calibration_schema import envelope_schema, run_schema, upload_body_schema
from .errors import FieldConflict, FieldErrors, FieldNotFound
from .input_schema_parts import VISIBLE_PATTERN
from .serializers import paginated

TAGS = ["calibration"]


# The group RUN_EXAMPLE's run falls in (kind|accelerator id|runtime|precision).
ACTIVATE_EXAMPLE_KEY = "serving|nvidia-h100-sxm5-80gb|vllm|bf16"
ACTIVATE_EXAMPLE = OpenApiExample("Activate a serving group", request_only=True,
                                  value={"team": 1, "key": ACTIVATE_EXAMPLE_KEY})


class ActivateIn(serializers.Serializer):
    team = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    # pattern: not only spaces (the field trims them, then a blank key is refused)
    key = serializers.CharField(min_length=1, max_length=400, validators=[RegexValidator(VISIBLE_PATTERN)],
                                help_text="A scoreboard group's key: kind|accelerator|runtime|precision.")


class RunOut(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.IntegerField()
    kind = serializers.CharField()
    source = serializers.CharField()
    model_preset = serializers.CharField()
    accelerator = serializers.CharField()
    count = serializers.IntegerField()
    figures = serializers.DictField()
    notes = serializers.ListField(child=serializers.CharField(), help_text=(
        "What reading the file assumed or found, in the request's language (medians taken as means, "
        "failed or empty requests and their effect on the means)."))
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class CalibrationOut(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.IntegerField()
    kind = serializers.CharField()
    key = serializers.CharField()
    active = serializers.BooleanField()
    label = serializers.CharField()
    values = serializers.DictField()
    fit = serializers.DictField()
    run_count = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class GroupOut(serializers.Serializer):
    key = serializers.CharField()
    kind = serializers.CharField()
    accelerator = serializers.CharField()
    runtime = serializers.CharField()
    precision = serializers.CharField()
    label = serializers.CharField()
    values = serializers.DictField()
    fit = serializers.DictField()
    calibration = CalibrationOut(allow_null=True)
    runs = serializers.ListField(child=serializers.DictField())


class ScoreboardOut(serializers.Serializer):
    team = serializers.IntegerField()
    groups = GroupOut(many=True)


FIGURES = ("tensor_parallel", "pipeline_parallel", "data_parallel", "precision", "runtime", "runtime_version",
           "input_tokens", "output_tokens", "concurrency", "request_rate", "num_prompts", "ttft_mean_ms",
           "ttft_p95_ms", "tpot_mean_ms", "tpot_p95_ms", "output_tokens_per_s", "activation_checkpointing",
           "sequence_length", "global_batch_size", "tokens_per_s", "step_time_s", "total_tokens", "gpu_hours",
           "wall_clock_hours", "measured_on", "model_given", "accelerator_given", "source_name", "source_line")


def run_data(r: MeasuredRun) -> dict:
    return {"id": r.id, "team": r.team_id, "kind": r.kind, "source": r.source, "model_preset": r.model_preset,
            "accelerator": r.accelerator, "count": r.count,
            "figures": {k: getattr(r, k) for k in FIGURES if getattr(r, k) not in (None, "")},
            "notes": [i18n.render(n) for n in (r.notes or [])],
            "created_by": r.created_by.get_username() if r.created_by else None, "created_at": r.created_at}


def calibration_data(c: Calibration) -> dict:
    return {"id": c.id, "team": c.team_id, "kind": c.kind, "key": "|".join((c.kind, c.accelerator, c.runtime, c.precision)),
            "active": c.active, "label": c.label, "values": c.values, "fit": c.fit, "run_count": c.run_count,
            "updated_at": c.updated_at}


def group_data(g: cs.Group) -> dict:
    return {"key": g.key, "kind": g.kind, "accelerator": g.accelerator, "runtime": g.runtime,
            "precision": g.precision, "label": str(g.label), "values": g.values, "fit": g.fit, "error": g.error,
            "calibration": calibration_data(g.calibration) if g.calibration else None,
            "runs": [{"run": run_data(s.run), "implied": s.implied, "preset": s.preset, "calibrated": s.calibrated,
                      "notes": list(s.notes)} for s in g.scores]}


def _team(user, team_id: int | None, field: str = "team"):
    if team_id is None:
        raise FieldErrors([(field, _("Required."))])
    team = teams_for_user(user=user).filter(pk=team_id).first()
    if team is None:  # a well-formed id naming no team of yours: not found (no leak of others' teams)
        raise FieldNotFound([(field, _("No such team among yours."))])
    return team


def _run_errors(exc: RunFileError, *, prefix: str, per_field: bool) -> FieldErrors:
    cls = FieldConflict if isinstance(exc, DuplicateRunsError) else FieldErrors  # recorded already: 409
    if per_field:
        return cls([(f"{prefix}.{e.field}", e.message) for e in exc.errors])
    return cls([(prefix, str(e)) for e in exc.errors])


RUN_EXAMPLE = OpenApiExample("One serving run", request_only=True, value={
    "team": 1, "kind": "serving", "run": {
        "model": "qwen3-32b", "accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "tensor_parallel": 2, "engine": "vllm",
        "engine_version": "0.12.0", "precision": "bf16", "input_tokens": 1024, "output_tokens": 128,
        "concurrency": 16, "ttft_mean_ms": 187.9, "tpot_mean_ms": 22.18}})


UPLOAD_EXAMPLE = OpenApiExample("A serving CSV", request_only=True, value={
    "team": 1, "format": "serving_csv", "filename": "runs.csv",
    "content": "model,accelerator,count,tensor_parallel,engine,engine_version,precision,input_tokens,"
               "output_tokens,concurrency,ttft_mean_ms,tpot_mean_ms,measured_on\n"
               "Qwen/Qwen3-32B,H100 SXM,2,2,vllm,0.12.0,bf16,1024,128,4,120.5,15.9,2026-11-18\n"})


class RunListView(ApiView):
    @extend_schema(summary="Measured runs of your teams", operation_id="calibration_runs_list",
                   parameters=[*PAGE_PARAMS, OpenApiParameter("team", int, description="Only this team's runs")],
                   responses=paginated(RunOut), tags=TAGS)
    def get(self, request):
        qs = MeasuredRun.objects.filter(team__in=teams_for_user(user=request.user)).select_related("created_by")
        team = _int_query(request, "team")
        if team is not None:
            qs = qs.filter(team_id=team)
        return _paginate(self, request, qs.order_by("-created_at", "-id"), run_data)

    @extend_schema(summary="Record one measured run", operation_id="calibration_runs_create",
                   request=OpenApiTypes.OBJECT, responses={201: RunOut(many=True)}, examples=[RUN_EXAMPLE],
                   tags=TAGS)
    def post(self, request):
        if isinstance(request.data, dict) and "content" in request.data:  # the upload's body, sent here
            raise FieldErrors([("content", _("A benchmark file's content goes to %(path)s.")
                                % {"path": "/api/v1/calibration/runs/upload/"})])
        check_body(envelope_schema(), request.data)
        resolver = cs.catalog_resolver()
        check_body(run_schema(request.data["kind"], resolver), request.data["run"], prefix=("run",))
        team = _editable_team(request.user, request.data["team"])
        try:
            runs = [cs.run_record(team=team, user=request.user, kind=request.data["kind"],
                                  data=request.data["run"], source="api", resolver=resolver)]
        except RunFileError as exc:
            raise _run_errors(exc, prefix="run", per_field=True) from None
        return Response([run_data(r) for r in runs], status=status.HTTP_201_CREATED)


class RunUploadView(ApiView):
    @extend_schema(summary="Record the runs of a benchmark file (vLLM/SGLang result or CSV; all or nothing)",
                   operation_id="calibration_runs_upload", request=OpenApiTypes.OBJECT,
                   responses={201: RunOut(many=True)}, examples=[UPLOAD_EXAMPLE], tags=TAGS)
    def post(self, request):
        check_body(upload_body_schema(), request.data)
        d = request.data
        team = _editable_team(request.user, d["team"])
        try:
            runs = cs.runs_import(team=team, user=request.user, content=d["content"].encode("utf-8"),
                                  fmt=d.get("format", "auto"), context=d.get("context") or {},
                                  filename=d.get("filename", ""))
        except RunFileError as exc:
            raise _run_errors(exc, prefix="content", per_field=False) from None
        return Response([run_data(r) for r in runs], status=status.HTTP_201_CREATED)


class RunDetailView(ApiView):
    @extend_schema(summary="Delete a measured run", responses={204: None}, tags=TAGS)
    def delete(self, request, pk: int):
        run = get_object_or_404(MeasuredRun.objects.filter(team__in=teams_for_user(user=request.user)), pk=pk)
        _require_edit(request.user, run.team_id)
        cs.run_delete(run=run)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ScoreboardView(ApiView):
    @extend_schema(summary="The team's runs with the planner's prediction from presets and calibrated, and "
                           "the error of each", parameters=[OpenApiParameter("team", int, required=True)],
                   responses=ScoreboardOut, tags=TAGS)
    def get(self, request):
        team = _team(request.user, _int_query(request, "team"))
        return Response({"team": team.id, "groups": [group_data(g) for g in cs.team_groups(team=team)]})


class CalibrationListView(ApiView):
    @extend_schema(summary="Calibrations of a team", parameters=[OpenApiParameter("team", int, required=True)],
                   responses=CalibrationOut(many=True), tags=TAGS)
    def get(self, request):
        team = _team(request.user, _int_query(request, "team"))
        return Response([calibration_data(c) for c in Calibration.objects.filter(team=team)])

    @extend_schema(summary="Fit a scoreboard group and make it active in the team's new estimates",
                   request=ActivateIn, responses={200: CalibrationOut}, examples=[ACTIVATE_EXAMPLE], tags=TAGS)
    def post(self, request):
        ser = ActivateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        team = _editable_team(request.user, ser.validated_data["team"])
        try:
            cal = cs.calibration_activate(team=team, key=ser.validated_data["key"], user=request.user)
        except cs.NoSuchGroup as exc:  # the key names no group of this team's runs
            raise FieldNotFound([("key", str(exc))]) from None
        except cs.CalibrationError as exc:
            raise FieldErrors([("key", str(exc))]) from None
        return Response(calibration_data(cal))


class CalibrationDetailView(ApiView):
    @extend_schema(summary="A calibration", responses=CalibrationOut, tags=TAGS)
    def get(self, request, pk: int):
        return Response(calibration_data(self._get(request, pk)))

    @extend_schema(summary="Delete a calibration (new estimates use the presets again; plan versions keep "
                           "the values they froze; the runs stay and can be fitted again)",
                   responses={204: None}, tags=TAGS)
    def delete(self, request, pk: int):
        cal = self._get(request, pk)
        _require_edit(request.user, cal.team_id)
        cs.calibration_delete(calibration=cal)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _get(self, request, pk):
        return get_object_or_404(Calibration.objects.filter(team__in=teams_for_user(user=request.user)), pk=pk)
