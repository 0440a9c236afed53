"""Permission matrix: anonymous, viewer, editor, owner, another team, a share token used as a
credential. Another team's objects answer 404 (never 403); read-only roles answer 403 on writes."""

import pytest
from rest_framework.test import APIClient

from planner.services import share_link_create
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db

ACTORS = ("anonymous", "viewer", "editor", "owner", "other_team", "share_token")


def _client(world, actor):
    if actor == "anonymous":
        return APIClient()
    if actor == "share_token":
        _link, token = share_link_create(plan=world.plan, user=world.users["owner"])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client
    return client_for(world.users[actor])  # noqa: F405


def _read(code):
    return {"anonymous": 401, "viewer": code, "editor": code, "owner": code, "other_team": 404, "share_token": 401}


def _write(code):
    return {"anonymous": 401, "viewer": 403, "editor": code, "owner": code, "other_team": 404, "share_token": 401}


def _link_id(world):
    link, _token = share_link_create(plan=world.plan, user=world.users["owner"])
    return link.id


# (name, method, url builder, body, expected status per actor)
CASES = [
    ("plan", "get", lambda w: f"/api/v1/plans/{w.plan.id}/", None, _read(200)),
    ("versions", "get", lambda w: f"/api/v1/plans/{w.plan.id}/versions/", None, _read(200)),
    ("version", "get", lambda w: f"/api/v1/plans/{w.plan.id}/versions/1/", None, _read(200)),
    ("status", "get", lambda w: f"/api/v1/plans/{w.plan.id}/versions/1/status/", None, _read(200)),
    ("diff", "get", lambda w: f"/api/v1/plans/{w.plan.id}/diff/?from=1&to=1", None, _read(200)),
    ("workload", "get", lambda w: f"/api/v1/workloads/{w.workload.id}/", None, _read(200)),
    ("share-links", "get", lambda w: f"/api/v1/plans/{w.plan.id}/share-links/", None, _read(200)),
    ("rename workload", "patch", lambda w: f"/api/v1/workloads/{w.workload.id}/", {"name": "n"}, _write(200)),
    ("create share link", "post", lambda w: f"/api/v1/plans/{w.plan.id}/share-links/", {}, _write(201)),
    ("revoke share link", "delete",
     lambda w: f"/api/v1/plans/{w.plan.id}/share-links/{_link_id(w)}/", None, _write(204)),
    ("recompute", "post", lambda w: f"/api/v1/plans/{w.plan.id}/recompute/", {}, _write(202)),
]


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize(("name", "method", "url", "body", "expected"), CASES, ids=[c[0] for c in CASES])
def test_permission_matrix(world, actor, name, method, url, body, expected):
    client = _client(world, actor)
    kwargs = {"format": "json"} if body is not None else {}
    args = (body,) if body is not None else ()
    response = getattr(client, method)(url(world), *args, **kwargs)
    assert response.status_code == expected[actor], (name, actor, response.content[:300])


@pytest.mark.parametrize("actor", ("viewer", "other_team"))
def test_plan_list_shows_only_own_teams(world, actor):
    ids = [p["id"] for p in _client(world, actor).get("/api/v1/plans/").json()["results"]]
    assert ids == ([world.plan.id] if actor == "viewer" else [])


def test_viewer_cannot_create_a_plan(world):
    response = _client(world, "viewer").post("/api/v1/plans/", {"workload": world.workload.id}, format="json")
    assert response.status_code == 403


def test_other_team_cannot_use_our_workload(world):
    response = _client(world, "other_team").post("/api/v1/plans/", {"workload": world.workload.id}, format="json")
    assert response.status_code == 404
    assert response.json()["errors"][0]["field"] == "workload"
