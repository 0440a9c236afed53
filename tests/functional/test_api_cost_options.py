"""Bad cost options (issue 13) are field errors with paths, never a 500, and change nothing."""

import pytest

from planner.models import Plan, Workload
from tests.functional.api_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
PLANS = "/api/v1/plans/"

BAD = [
    ({"no_such_field": 1}, "costs.no_such_field"),
    ({"runs": -1}, "costs.runs"),
    ({"runs_per_month": -2}, "costs.runs_per_month"),
    ({"discount_rate": 1}, "costs.discount_rate"),
    ({"discount_rate": 1.5}, "costs.discount_rate"),
    ({"country": "ZZ", "include_vat": False}, "costs.country"),
    # issue 20: the decision rule and the cost of an hour of downtime (no hidden default)
    ({"decision_basis": "cheap"}, "costs.decision_basis"),
    ({"decision_basis": "risk_adjusted"}, "costs.downtime_cost_per_hour"),
    ({"downtime_cost_per_hour": -1}, "costs.downtime_cost_per_hour"),
    ({"support_lines": [{"label": "x", "amount": 1, "currency": "USD", "per": "week"}]}, "costs.support_lines[0].per"),
    ({"server_prices": [{"accelerator": "a", "gpus_per_server": 8, "amount": 1, "currency": "USD", "price": 2}]},
     "costs.server_prices[0].price"),
]


@pytest.mark.parametrize(("costs", "field"), BAD, ids=[f for _c, f in BAD])
def test_bad_cost_option_is_a_field_error_and_saves_nothing(world, costs, field):
    editor = client_for(world.users["editor"])  # noqa: F405
    before = (Plan.objects.count(), Workload.objects.count())
    body = {"team": world.team.id, "spec": INFERENCE_SPEC, "costs": costs}  # noqa: F405
    response = editor.post(PLANS, body, format="json")
    assert response.status_code == 400, response.content
    assert field in [e["field"] for e in response.json()["errors"]]
    assert (Plan.objects.count(), Workload.objects.count()) == before


def test_a_service_at_utilisation_zero_is_refused_on_submission(world):
    """The rule joining spec and costs is checked before anything is written (it used to fail
    the computed version instead)."""
    editor = client_for(world.users["editor"])  # noqa: F405
    before = (Plan.objects.count(), Workload.objects.count())
    body = {"team": world.team.id, "spec": INFERENCE_SPEC, "costs": {"utilisation": 0}}  # noqa: F405
    response = editor.post(PLANS, body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == ["costs.utilisation"]
    assert "24 hours a day" in errors[0]["message"]
    assert (Plan.objects.count(), Workload.objects.count()) == before
    estimate = editor.post("/api/v1/estimate/", {"spec": INFERENCE_SPEC, "costs": {"utilisation": 0}},  # noqa: F405
                           format="json")
    assert estimate.status_code == 400
    assert [e["field"] for e in estimate.json()["errors"]] == ["costs.utilisation"]


def test_a_job_at_utilisation_zero_is_not_refused(world):
    from planner.api.schema import SPEC_EXAMPLES

    editor = client_for(world.users["editor"])  # noqa: F405
    body = {"team": world.team.id, "spec": SPEC_EXAMPLES["pretraining"], "costs": {"utilisation": 0}}
    response = editor.post(PLANS, body, format="json")
    assert response.status_code == 202, response.content


def test_a_country_without_a_vat_rate_is_refused_and_the_schema_lists_the_known(world, catalog):  # noqa: F811
    """The costing needs the country's VAT rate: a country the catalog has none for is a field error
    before anything is written (schemathesis found 'AD' refused only later, by the engine), and the
    published schema lists the countries it takes."""
    editor = client_for(world.users["editor"])  # noqa: F405
    before = (Plan.objects.count(), Workload.objects.count())
    for url, body in ((PLANS, {"team": world.team.id, "spec": INFERENCE_SPEC, "costs": {"country": "AD"}}),  # noqa: F405
                      ("/api/v1/estimate/", {"spec": INFERENCE_SPEC, "costs": {"country": "AD"}})):  # noqa: F405
        response = editor.post(url, body, format="json")
        assert response.status_code == 400, response.content
        (error,) = response.json()["errors"]
        assert error["field"] == "costs.country" and "RU" in error["message"]
    assert (Plan.objects.count(), Workload.objects.count()) == before
    schema = editor.get("/api/v1/schema/?format=json").json()
    assert schema["components"]["schemas"]["CostOptions"]["properties"]["country"]["enum"] == ["RU"]
