"""Share links through the API: create and revoke them, and the public read-only plan, version and
exports a token opens (no login)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from planner.choices import VersionStatus
from planner.models import Plan
from planner.selectors import share_link_resolve
from planner.services import PlannerError, share_link_create, share_link_revoke

from . import serializers as s
from .base import (
    VERSION_LIGHT,
    ApiView,
    _plan,
    _require_edit,
    share_link_data,
    version_data,
    version_options_data,
    version_summary,
)
from .errors import FieldErrors
from .views import EXPORT_FORMAT_PARAM, EXPORT_RESPONSES, _export_response

# --- share links -----------------------------------------------------------------------


class ShareLinkListView(ApiView):
    @extend_schema(summary="Share links of a plan", responses=s.ShareLinkOut(many=True), tags=["sharing"])
    def get(self, request, plan_id: int):
        plan = _plan(request.user, plan_id)
        return Response([share_link_data(link) for link in plan.share_links.order_by("-created_at", "-id")])

    @extend_schema(summary="Create a read-only share link; the token is in this response only",
                   request=s.ShareLinkCreateIn, responses={201: s.ShareLinkCreatedOut}, tags=["sharing"])
    def post(self, request, plan_id: int):
        plan = _plan(request.user, plan_id)
        _require_edit(request.user, plan.team_id)
        ser = s.ShareLinkCreateIn(data=request.data)
        ser.is_valid(raise_exception=True)
        try:
            link, token = share_link_create(plan=plan, user=request.user,
                                            expires_at=ser.validated_data.get("expires_at"))
        except PlannerError as exc:
            raise FieldErrors([("expires_at", str(exc))]) from None
        body = {**share_link_data(link), "token": token,
                "api_url": reverse("api:shared-plan", kwargs={"token": token})}
        return Response(body, status=status.HTTP_201_CREATED)


class ShareLinkDetailView(ApiView):
    @extend_schema(summary="Revoke a share link", responses={204: None}, tags=["sharing"])
    def delete(self, request, plan_id: int, pk: int):
        plan = _plan(request.user, plan_id)
        link = get_object_or_404(plan.share_links, pk=pk)
        _require_edit(request.user, plan.team_id)
        share_link_revoke(link=link)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _shared_plan(token: str) -> Plan:
    link = share_link_resolve(token=token)
    if link is None:
        raise Http404
    return link.plan


class SharedPlanView(APIView):
    """Read-only access by share token: no account needed, only this plan's done versions."""

    permission_classes = [AllowAny]

    @extend_schema(summary="A shared plan and its done versions", responses=s.SharedPlanOut, tags=["sharing"],
                   auth=[])
    def get(self, request, token: str):
        plan = _shared_plan(token)
        versions = plan.versions.filter(status=VersionStatus.DONE).defer(*VERSION_LIGHT).order_by("-number")
        base = reverse("api:shared-plan", kwargs={"token": token})
        items = []
        for v in versions:
            row = version_summary(v)
            row["url"] = row["status_url"] = f"{base}versions/{v.number}/"
            items.append(row)
        return Response({"name": plan.name, "kind": plan.workload.kind, "versions": items})


class SharedVersionView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(summary="A done version of a shared plan", responses=s.VersionOut, tags=["sharing"], auth=[])
    def get(self, request, token: str, number: int):
        plan = _shared_plan(token)
        version = get_object_or_404(plan.versions, number=number, status=VersionStatus.DONE)
        base = f"{reverse('api:shared-plan', kwargs={'token': token})}versions/{version.number}/"
        data = version_data(version, exports_base=base)
        data["url"] = data["status_url"] = base
        return Response(data)


class SharedVersionOptionsView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(summary="Every priced and skipped option of a done version of a shared plan",
                   responses=s.VersionOptionsOut, tags=["sharing"], auth=[])
    def get(self, request, token: str, number: int):
        plan = _shared_plan(token)
        version = get_object_or_404(plan.versions, number=number, status=VersionStatus.DONE)
        return Response(version_options_data(version))


class SharedExportView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(summary="Download a done version of a shared plan",
                   parameters=[EXPORT_FORMAT_PARAM], responses=EXPORT_RESPONSES, tags=["sharing"], auth=[])
    def get(self, request, token: str, number: int, fmt: str):
        plan = _shared_plan(token)
        version = get_object_or_404(plan.versions, number=number, status=VersionStatus.DONE)
        return _export_response(version, fmt, request)
