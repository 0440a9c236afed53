"""The API's JSON is gzip-compressed for a client that accepts it (an estimate or a saved plan's result
is ~450 KB of JSON); pages and exports are not (HTML carries the CSRF token; PDF and XLSX are compressed already)."""

import gzip
import json

import pytest

from planner.api.schema import SPEC_EXAMPLES
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


def test_an_estimate_comes_gzipped_when_accepted(world, catalog):
    # done versions were gzipped by their view already (a cached body); this is every other JSON answer
    editor = client_for(world.users["editor"])  # noqa: F405
    body = {"spec": SPEC_EXAMPLES["inference"], "costs": {"currency": "RUB"}}
    plain = editor.post("/api/v1/estimate/", body, format="json")
    zipped = editor.post("/api/v1/estimate/", body, format="json", HTTP_ACCEPT_ENCODING="gzip")
    assert plain.status_code == zipped.status_code == 200
    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped["Vary"]
    assert json.loads(gzip.decompress(zipped.content)) == plain.json()
    assert len(zipped.content) < len(plain.content) / 4


def test_no_gzip_when_refused(world, catalog):
    editor = client_for(world.users["editor"])  # noqa: F405
    body = {"spec": SPEC_EXAMPLES["inference"], "costs": {"currency": "RUB"}}
    response = editor.post("/api/v1/estimate/", body, format="json", HTTP_ACCEPT_ENCODING="gzip;q=0, identity")
    assert response.status_code == 200 and "Content-Encoding" not in response


def test_pages_are_not_gzipped(world, client):
    client.force_login(world.users["editor"])
    page = client.get(f"/plans/{world.plan.id}/", HTTP_ACCEPT_ENCODING="gzip")
    assert page.status_code == 200 and len(page.content) > 200
    assert "Content-Encoding" not in page
