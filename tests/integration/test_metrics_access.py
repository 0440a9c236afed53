"""/metrics: closed to anonymous clients in production settings; a bearer token or an
allow-listed address opens it (config/metrics_access.py)."""

import os
import secrets
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PROBE = """
import django
django.setup()
from django.test import Client
c = Client()
anonymous = c.get("/metrics", secure=True, HTTP_HOST="localhost")
wrong = c.get("/metrics", secure=True, HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer not-the-token")
right = c.get("/metrics", secure=True, HTTP_HOST="localhost", HTTP_AUTHORIZATION="Bearer " + {token!r})
print(anonymous.status_code, anonymous["WWW-Authenticate"], wrong.status_code, right.status_code,
      b"django_http_requests" in anonymous.content, b"django_http_requests" in right.content)
"""


def test_production_settings_refuse_anonymous_metrics_and_accept_the_bearer_token():
    token = secrets.token_urlsafe(32)
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "METRICS_PUBLIC")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings_production", DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
               METRICS_TOKEN=token, REDIS_URL="")
    out = subprocess.run([sys.executable, "-c", PROBE.format(token=token)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["401", 'Bearer', 'realm="metrics"', "401", "200", "False", "True"]


@pytest.mark.django_db
def test_without_a_token_or_allow_list_metrics_are_closed(client, settings):
    settings.METRICS_PUBLIC, settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = False, "", []
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401


@pytest.mark.django_db
def test_an_allow_listed_network_may_scrape(client, settings):
    settings.METRICS_PUBLIC, settings.METRICS_TOKEN = False, ""
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.1").status_code == 401


def test_the_compose_scrape_config_sends_the_metrics_token():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    scrape = yaml.safe_load((ROOT / "deploy" / "prometheus.yml").read_text())["scrape_configs"][0]
    assert scrape["authorization"]["type"] == "Bearer"
    token_file = scrape["authorization"]["credentials_file"]
    prometheus = compose["services"]["prometheus"]
    assert token_file in " ".join(prometheus["entrypoint"]) and "METRICS_TOKEN" in prometheus["environment"]
    assert "METRICS_TOKEN" in compose["x-app"]["environment"]
    assert scrape["static_configs"][0]["targets"] == ["web:8000"]
    for name in ("worker", "beat", "web"):  # every long-running service is supervised
        assert compose["services"][name].get("restart", compose["x-app"]["restart"]) in ("always", "unless-stopped")
