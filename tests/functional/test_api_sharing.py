"""Share links over the API: create (token shown once), list, revoke; read-only access by token."""

from datetime import timedelta

import pytest
from django.utils import timezone

from planner.choices import VersionStatus
from planner.models import ShareLink
from planner.services import share_link_create
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(world):
    return client_for(world.users["editor"])  # noqa: F405


def _links(world):
    return f"/api/v1/plans/{world.plan.id}/share-links/"


def test_create_share_link_returns_token_once(world, editor):
    response = editor.post(_links(world), {}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["api_url"] == f"/api/v1/shared/{body['token']}/"
    listed = editor.get(_links(world)).json()
    assert [row["id"] for row in listed] == [body["id"]]
    assert "token" not in listed[0]


def test_share_link_with_past_expiry_is_400(world, editor):
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    response = editor.post(_links(world), {"expires_at": past}, format="json")
    assert response.json()["errors"][0]["field"] == "expires_at"


def test_revoke_share_link(world, editor):
    link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    assert editor.delete(f"{_links(world)}{link.id}/").status_code == 204
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert editor.get(f"/api/v1/shared/{token}/").status_code == 404


def test_anonymous_reads_shared_plan_by_token(world, anon):
    _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    body = anon.get(f"/api/v1/shared/{token}/").json()
    assert body["name"] == "Chat plan"
    assert [v["number"] for v in body["versions"]] == [1]


def test_shared_version_has_result(world, anon):
    _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    body = anon.get(f"/api/v1/shared/{token}/versions/1/").json()
    assert body["result"] == STORED_RESULT  # noqa: F405


def test_shared_hides_unfinished_versions(world, anon):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    assert anon.get(f"/api/v1/shared/{token}/versions/2/").status_code == 404


def test_expired_share_link_is_404(world, anon):
    link, token = share_link_create(plan=world.plan, user=world.users["owner"],
                                    expires_at=timezone.now() + timedelta(hours=1))
    ShareLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert anon.get(f"/api/v1/shared/{token}/").status_code == 404


def test_share_token_is_not_an_api_credential(world, anon):
    _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
    anon.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert anon.get(f"/api/v1/plans/{world.plan.id}/").status_code == 401
