"""POST /api/v1/tokens/password/: a token from username and password, locked out like the login."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from planner.api.models import ApiToken

pytestmark = pytest.mark.django_db
URL = "/api/v1/tokens/password/"
PASSWORD = "correct-horse-battery-staple-42"


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed, tests only


@pytest.fixture
def alice():
    return get_user_model().objects.create_user(username="alice", password=PASSWORD)


def _post(body, ip="203.0.113.7"):
    return APIClient().post(URL, body, format="json", REMOTE_ADDR=ip)


def test_right_credentials_create_a_working_token(alice):
    response = _post({"username": "alice", "password": PASSWORD, "name": "ci"})
    assert response.status_code == 201, response.content
    key = response.json()["key"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/me/").json()["username"] == "alice"
    assert ApiToken.objects.get().name == "ci"


@pytest.mark.parametrize("username,password", [("alice", "wrong"), ("nobody", PASSWORD)])
def test_wrong_credentials_are_a_401_and_nothing_is_created(alice, username, password):
    response = _post({"username": username, "password": password, "name": "ci"})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token realm="api"'
    assert response.json()["errors"] == [{"field": None, "message": "Wrong username or password."}]
    assert not ApiToken.objects.exists()


def test_inactive_user_gets_no_token(alice):
    alice.is_active = False
    alice.save()
    assert _post({"username": "alice", "password": PASSWORD, "name": "ci"}).status_code == 401
    assert not ApiToken.objects.exists()


def test_missing_fields_are_named(alice):
    response = _post({"username": "alice"})
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"password", "name"} <= fields


def test_failures_lock_out_like_the_web_login(alice, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _post({"username": "alice", "password": "wrong", "name": "ci"}).status_code == 401  # pragma: allowlist secret
    locked = _post({"username": "alice", "password": "wrong", "name": "ci"})
    assert locked.status_code == 429 and locked["Content-Type"].startswith("application/json")
    assert int(locked["Retry-After"]) == int(settings.AXES_COOLOFF_TIME * 3600)
    assert _post({"username": "alice", "password": PASSWORD, "name": "ci"}).status_code == 429
    assert not ApiToken.objects.exists()
    # another address is not locked out
    assert _post({"username": "alice", "password": PASSWORD, "name": "ci"}, ip="198.51.100.9").status_code == 201


def test_web_login_failures_count_too(alice, client, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="203.0.113.7")  # pragma: allowlist secret
    assert _post({"username": "alice", "password": PASSWORD, "name": "ci"}).status_code == 429


def test_in_the_schema_without_auth(client):
    op = client.get("/api/v1/schema/?format=json").json()["paths"]["/api/v1/tokens/password/"]["post"]
    assert not op.get("security")  # no credentials needed (the schema has no global requirement)
    assert {"201", "400", "401", "429"} <= set(op["responses"]) and "AXES_FAILURE_LIMIT" in op["description"]


def test_wrong_credentials_message_in_russian(alice):
    response = APIClient().post(URL, {"username": "alice", "password": "wrong", "name": "ci"}, format="json",
                                HTTP_ACCEPT_LANGUAGE="ru", REMOTE_ADDR="203.0.113.7")
    assert response.json()["errors"][0]["message"] == "Неверное имя пользователя или пароль."
