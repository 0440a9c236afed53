"""API tokens: hashed at rest, shown once, revocable, expiring; Token and Bearer schemes."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from planner.api.models import ApiToken
from planner.api.tokens import api_token_create, hash_api_key
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
ME = "/api/v1/me/"


def _client(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_token_scheme_authenticates(world):
    _t, key = api_token_create(user=world.users["viewer"], name="cli")
    response = _client(f"Token {key}").get(ME)
    assert response.status_code == 200
    assert response.json()["username"] == "viewer-a"


def test_bearer_scheme_authenticates(world):
    _t, key = api_token_create(user=world.users["viewer"], name="cli")
    assert _client(f"Bearer {key}").get(ME).status_code == 200


def test_only_the_hash_is_stored(world):
    token, key = api_token_create(user=world.users["viewer"], name="cli")
    token.refresh_from_db()
    assert token.key_hash == hash_api_key(key)
    assert key not in {token.key_hash, token.prefix, token.name}


def test_anonymous_gets_401_with_challenge(anon):
    response = anon.get(ME)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["status"] == 401


def test_unknown_key_is_401(world):
    assert _client("Token not-a-real-key").get(ME).status_code == 401


def test_malformed_header_is_401(world):
    assert _client("Token a b").get(ME).status_code == 401


def test_revoked_token_is_401(world):
    token, key = api_token_create(user=world.users["viewer"], name="cli")
    token.revoked_at = timezone.now()
    token.save()
    assert _client(f"Token {key}").get(ME).status_code == 401


def test_expired_token_is_401(world):
    token, key = api_token_create(user=world.users["viewer"], name="cli",
                                  expires_at=timezone.now() + timedelta(hours=1))
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _client(f"Token {key}").get(ME).status_code == 401


def test_inactive_user_token_is_401(world):
    user = world.users["viewer"]
    _t, key = api_token_create(user=user, name="cli")
    user.is_active = False
    user.save()
    assert _client(f"Token {key}").get(ME).status_code == 401


def test_session_auth_works_for_the_browser(world):
    client = APIClient()
    client.force_login(world.users["viewer"])
    assert client.get(ME).status_code == 200


def test_create_token_shows_key_once(world):
    client = client_for(world.users["editor"])  # noqa: F405
    created = client.post("/api/v1/tokens/", {"name": "ci"}, format="json")
    assert created.status_code == 201
    key = created.json()["key"]
    assert _client(f"Token {key}").get(ME).status_code == 200
    listed = client.get("/api/v1/tokens/").json()
    assert all("key" not in t for t in listed)
    assert created.json()["prefix"] == key[:6]


def test_create_token_with_past_expiry_is_400(world):
    client = client_for(world.users["editor"])  # noqa: F405
    past = (timezone.now() - timedelta(days=1)).isoformat()
    response = client.post("/api/v1/tokens/", {"name": "ci", "expires_at": past}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "expires_at"


def test_revoke_token_stops_it(world):
    client = client_for(world.users["editor"])  # noqa: F405
    created = client.post("/api/v1/tokens/", {"name": "ci"}, format="json").json()
    assert client.delete(f"/api/v1/tokens/{created['id']}/").status_code == 204
    assert _client(f"Token {created['key']}").get(ME).status_code == 401


def test_cannot_revoke_another_users_token(world):
    other, _key = api_token_create(user=world.users["owner"], name="theirs")
    client = client_for(world.users["editor"])  # noqa: F405
    assert client.delete(f"/api/v1/tokens/{other.pk}/").status_code == 404
    other.refresh_from_db()
    assert other.revoked_at is None


def test_teams_lists_only_mine_with_role(world):
    response = client_for(world.users["viewer"]).get("/api/v1/teams/")  # noqa: F405
    assert response.json() == [{"id": world.team.id, "name": "Team A", "slug": "team-a", "role": "viewer", "procurement": {}}]
