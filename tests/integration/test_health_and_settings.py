import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_answers_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_database_ok(client, settings):
    settings.REDIS_URL = ""  # in-process tasks: no broker and no worker to wait for
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"


@pytest.mark.django_db
def test_readyz_is_503_when_the_broker_is_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] != "ok"


def _manage(*args: str, secret: str | None) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE belongs to the browser tests' harness, never to a deployment.
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings_production"
    if secret is not None:
        env["DJANGO_SECRET_KEY"] = secret
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_production_settings_refuse_to_start_without_secret_key():
    result = _manage("check", secret=None)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_settings_refuse_the_development_key():
    from config.settings import INSECURE_DEV_SECRET_KEY

    result = _manage("check", secret=INSECURE_DEV_SECRET_KEY)
    assert result.returncode != 0


def test_production_settings_pass_check_deploy_without_warnings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", secret=secrets.token_urlsafe(64))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_switch_fault_injection_off_whatever_the_environment_says(monkeypatch):
    monkeypatch.setenv("FAULT_INJECTION_COMPUTE_DELAY_SECONDS", "5")
    monkeypatch.setenv("FAULT_INJECTION_CLAIM_DELAY_SECONDS", "5")
    code = ("from django.conf import settings; "
            "print(settings.FAULT_INJECTION_COMPUTE_DELAY_SECONDS, settings.FAULT_INJECTION_CLAIM_DELAY_SECONDS)")
    result = _manage("shell", "-v", "0", "-c", code, secret=secrets.token_urlsafe(64))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0.0", "0.0"]
