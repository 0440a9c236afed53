"""One JSON error shape for every error; bad input is a 4xx, never a 500."""

import json

import pytest
from django.test import override_settings

from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


def _shape(response, status):
    body = response.json()
    assert response.status_code == status, body
    assert set(body) == {"type", "title", "status", "errors"}
    assert body["status"] == status
    assert body["type"].startswith("urn:gpu-planner:error:")
    return body


@pytest.fixture
def editor(world):
    return client_for(world.users["editor"])  # noqa: F405


def test_spec_errors_carry_field_paths(world, editor):
    spec = {"kind": "inference", "model": {"preset": "no-such-model"}}
    response = editor.post("/api/v1/workloads/", {"team": world.team.id, "name": "x", "spec": spec}, format="json")
    body = _shape(response, 400)
    assert "spec.model.preset" in [e["field"] for e in body["errors"]]


def test_serializer_errors_carry_field_paths(world, editor):
    response = editor.post("/api/v1/workloads/", {"team": "abc", "spec": []}, format="json")
    fields = {e["field"] for e in _shape(response, 400)["errors"]}
    assert fields == {"team", "name", "spec"}


def test_malformed_json_is_400(editor):
    response = editor.generic("POST", "/api/v1/estimate/", "{not json", content_type="application/json")
    assert _shape(response, 400)["errors"][0]["field"] is None


def test_deep_json_is_400(editor):
    body = "[" * 100_000 + "]" * 100_000
    response = editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json")
    _shape(response, 400)


def test_moderately_deep_json_is_400(editor):
    body = json.dumps({"spec": json.loads("[" * 40 + "]" * 40)})
    _shape(editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json"), 400)


def test_huge_integer_is_400(editor):
    body = '{"spec": {"kind": "inference", "x": ' + "9" * 5000 + "}}"
    _shape(editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json"), 400)


def test_infinite_float_is_400(editor):
    body = '{"spec": {"kind": "inference", "x": 1e400}}'
    _shape(editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json"), 400)


def test_nan_is_400(editor):
    body = '{"spec": {"kind": "inference", "x": NaN}}'
    _shape(editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json"), 400)


def test_huge_number_inside_a_valid_spec_is_400_with_path(world, editor):
    spec = {**INFERENCE_SPEC, "serving": {**INFERENCE_SPEC["serving"], "concurrency": 10**30}}  # noqa: F405
    response = editor.post("/api/v1/workloads/", {"team": world.team.id, "name": "x", "spec": spec}, format="json")
    assert "spec.serving.concurrency" in [e["field"] for e in _shape(response, 400)["errors"]]


def test_wrong_content_type_is_415(editor):
    response = editor.generic("POST", "/api/v1/estimate/", "spec=1", content_type="application/x-www-form-urlencoded")
    _shape(response, 415)


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_oversized_body_is_413(editor):
    body = json.dumps({"spec": {"kind": "inference", "name": "x" * 2000}})
    _shape(editor.generic("POST", "/api/v1/estimate/", body, content_type="application/json"), 413)


def test_method_not_allowed_is_405(editor):
    _shape(editor.delete("/api/v1/estimate/"), 405)


def test_unknown_api_url_is_json_404(editor):
    _shape(editor.get("/api/v1/no-such-thing/"), 404)


@pytest.mark.parametrize("debug", [True, False])
def test_a_path_id_that_matches_no_url_is_json_404_with_debug_on_or_off(editor, settings, debug):
    """Found by schemathesis: with DEBUG on, a non-numeric id (no URL matches) got Django's HTML
    technical 404 under /api/v1/."""
    settings.DEBUG = debug
    response = editor.delete("/api/v1/workloads/%C3%96S%0An%0B/")  # a newline: no pattern matches
    assert response["Content-Type"].startswith("application/")
    _shape(response, 404)


def test_bad_query_parameter_is_400(editor):
    body = _shape(editor.get("/api/v1/plans/?team=abc"), 400)
    assert body["errors"][0]["field"] == "team"


def test_out_of_range_id_is_404(editor):
    _shape(editor.get(f"/api/v1/plans/{2**70}/"), 404)


def test_throttled_is_429_with_retry_after(world, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    # The rates are read once from settings (API_THROTTLE_RATE); lower them for this test.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"token": "2/min", "anon": "2/min"})
    client = client_for(world.users["viewer"])  # noqa: F405
    codes = [client.get("/api/v1/me/").status_code for _ in range(2)]
    third = client.get("/api/v1/me/")
    assert codes == [200, 200]
    _shape(third, 429)
    assert int(third["Retry-After"]) > 0


def test_anonymous_is_throttled_per_ip(anon, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"token": "2/min", "anon": "1/min"})
    # Public share-link reads are where anonymous rates matter (guessing tokens).
    assert anon.get("/api/v1/shared/guess-1/").status_code == 404
    _shape(anon.get("/api/v1/shared/guess-2/"), 429)
