"""Who may see and change what: team scoping (404), roles (403), share links (read-only)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from planner import services
from planner.choices import Role, VersionStatus
from planner.models import PlanVersion, ShareLink
from tests.planner_factories import PlanVersionFactory, member

pytestmark = pytest.mark.django_db

READ_URLS = [
    ("plan_detail", lambda v: [v.plan_id]),
    ("plan_version", lambda v: [v.plan_id, v.number]),
    ("plan_version_status", lambda v: [v.plan_id, v.number]),
    ("plan_diff", lambda v: [v.plan_id]),
]
WRITE_URLS = [
    ("plan_recompute", lambda v: [v.plan_id]),
    ("plan_assumptions", lambda v: [v.plan_id]),
    ("share_create", lambda v: [v.plan_id]),
    ("plan_version_retry", lambda v: [v.plan_id, v.number]),
]


@pytest.fixture
def version():
    return PlanVersionFactory(number=1)


@pytest.mark.parametrize(("name", "args"), READ_URLS + WRITE_URLS)
def test_another_teams_plan_is_404(client, version, name, args):
    client.force_login(member(Role.OWNER))
    url = reverse(name, args=args(version))
    response = client.post(url) if (name, args) in WRITE_URLS else client.get(url)
    assert response.status_code == 404


@pytest.mark.parametrize(("name", "args"), READ_URLS)
def test_viewer_can_read(client, version, name, args):
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    assert client.get(reverse(name, args=args(version))).status_code in (200, 286)


@pytest.mark.parametrize(("name", "args"), WRITE_URLS)
def test_viewer_cannot_change(client, version, name, args):
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    response = client.post(reverse(name, args=args(version)), {"horizon_months": 12})
    assert response.status_code == 403
    assert PlanVersion.objects.count() == 1
    assert ShareLink.objects.count() == 0


def test_viewer_sees_no_edit_controls(client, version):
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    html = client.get(reverse("plan_detail", args=[version.plan_id])).content.decode()
    assert reverse("plan_recompute", args=[version.plan_id]) not in html
    assert reverse("share_create", args=[version.plan_id]) not in html


def test_editor_sees_edit_controls(client, version):
    client.force_login(member(Role.EDITOR, team=version.plan.team))
    html = client.get(reverse("plan_detail", args=[version.plan_id])).content.decode()
    assert reverse("plan_recompute", args=[version.plan_id]) in html


def test_anonymous_is_sent_to_login(client, version):
    response = client.get(reverse("plan_detail", args=[version.plan_id]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_viewer_cannot_open_the_workload_form(client):
    client.force_login(member(Role.VIEWER))
    assert client.get(reverse("workload_create")).status_code == 403


def test_home_lists_only_own_teams_plans(client, version):
    other = PlanVersionFactory(number=1)
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    html = client.get(reverse("home")).content.decode()
    assert version.plan.name in html
    assert other.plan.name not in html


def test_viewer_cannot_revoke_a_link(client, version):
    link, _token = services.share_link_create(plan=version.plan, user=None)
    client.force_login(member(Role.VIEWER, team=version.plan.team))
    response = client.post(reverse("share_revoke", args=[version.plan_id, link.id]))
    assert response.status_code == 403
    link.refresh_from_db()
    assert link.revoked_at is None


def test_revoking_another_plans_link_is_404(client, version):
    other = PlanVersionFactory(number=1)
    link, _token = services.share_link_create(plan=other.plan, user=None)
    client.force_login(member(Role.OWNER, team=version.plan.team))
    response = client.post(reverse("share_revoke", args=[version.plan_id, link.id]))
    assert response.status_code == 404


# --- share links ------------------------------------------------------------------------


@pytest.fixture
def done_version():
    return PlanVersionFactory(number=1, status=VersionStatus.DONE, result={"sizing": {}, "costs": {}})


def test_share_link_opens_without_login_and_read_only(client, done_version):
    _link, token = services.share_link_create(plan=done_version.plan, user=None)
    response = client.get(reverse("shared_plan", args=[token]))
    assert response.status_code == 200
    html = response.content.decode()
    assert done_version.plan.name in html
    assert reverse("plan_recompute", args=[done_version.plan_id]) not in html
    assert reverse("share_create", args=[done_version.plan_id]) not in html
    assert "<form method=\"post\"" not in html.split("<main>")[1]


def test_revoked_share_link_is_404(client, done_version):
    link, token = services.share_link_create(plan=done_version.plan, user=None)
    services.share_link_revoke(link=link)
    assert client.get(reverse("shared_plan", args=[token])).status_code == 404


def test_expired_share_link_is_404(client, done_version):
    link, token = services.share_link_create(plan=done_version.plan, user=None)
    ShareLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timezone.timedelta(seconds=1))
    assert client.get(reverse("shared_plan", args=[token])).status_code == 404


def test_unknown_share_token_is_404(client, done_version):
    services.share_link_create(plan=done_version.plan, user=None)
    assert client.get(reverse("shared_plan", args=["x" * 43])).status_code == 404
