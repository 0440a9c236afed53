"""serving.requests_per_day through the form and the API: bad values (above what the peak allows in a
day, <= 0, not a number) are field errors and write nothing; a good value reaches the spec and the
priced API option's token volume."""

from decimal import Decimal as D

import pytest
from django.urls import reverse

from planner.choices import Role
from planner.models import Plan, PlanVersion, Workload
from tests.functional.api_fixtures import *  # noqa: F403
from tests.planner_factories import member

pytestmark = pytest.mark.django_db
FORM = {"name": "Chat", "kind": "inference", "model_source": "preset", "preset": "llama-3.1-8b",
        "horizon_months": "36", "currency": "USD",
        "serving__requests_per_second": "5", "serving__hours_per_day": "10",
        "serving__input_tokens": "2000", "serving__output_tokens": "400"}
SPEC = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
        "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5, "hours_per_day": 10}}


def _counts():
    return Workload.objects.count(), Plan.objects.count(), PlanVersion.objects.count()


@pytest.fixture
def editor(client):
    user = member(Role.EDITOR)
    client.force_login(user)
    return user


@pytest.mark.parametrize("value", ["180001", "0", "-5", "lots"])
def test_form_refuses_a_bad_volume_on_its_field(client, editor, value):
    data = {**FORM, "team": editor.memberships.get().team_id, "serving__requests_per_day": value}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code == 400
    assert "serving__requests_per_day" in response.context["form"].errors
    assert _counts() == (0, 0, 0)


def test_form_error_above_the_peak_says_the_maximum(client, editor):
    data = {**FORM, "team": editor.memberships.get().team_id, "serving__requests_per_day": "180001"}
    response = client.post(reverse("workload_create"), data)
    assert "180,000" in " ".join(response.context["form"].errors["serving__requests_per_day"])


def test_form_builds_requests_per_day_into_the_spec():
    from planner.forms import WorkloadForm

    form = WorkloadForm(data={**FORM, "serving__requests_per_day": "6000"})
    form.is_valid()
    assert form.build_spec()["serving"]["requests_per_day"] == 6000


@pytest.mark.parametrize("value", [180_001, 0, -5, "lots", True])
@pytest.mark.parametrize("url", ["/api/v1/estimate/", "/api/v1/workloads/"])
def test_api_400_names_serving_requests_per_day(world, url, value):
    client = client_for(world.users["editor"])  # noqa: F405
    before = _counts()
    spec = {**SPEC, "serving": {**SPEC["serving"], "requests_per_day": value}}
    response = client.post(url, {"team": world.team.id, "name": "x", "spec": spec}, format="json")
    assert response.status_code == 400, response.json()
    assert "spec.serving.requests_per_day" in {e["field"] for e in response.json()["errors"]}
    assert _counts() == before


def test_estimate_prices_the_api_option_on_the_volume(world, real_snapshots, monkeypatch):
    from planner.api import estimate

    monkeypatch.setattr(estimate, "_snapshots", lambda as_of: real_snapshots)
    client = client_for(world.users["viewer"])  # noqa: F405
    spec = {**SPEC, "serving": {**SPEC["serving"], "requests_per_day": 6000}}
    response = client.post("/api/v1/estimate/", {"spec": spec, "costs": {"options": ["api"]}}, format="json")
    assert response.status_code == 200, response.json()
    options = [o for o in response.json()["costs"]["options"] if o["kind"] == "api"]
    assert options
    lines = [ln for o in options for row in o.get("rows") or () for ln in row.get("lines") or ()
             if ln["key"] == "gpu_time.api_tokens"]  # alternatives may come without their lines
    assert lines
    for line in lines:
        # 6000 requests/day x 730/24 days x 2000 (400) tokens
        assert D(line["inputs"]["tokens_in_per_month"]) == D(365_000_000)
        assert D(line["inputs"]["tokens_out_per_month"]) == D(73_000_000)
