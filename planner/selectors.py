"""Reads for the planner. Every query is scoped to the teams the user belongs to, so
another team's object is simply not found (views answer 404, never 403)."""

from __future__ import annotations

import hashlib
import hmac

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.utils import timezone

from .choices import EDIT_ROLES, Role
from .models import Membership, Plan, PlanVersion, ShareLink, Team, Workload


def teams_for_user(*, user) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user)


def teams_editable_by(*, user) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user, memberships__role__in=EDIT_ROLES)


def role_for(*, user, team_id: int) -> Role | None:
    if not user.is_authenticated:
        return None
    role = Membership.objects.filter(user=user, team_id=team_id).values_list("role", flat=True).first()
    return Role(role) if role else None


def can_edit(*, user, team_id: int) -> bool:
    return role_for(user=user, team_id=team_id) in EDIT_ROLES


def workloads_for_user(*, user) -> QuerySet[Workload]:
    return Workload.objects.filter(team__in=teams_for_user(user=user))


def plans_for_user(*, user) -> QuerySet[Plan]:
    """Plans of the user's teams with their latest version's number and status annotated."""
    latest = PlanVersion.objects.filter(plan=OuterRef("pk")).order_by("-number")
    return (
        Plan.objects.filter(team__in=teams_for_user(user=user))
        .select_related("team", "workload")
        .annotate(
            latest_number=Subquery(latest.values("number")[:1]),
            latest_status=Subquery(latest.values("status")[:1]),
        )
        .order_by("-created_at")
    )


def plan_with_history(*, plans: QuerySet[Plan]) -> QuerySet[Plan]:
    """Versions (without their heavy JSON) and share links in two extra queries."""
    light_versions = PlanVersion.objects.defer("result", "option_catalog", "price_snapshot", "rate_snapshot").order_by("-number")
    return plans.select_related("team", "workload").prefetch_related(
        Prefetch("versions", queryset=light_versions, to_attr="history"),
        Prefetch("share_links", queryset=ShareLink.objects.order_by("-created_at"), to_attr="links"),
    )


def version_latest_done(*, plan: Plan) -> PlanVersion | None:
    return plan.versions.filter(status="done").order_by("-number").first()


def hash_share_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def share_link_resolve(*, token: str) -> ShareLink | None:
    """The live link for a token, or None when unknown, revoked or expired."""
    if not token or len(token) > 200:
        return None
    digest = hash_share_token(token)
    link = ShareLink.objects.select_related("plan", "plan__team", "plan__workload").filter(token_hash=digest).first()
    # The lookup is by digest; compare again in constant time so no path depends on timing.
    if link is None or not hmac.compare_digest(link.token_hash, digest):
        return None
    if link.revoked_at is not None:
        return None
    if link.expires_at is not None and link.expires_at <= timezone.now():
        return None
    return link
