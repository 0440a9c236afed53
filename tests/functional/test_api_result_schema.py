"""Real responses match the typed output components of the published schema
(planner/api/output_schema.py, issue 23 part 5): an estimate of every documented kind, a done
version, a plan, a decision with nothing priced, validated with jsonschema against the document
itself (OpenAPI 3.0 `nullable` read as draft 4 by planner.api.body_schema.validator_schema)."""

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from planner.api.body_schema import validator_schema
from planner.api.schema import SPEC_EXAMPLES
from planner.choices import VersionStatus
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def document(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():  # the output components do not depend on the catalog's enums
        return SchemaGenerator().get_schema(request=None, public=True)


def _validate(document: dict, name: str, instance) -> None:
    root = {"$ref": f"#/components/schemas/{name}",
            "components": {"schemas": validator_schema(document["components"]["schemas"])}}
    errors = sorted(jsonschema.Draft4Validator(root).iter_errors(instance), key=lambda e: list(map(str, e.path)))
    assert not errors, "\n".join(f"{'.'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:10])


@pytest.fixture
def editor(world):
    return client_for(world.users["editor"])  # noqa: F405


def test_estimates_of_every_kind_match_estimate_out(document, editor, catalog):
    # one test for all kinds: the catalog is loaded once
    for key, spec in sorted(SPEC_EXAMPLES.items()):
        response = editor.post("/api/v1/estimate/", {"spec": spec, "costs": {"currency": "RUB"}}, format="json")
        assert response.status_code == 200, (key, response.json())
        body = response.json()
        _validate(document, "EstimateOut", body)
        assert body["decision"]["status"] in ("decided", "closest_misses_targets", "nothing_priced")
    response = editor.post("/api/v1/estimate/", {"spec": SPEC_EXAMPLES["finetuning"]}, format="json",
                           HTTP_ACCEPT_LANGUAGE="ru")
    assert response.status_code == 200
    _validate(document, "EstimateOut", response.json())


def test_done_version_plan_and_status_match_their_components(document, editor, world, real_result):
    version = make_version(world.plan, 2, VersionStatus.DONE, result=real_result)  # noqa: F405
    base = f"/api/v1/plans/{world.plan.id}/"
    body = editor.get(f"{base}versions/{version.number}/").json()
    assert body["result"]["decision"]["option_id"]
    _validate(document, "VersionOut", body)
    _validate(document, "PlanResult", body["result"])
    _validate(document, "PlanOut", editor.get(base).json())
    _validate(document, "VersionStatusOut", editor.get(f"{base}versions/{version.number}/status/").json())


def test_a_version_without_result_matches(document, editor, world):
    make_version(world.plan, 2, VersionStatus.FAILED)  # noqa: F405
    body = editor.get(f"/api/v1/plans/{world.plan.id}/versions/2/").json()
    assert body["result"] is None and body["exports"] == {}
    _validate(document, "VersionOut", body)


def test_nothing_priced_decision_matches(document):
    from planner import plan_decision
    from planner.i18n import for_api

    decision = for_api(plan_decision.build(sizing={"kind": "inference"}, costs={}, spec={"kind": "inference"}))
    assert decision["status"] == "nothing_priced"
    _validate(document, "PlanDecision", decision)


def test_components_refuse_a_wrong_shape(document):
    with pytest.raises(AssertionError):
        _validate(document, "PlanDecision", {"status": "maybe", "kind": "inference", "why": "x"})
    with pytest.raises(AssertionError):
        _validate(document, "DecisionBudget", {"total": 12.5})  # money is a decimal string
