"""POST /api/v1/estimate/: synchronous, stateless sizing + costs; nothing is saved."""

import pytest

from planner.api.schema import SPEC_EXAMPLES
from planner.models import Plan, PlanVersion, Workload
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
URL = "/api/v1/estimate/"


@pytest.fixture
def viewer(world):
    return client_for(world.users["viewer"])  # noqa: F405


@pytest.fixture
def catalog_today(real_snapshots, monkeypatch):
    """The shipped catalog's snapshots, as the estimate would build them from the database."""
    from planner.api import estimate

    monkeypatch.setattr(estimate, "_snapshots", lambda as_of: real_snapshots)


def _counts():
    return Plan.objects.count(), PlanVersion.objects.count(), Workload.objects.count()


@pytest.mark.parametrize("kind", ["inference", "external_api"])
def test_estimate_returns_sizing_and_costs(catalog_today, viewer, kind):
    response = viewer.post(URL, {"spec": SPEC_EXAMPLES[kind]}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert {"as_of", "engine_version", "sizing", "costs"} <= set(body)
    assert body["sizing"]


def test_estimate_reads_the_catalog_from_the_database(catalog, viewer):
    response = viewer.post(URL, {"spec": SPEC_EXAMPLES["inference"]}, format="json")
    assert response.status_code == 200, response.json()


def test_estimate_matches_a_plan_version_computed_today(world, catalog, django_capture_on_commit_callbacks):
    client = client_for(world.users["editor"])  # noqa: F405
    spec = SPEC_EXAMPLES["inference"]
    estimate = client.post(URL, {"spec": spec}, format="json").json()
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/api/v1/plans/", {"team": world.team.id, "spec": spec}, format="json").json()
    version = client.get(created["version_url"]).json()
    assert version["result"]["sizing"] == estimate["sizing"]
    # the version's result names some options; its options_url lists every one the estimate lists
    every = client.get(version["options_url"]).json()
    assert every["options"] == estimate["costs"]["options"]
    assert every["skipped"] == estimate["costs"]["skipped"]
    assert estimate["costs"]["options"]  # priced, not empty
    named = {o["id"] for o in version["result"]["costs"]["options"]}
    assert [o for o in estimate["costs"]["options"] if o["id"] in named] == version["result"]["costs"]["options"]


def test_estimate_saves_nothing(catalog_today, viewer):
    before = _counts()
    viewer.post(URL, {"spec": SPEC_EXAMPLES["inference"]}, format="json")
    assert _counts() == before


def test_estimate_spec_errors_have_spec_paths(viewer):
    response = viewer.post(URL, {"spec": {"kind": "inference", "model": {"preset": "nope"}}}, format="json")
    assert response.status_code == 400
    assert "spec.model.preset" in [e["field"] for e in response.json()["errors"]]


def test_estimate_cost_errors_have_costs_paths(viewer):
    body = {"spec": SPEC_EXAMPLES["inference"], "costs": {"horizon_months": "soon"}}
    response = viewer.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "costs.horizon_months"


def test_estimate_needs_authentication(anon):
    assert anon.post(URL, {"spec": SPEC_EXAMPLES["inference"]}, format="json").status_code == 401
