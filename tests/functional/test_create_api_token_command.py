"""`manage.py create_api_token USERNAME`: a token without a browser, key printed once."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, ManagementUtility, call_command
from rest_framework.test import APIClient

from planner.api.models import ApiToken
from planner.api.tokens import api_token_revoke, hash_api_key

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return get_user_model().objects.create_user(username="alice", password="x-long-password-1")  # pragma: allowlist secret


def _run(*args):
    out, err = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_creates_a_working_token_and_prints_the_key_alone(alice):
    out, err = _run("alice", "--name", "ci", "--expires-days", "30")
    key = out.strip()
    token = ApiToken.objects.get(user=alice)
    assert token.key_hash == hash_api_key(key) and token.name == "ci" and token.expires_at is not None
    assert key not in err and "shown once" in err
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/v1/me/")
    assert response.status_code == 200 and response.json()["username"] == "alice"


def test_unknown_user_is_an_error_and_writes_nothing(alice):
    with pytest.raises(CommandError, match="No user named 'bob'"):
        _run("bob")
    assert not ApiToken.objects.exists()


def test_unknown_user_exits_non_zero(capsys):
    """As from the command line (manage.py's own entry point): a clear message on stderr and a
    non-zero exit status, no traceback."""
    with pytest.raises(SystemExit) as exc:
        ManagementUtility(["manage.py", "create_api_token", "nobody-here"]).execute()
    assert exc.value.code != 0
    err = capsys.readouterr().err
    assert "No user named 'nobody-here'" in err and "Traceback" not in err


def test_inactive_user_and_bad_options_are_refused(alice):
    with pytest.raises(CommandError, match="--name"):
        _run("alice", "--name", "  ")
    with pytest.raises(CommandError, match="days"):
        _run("alice", "--expires-days", "0")
    alice.is_active = False
    alice.save()
    with pytest.raises(CommandError, match="inactive"):
        _run("alice")
    assert not ApiToken.objects.exists()


def test_list_shows_tokens_without_keys(alice):
    key = _run("alice", "--name", "first")[0].strip()
    api_token_revoke(token=ApiToken.objects.get(name="first"))
    _run("alice", "--name", "second")
    out, _err = _run("alice", "--list")
    assert "first" in out and "revoked" in out and "second" in out and "live" in out
    assert key not in out
