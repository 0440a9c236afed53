"""Every text entry of the API refuses NUL, unpaired surrogates and 100,000-level nesting.

Generic over the live OpenAPI schema, so endpoints added later are covered without edits:
for every operation, every string property of its request body (at any depth, read from the
schema), a hostile key at every object level, a 100,000-level nested body, every query
parameter, the URL path and the Idempotency-Key header. Each answer is a 400 in the API's
error shape naming the field, and nothing is written (row counts of every model unchanged).
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from django.apps import apps

from .api_fixtures import *  # noqa: F403
from .api_fixtures import client_for

pytestmark = pytest.mark.django_db

NUL, LONE_SURROGATE = "a\x00b", "a\ud800b"
DEEP_LEVELS = 100_000


def _schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = schema["components"]["schemas"][name]
    if "allOf" in node:  # drf-spectacular wraps refs with extra keywords in allOf
        merged: dict = {}
        for part in node["allOf"]:
            part = _resolve(schema, part)
            if "properties" in part:  # an enum component (a string) has none: it stays a string
                merged.setdefault("properties", {}).update(part["properties"])
            merged.setdefault("type", part.get("type"))
        return merged
    return node


def _body_from(schema: dict, node: dict, depth: int = 0):
    """A body with every property the schema declares (values need not be valid: the parser
    rejects hostile text before anything else looks at the body)."""
    node = _resolve(schema, node)
    if "oneOf" in node and "properties" not in node:  # one of several bodies (a run per kind): the first
        node = _resolve(schema, node["oneOf"][0])
    kind = node.get("type")
    if "properties" in node or kind == "object":
        if depth > 6:
            return {}
        return {k: _body_from(schema, v, depth + 1) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        return [_body_from(schema, node.get("items", {}), depth + 1)]
    if kind == "string":
        return "x"
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return "x"


def _paths(value, path=()):
    """(path as a tuple of keys, "leaf"/"object") of every leaf and every object (keys may
    hold dots, e.g. the rate name `cloud_storage_per_gb_month.nvme`)."""
    if isinstance(value, dict):
        yield path, "object"
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))
    else:
        yield path, "leaf"


def _dotted(path) -> str:
    return ".".join(str(p) for p in path)


def _get(doc, path):
    node = doc
    for part in path:
        node = node[part]
    return node


def _set(doc, path, value):
    _get(doc, path[:-1])[path[-1]] = value


def _operations(schema: dict):
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield path, method, op


@pytest.fixture
def owner_world(world):
    from planner.services import share_link_create

    world.link, _token = share_link_create(plan=world.plan, user=world.users["owner"])
    return world


def _url(path: str, world) -> str:
    ids = {"id": None, "pk": None, "plan_id": world.plan.id, "number": 1, "fmt": "csv", "slug": "x", "token": "t"}
    if path.startswith("/api/v1/workloads/"):
        ids["id"] = world.workload.id
    elif path.startswith("/api/v1/plans/{plan_id}/share-links/"):
        ids["id"] = world.link.id
    else:
        ids["id"] = world.plan.id
    return re.sub(r"\{(\w+)\}", lambda m: str(ids.get(m.group(1)) or 1), path)


def _counts() -> dict:
    return {m._meta.label: m.objects.count() for m in apps.get_models() if not m._meta.proxy}


def _assert_refused(response, field_prefix: str | None):
    assert response.status_code == 400, (response.status_code, response.content[:300])
    body = response.json()
    assert body["type"] == "urn:gpu-planner:error:validation"
    if field_prefix is not None:
        assert any((e["field"] or "").startswith(field_prefix) for e in body["errors"]), body


def _send(client, method, url, body):
    return getattr(client, method)(url, data=json.dumps(body, ensure_ascii=True), content_type="application/json")


def test_every_string_and_key_of_every_request_body_refuses_nul_and_lone_surrogates(owner_world):
    schema = _schema()
    client = client_for(owner_world.users["owner"])
    before = _counts()
    checked = 0
    for path, method, op in _operations(schema):
        content = (op.get("requestBody") or {}).get("content", {}).get("application/json")
        if not content:
            continue
        base = _body_from(schema, content["schema"])
        url = _url(path, owner_world)
        for where, kind in list(_paths(base)):
            for bad in (NUL, LONE_SURROGATE):
                body = copy.deepcopy(base)
                if kind == "object":  # a hostile key inside this object
                    target = _get(body, where)
                    target["k" + bad] = "x"
                    _assert_refused(_send(client, method, url, body), _dotted(where) or None)
                elif isinstance(_get(base, where), str):
                    _set(body, where, bad)
                    _assert_refused(_send(client, method, url, body), _dotted(where))
                checked += 1
    assert checked > 50, "the schema should give many text fields to check"
    assert _counts() == before


def test_every_request_body_refuses_100000_levels_of_nesting_before_parsing_it(owner_world):
    schema = _schema()
    client = client_for(owner_world.users["owner"])
    deep = '{"a":' * DEEP_LEVELS + "1" + "}" * DEEP_LEVELS
    before, checked = _counts(), 0
    for path, method, op in _operations(schema):
        if "requestBody" not in op:
            continue
        response = getattr(client, method)(_url(path, owner_world), data=deep, content_type="application/json")
        if "application/json" not in op["requestBody"].get("content", {}):
            # A multipart-only operation (file uploads) never parses JSON: refused unparsed.
            assert response.status_code == 415, (path, response.status_code)
            continue
        _assert_refused(response, None)
        assert "nested deeper" in json.dumps(response.json())
        checked += 1
    assert checked >= 5
    assert _counts() == before


def test_every_query_parameter_the_path_and_headers_refuse_nul(owner_world):
    schema = _schema()
    client = client_for(owner_world.users["owner"])
    before, checked = _counts(), 0
    for path, method, op in _operations(schema):
        url = _url(path, owner_world)
        names = [p["name"] for p in op.get("parameters", []) if p["in"] == "query"] + ["unknown_param"]
        for name in names:
            response = getattr(client, method)(f"{url}?{name}=a%00b")
            _assert_refused(response, f"query.{name}")
            checked += 1
        _assert_refused(getattr(client, method)(f"{url}?a%00b=1"), "query")
    assert checked > 40
    _assert_refused(client.get("/api/v1/workloads/?kind=%00"), "query.kind")
    _assert_refused(client.get("/api/v1/plans/%00/"), "path")
    response = client.post("/api/v1/plans/", data={"workload": owner_world.workload.id}, format="json",
                           HTTP_IDEMPOTENCY_KEY="k\x00")
    _assert_refused(response, "header.Idempotency-Key")
    assert _counts() == before


def test_errors_under_the_api_prefix_are_always_json(owner_world, client):
    from django.contrib.auth import get_user_model

    assert client.get("/api/v1/no-such-thing/").json()["status"] == 404
    # A session-authenticated unsafe request without the CSRF header: a JSON 403.
    user = get_user_model().objects.get(username="owner-a")
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(user)
    response = csrf_client.post("/api/v1/workloads/", data="{}", content_type="application/json")
    assert response.status_code == 403 and response["Content-Type"].startswith("application/json")
    assert response.json()["type"] == "urn:gpu-planner:error:forbidden"
