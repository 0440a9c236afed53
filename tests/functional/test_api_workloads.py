"""Workloads: create, read, update, delete, list; team-scoped."""

import pytest

from planner.api.schema import SPEC_EXAMPLES
from planner.models import Workload
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
SPEC_EXAMPLES_RAG = SPEC_EXAMPLES["rag"]
URL = "/api/v1/workloads/"


@pytest.fixture
def editor(world):
    return client_for(world.users["editor"])  # noqa: F405


def test_create_workload(world, editor):
    body = {"team": world.team.id, "name": "RAG", "spec": SPEC_EXAMPLES_RAG}
    response = editor.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    saved = Workload.objects.get(pk=response.json()["id"])
    assert (saved.kind, saved.team_id, saved.spec) == ("rag", world.team.id, SPEC_EXAMPLES_RAG)


def test_create_in_foreign_team_is_404_without_saving(world, editor):
    body = {"team": world.other_team.id, "name": "x", "spec": INFERENCE_SPEC}  # noqa: F405
    response = editor.post(URL, body, format="json")
    assert response.status_code == 404  # not found, as any object of a team you are not in
    assert response.json()["errors"][0]["field"] == "team"
    assert not Workload.objects.filter(team=world.other_team).exists()


def test_list_is_team_scoped(world, editor):
    Workload.objects.create(team=world.other_team, name="theirs", kind="inference", spec=INFERENCE_SPEC)  # noqa: F405
    names = [w["name"] for w in editor.get(URL).json()["results"]]
    assert names == ["Chat"]


def test_list_filters_by_kind(world, editor):
    assert editor.get(URL + "?kind=rag").json()["count"] == 0
    assert editor.get(URL + "?kind=inference").json()["count"] == 1


def test_read_workload(world, editor):
    body = editor.get(f"{URL}{world.workload.id}/").json()
    assert (body["name"], body["kind"], body["spec"]) == ("Chat", "inference", INFERENCE_SPEC)  # noqa: F405


def test_patch_renames(world, editor):
    response = editor.patch(f"{URL}{world.workload.id}/", {"name": "Chat v2"}, format="json")
    assert response.status_code == 200
    world.workload.refresh_from_db()
    assert world.workload.name == "Chat v2"


def test_put_with_invalid_spec_changes_nothing(world, editor):
    response = editor.put(f"{URL}{world.workload.id}/", {"spec": {"kind": "nope"}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "spec.kind"
    world.workload.refresh_from_db()
    assert world.workload.spec == INFERENCE_SPEC  # noqa: F405


def test_put_replaces_spec_and_kind(world, editor):
    response = editor.put(f"{URL}{world.workload.id}/", {"spec": SPEC_EXAMPLES_RAG}, format="json")
    assert response.json()["kind"] == "rag"


def test_delete_with_plans_is_409(world, editor):
    response = editor.delete(f"{URL}{world.workload.id}/")
    assert response.status_code == 409
    assert Workload.objects.filter(pk=world.workload.id).exists()


def test_delete_unused_workload(world, editor):
    w = Workload.objects.create(team=world.team, name="spare", kind="inference", spec=INFERENCE_SPEC)  # noqa: F405
    assert editor.delete(f"{URL}{w.id}/").status_code == 204
    assert not Workload.objects.filter(pk=w.id).exists()



