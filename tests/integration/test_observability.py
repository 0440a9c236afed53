import json
import logging

import pytest

from config.request_id import RequestIdFilter, request_id_var


def test_every_response_carries_a_request_id(client):
    response = client.get("/healthz")
    assert len(response["X-Request-ID"]) == 32


def test_a_safe_incoming_request_id_is_kept(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")
    assert response["X-Request-ID"] == "abc-123"


def test_an_unsafe_incoming_request_id_is_replaced(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="bad id\nwith newline")
    assert response["X-Request-ID"] != "bad id\nwith newline"
    assert len(response["X-Request-ID"]) == 32


def test_log_records_are_json_with_the_request_id(settings):
    from pythonjsonlogger.json import JsonFormatter

    formatter = JsonFormatter(**{k: v for k, v in settings.LOGGING["formatters"]["json"].items() if k != "()"})
    record = logging.LogRecord("planner", logging.INFO, __file__, 1, "plan %s computed", ("7",), None)
    token = request_id_var.set("req-42")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id_var.reset(token)
    line = json.loads(formatter.format(record))
    assert line["message"] == "plan 7 computed"
    assert line["request_id"] == "req-42"
    assert line["level"] == "INFO"


@pytest.mark.django_db
def test_metrics_endpoint_exposes_request_latency(client):
    client.get("/healthz")
    body = client.get("/metrics").content.decode()
    assert "django_http_requests_latency_seconds_by_view_method" in body


def test_pages_carry_a_content_security_policy_without_inline_scripts(client):
    policy = client.get("/healthz")["Content-Security-Policy"]
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src
    assert "'unsafe-eval'" not in script_src
    assert "frame-ancestors 'none'" in policy
