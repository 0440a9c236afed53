"""Plans: create (202, idempotent), status, result with ETag, versions, recompute (409), diff."""

import pytest

from planner.choices import VersionStatus
from planner.models import IdempotencyKey, Plan, PlanVersion, Workload
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
PLANS = "/api/v1/plans/"


@pytest.fixture
def editor(world):
    return client_for(world.users["editor"])  # noqa: F405


def _v(world, n=1, suffix=""):
    return f"{PLANS}{world.plan.id}/versions/{n}/{suffix}"


# --- create ----------------------------------------------------------------------------


def test_create_from_workload_is_202_with_urls(world, editor):
    response = editor.post(PLANS, {"workload": world.workload.id, "name": "Q3"}, format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    plan = Plan.objects.get(pk=body["plan"]["id"])
    assert body["status_url"] == f"{PLANS}{plan.id}/versions/1/status/"
    assert body["version_url"] == f"{PLANS}{plan.id}/versions/1/"
    assert response["Location"] == body["status_url"]
    assert plan.versions.count() == 1


def test_create_with_inline_spec_saves_a_workload(world, editor):
    body = {"team": world.team.id, "spec": INFERENCE_SPEC, "name": "inline"}  # noqa: F405
    response = editor.post(PLANS, body, format="json")
    assert response.status_code == 202, response.json()
    plan = Plan.objects.get(pk=response.json()["plan"]["id"])
    assert plan.workload.spec == INFERENCE_SPEC  # noqa: F405


def test_create_needs_workload_or_team_and_spec(editor):
    response = editor.post(PLANS, {"name": "x"}, format="json")
    assert {e["field"] for e in response.json()["errors"]} == {"team", "spec"}


def test_create_with_invalid_costs_saves_nothing(world, editor):
    before = (Plan.objects.count(), Workload.objects.count())
    body = {"team": world.team.id, "spec": INFERENCE_SPEC, "costs": {"utilisation": 7}}  # noqa: F405
    response = editor.post(PLANS, body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "costs.utilisation"
    assert (Plan.objects.count(), Workload.objects.count()) == before


def test_create_with_foreign_workload_is_404(world, editor):
    foreign = Workload.objects.create(team=world.other_team, name="t", kind="inference", spec=INFERENCE_SPEC)  # noqa: F405
    response = editor.post(PLANS, {"workload": foreign.id}, format="json")
    assert response.status_code == 404
    assert response.json()["errors"][0]["field"] == "workload"


def test_idempotency_key_returns_the_same_plan(world, editor):
    body = {"workload": world.workload.id, "name": "once"}
    first = editor.post(PLANS, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    second = editor.post(PLANS, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.json()["plan"]["id"] == second.json()["plan"]["id"]
    assert second["Idempotent-Replayed"] == "true"
    assert Plan.objects.filter(name="once").count() == 1


def test_idempotency_key_with_another_body_is_409(world, editor):
    editor.post(PLANS, {"workload": world.workload.id, "name": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    response = editor.post(PLANS, {"workload": world.workload.id, "name": "b"}, format="json",
                           HTTP_IDEMPOTENCY_KEY="k-2")
    assert response.status_code == 409
    assert Plan.objects.filter(name="b").count() == 0


def test_idempotency_keys_are_per_user(world, editor):
    body = {"workload": world.workload.id, "name": "shared-key"}
    editor.post(PLANS, body, format="json", HTTP_IDEMPOTENCY_KEY="k-3")
    owner = client_for(world.users["owner"])  # noqa: F405
    owner.post(PLANS, body, format="json", HTTP_IDEMPOTENCY_KEY="k-3")
    assert Plan.objects.filter(name="shared-key").count() == 2
    assert IdempotencyKey.objects.filter(key="k-3").count() == 2


# --- read ------------------------------------------------------------------------------


def test_list_plans_with_latest_status(world, editor):
    rows = editor.get(PLANS).json()["results"]
    assert [(r["id"], r["latest_version"], r["latest_status"]) for r in rows] == [(world.plan.id, 1, "done")]


def test_plan_detail(world, editor):
    assert editor.get(f"{PLANS}{world.plan.id}/").json()["name"] == "Chat plan"


def test_status_of_done_version(world, editor):
    body = editor.get(_v(world, suffix="status/")).json()
    assert (body["status"], body["finished"], body["url"]) == ("done", True, _v(world))


def test_status_of_pending_version_asks_to_retry_later(world, editor):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    response = editor.get(_v(world, 2, "status/"))
    assert response.json()["finished"] is False
    assert response["Retry-After"] == "2"


def test_done_version_has_result_and_etag(world, editor):
    response = editor.get(_v(world))
    assert response.json()["result"] == STORED_RESULT  # noqa: F405
    assert response["ETag"]


def test_if_none_match_gives_304(world, editor):
    etag = editor.get(_v(world))["ETag"]
    response = editor.get(_v(world), HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert not response.content


def test_served_twice_the_body_is_the_same(world, editor):
    first, second = editor.get(_v(world)), editor.get(_v(world))
    assert first.content == second.content
    assert first["Content-Type"] == second["Content-Type"] == "application/json"


def test_gzip_when_the_client_accepts_it(world, editor):
    import gzip
    import json

    response = editor.get(_v(world), HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert response["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(response.content))["result"] == STORED_RESULT  # noqa: F405


def test_no_gzip_when_refused(world, editor):
    response = editor.get(_v(world), HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert not response.has_header("Content-Encoding")


def test_cached_body_is_still_access_checked(world, editor):
    editor.get(_v(world))  # warms the per-process cache of done bodies
    outsider = client_for(world.users["other_team"])  # noqa: F405
    assert outsider.get(_v(world)).status_code == 404


def test_stale_etag_gives_200(world, editor):
    assert editor.get(_v(world), HTTP_IF_NONE_MATCH='"something-else"').status_code == 200


def test_pending_version_has_no_etag(world, editor):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    response = editor.get(_v(world, 2))
    assert response.json()["result"] is None
    assert not response.has_header("ETag")


def test_versions_list_newest_first(world, editor):
    make_version(world.plan, 2, VersionStatus.FAILED)  # noqa: F405
    rows = editor.get(f"{PLANS}{world.plan.id}/versions/").json()["results"]
    assert [(r["number"], r["status"]) for r in rows] == [(2, "failed"), (1, "done")]


def test_unknown_version_is_404(world, editor):
    assert editor.get(_v(world, 99)).status_code == 404


def test_version_number_beyond_64_bits_is_404(world, editor):
    assert editor.get(f"{PLANS}{world.plan.id}/versions/{2**64}/").status_code == 404


# --- recompute and diff ----------------------------------------------------------------


def test_recompute_makes_a_new_version(world, editor):
    response = editor.post(f"{PLANS}{world.plan.id}/recompute/", {}, format="json")
    assert response.status_code == 202, response.json()
    assert response.json()["number"] == 2
    assert world.plan.versions.count() == 2
    world.version.refresh_from_db()
    assert world.version.result == STORED_RESULT  # noqa: F405


def test_recompute_while_pending_is_409(world, editor):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    response = editor.post(f"{PLANS}{world.plan.id}/recompute/", {}, format="json")
    assert response.status_code == 409
    assert world.plan.versions.count() == 2


def test_diff_lists_changed_paths(world, editor):
    other = {"sizing": {"gpu_count": 4, "accelerator": "test-accelerator"}, "costs": {"currency": "USD"}}
    make_version(world.plan, 2, VersionStatus.DONE, result=other)  # noqa: F405
    body = editor.get(f"{PLANS}{world.plan.id}/diff/?from=1&to=2").json()
    assert body["result"] == [{"path": "sizing.gpu_count", "before": 2, "after": 4}]
    assert body["inputs"] == []


def test_diff_with_unfinished_version_has_no_result_diff(world, editor):
    make_version(world.plan, 2, VersionStatus.PENDING)  # noqa: F405
    assert editor.get(f"{PLANS}{world.plan.id}/diff/?from=1&to=2").json()["result"] is None


def test_diff_needs_both_numbers(world, editor):
    response = editor.get(f"{PLANS}{world.plan.id}/diff/?from=1")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "to", "message": "This parameter is required."}]


def test_diff_with_unknown_version_is_404_naming_the_parameter(world, editor):
    response = editor.get(f"{PLANS}{world.plan.id}/diff/?from=1&to=7")
    assert response.status_code == 404
    assert response.json()["errors"] == [{"field": "to", "message": "No such version of this plan."}]


def test_done_version_rows_are_never_rewritten_by_reads(world, editor):
    before = PlanVersion.objects.filter(pk=world.version.pk).values().get()
    editor.get(_v(world))
    editor.get(f"{PLANS}{world.plan.id}/diff/?from=1&to=1")
    assert PlanVersion.objects.filter(pk=world.version.pk).values().get() == before


def test_inline_spec_name_longer_than_the_column_is_400(world, editor):
    spec = {**INFERENCE_SPEC, "name": "n" * 1000}  # noqa: F405
    response = editor.post(PLANS, {"team": world.team.id, "spec": spec}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "spec.name"
