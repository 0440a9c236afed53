"""The web forms refuse NUL, unpaired surrogates (in JSON fields) and 100,000-level nesting
with a form error on the field, and save nothing; query parameters of pages answer 400.

Every field of the workload form and the assumptions form is tried (the list comes from the
form classes, so fields added later are covered too).
"""

import json

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from planner.choices import Role
from planner.forms import CostOptionsForm, WorkloadForm
from planner.models import Team
from tests.planner_factories import PlanFactory, member

from .test_planner_workload_form import BASE

pytestmark = pytest.mark.django_db

NUL = "a\x00b"
DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000
JSON_ESCAPES = {"nul": '{"model_type": "a\\u0000b"}', "surrogate": '{"model_type": "a\\ud800b"}',
                "surrogate key": '{"a\\udc00": 1}', "deep": DEEP}


def _counts() -> dict:
    return {m._meta.label: m.objects.count() for m in apps.get_models() if not m._meta.proxy}


@pytest.fixture
def editor(client):
    user = member(Role.EDITOR)
    client.force_login(user)
    return user


def _post_workload(client, editor, **changes):
    data = {**BASE, "team": str(editor.memberships.get().team_id), **changes}
    return client.post(reverse("workload_create"), data)


def test_a_nul_in_any_workload_form_field_is_a_form_error_on_that_field(client, editor):
    names = [n for n in WorkloadForm(teams=Team.objects.none()).fields if n != "hf_config_file"]
    assert len(names) > 20
    before = _counts()
    for name in names:
        response = _post_workload(client, editor, **{name: NUL})
        assert response.status_code == 400, name
        assert name in response.context["form"].errors, name
    assert _counts() == before


@pytest.mark.parametrize("case", sorted(JSON_ESCAPES))
def test_hostile_config_json_pasted_or_uploaded_is_a_form_error(client, editor, case):
    before = _counts()
    pasted = _post_workload(client, editor, model_source="hf_config", preset="", hf_config=JSON_ESCAPES[case])
    assert pasted.status_code == 400 and "hf_config" in pasted.context["form"].errors
    upload = SimpleUploadedFile("config.json", JSON_ESCAPES[case].encode(), content_type="application/json")
    uploaded = _post_workload(client, editor, model_source="hf_config", preset="", hf_config_file=upload)
    assert uploaded.status_code == 400 and "hf_config_file" in uploaded.context["form"].errors
    # (A NUL in an upload's file name never reaches a form: Django's multipart parser drops it.)
    assert _counts() == before


def test_the_assumptions_form_refuses_hostile_text_in_every_field(client):
    plan = PlanFactory()
    owner = member(Role.OWNER, team=plan.team)
    client.force_login(owner)
    from tests.planner_factories import PlanVersionFactory

    PlanVersionFactory(plan=plan)
    url = reverse("plan_assumptions", args=[plan.id])
    base = {"horizon_months": "36", "currency": "USD"}
    before = _counts()
    for name in CostOptionsForm().fields:
        response = client.post(url, {**base, name: NUL})
        assert response.status_code == 400, name
        assert name in response.context["assumptions_form"].errors, name
    for case, text in JSON_ESCAPES.items():
        response = client.post(url, {**base, "overrides": text.replace("model_type", "pue")})
        assert response.status_code == 400, case
        assert "overrides" in response.context["assumptions_form"].errors, case
    assert _counts() == before


@pytest.mark.parametrize("url", ["/catalog/?vendor=a%00b", "/catalog/?a%00=1", "/?q=%00", "/plans/compare/?plans=%00"])
def test_a_nul_in_a_page_query_parameter_is_a_400_naming_it(client, editor, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "query" in response.content.decode()


def test_shared_link_paths_with_nul_are_refused(client):
    assert client.get("/s/a%00b/").status_code == 400
    assert json.loads(client.get("/api/v1/shared/a%00b/").content)["errors"][0]["field"] == "path"
