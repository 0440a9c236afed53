"""training.goodput / optimizer / optimizer_states / context_parallel through the form, the API and the CLI:
bad values are field errors and change nothing; good values reach the engine."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from planner.choices import Role
from planner.models import Plan, PlanVersion, Workload
from tests.functional.api_fixtures import *  # noqa: F403
from tests.planner_factories import member

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "catalog" / "data" / "accelerators.csv"
FORM = {"name": "Tune", "kind": "finetuning", "model_source": "preset", "preset": "llama-3.1-8b",
        "horizon_months": "36", "currency": "USD", "utilisation": "0.6", "training__tokens": "1e8"}
SPEC = {"kind": "finetuning", "model": {"preset": "llama-3.1-8b"},
        "training": {"tokens": 1e8, "method": "qlora", "optimizer": "paged_adamw_8bit", "goodput": 0.8,
                     "context_parallel": 1}}


def _counts():
    return Workload.objects.count(), Plan.objects.count(), PlanVersion.objects.count()


@pytest.fixture
def editor(client):
    user = member(Role.EDITOR)
    client.force_login(user)
    return user


@pytest.mark.parametrize(("field", "value"), [
    ("training__goodput", "1.5"), ("training__goodput", "0"), ("training__optimizer", "lion"),
    ("training__context_parallel", "3"),
])
def test_form_rejects_bad_training_values_on_their_field(client, editor, field, value):
    data = {**FORM, "team": editor.memberships.get().team_id, field: value}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert _counts() == (0, 0, 0)


def test_form_sends_the_state_precision_conflict_to_its_field(client, editor):
    data = {**FORM, "team": editor.memberships.get().team_id, "training__optimizer": "adamw_8bit",
            "training__optimizer_states": "fp32"}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code == 400
    assert "training__optimizer_states" in response.context["form"].errors
    assert _counts() == (0, 0, 0)


def test_form_builds_the_new_fields_into_the_spec():
    from planner.forms import WorkloadForm

    form = WorkloadForm(data={**FORM, "training__goodput": "0.85", "training__context_parallel": "2",
                              "training__optimizer": "paged_adamw_8bit", "training__master_weights": "none"})
    form.is_valid()
    spec = form.build_spec()
    assert spec["training"]["goodput"] == 0.85 and spec["training"]["context_parallel"] == 2
    assert spec["training"]["optimizer"] == "paged_adamw_8bit" and spec["training"]["master_weights"] == "none"


@pytest.mark.parametrize(("training", "path"), [
    ({"goodput": 2}, "spec.training.goodput"), ({"optimizer": "adam"}, "spec.training.optimizer"),
    ({"context_parallel": 5}, "spec.training.context_parallel"),
    ({"optimizer": "sgd", "optimizer_states": "int8"}, "spec.training.optimizer_states"),
])
def test_api_estimate_400_names_the_field(world, training, path):
    viewer = client_for(world.users["viewer"])  # noqa: F405
    before = _counts()
    spec = {**SPEC, "training": {**SPEC["training"], **training}}
    response = viewer.post("/api/v1/estimate/", {"spec": spec}, format="json")
    assert response.status_code == 400
    assert path in {e["field"] for e in response.json()["errors"]}
    assert _counts() == before


def test_cli_accepts_the_new_fields_and_shows_goodput(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    out = StringIO()
    call_command("estimate", str(path), "--catalog-csv", str(CSV), stdout=out)
    result = json.loads(out.getvalue())
    assert result["compute"]["goodput"]["value"] == 0.8
    assert "host_optimizer_bytes" in result["memory"]["components"]


def test_cli_bad_training_value_exits_2_naming_the_field(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**SPEC, "training": {**SPEC["training"], "goodput": -1}}))
    with pytest.raises(CommandError) as exc:
        call_command("estimate", str(path), "--catalog-csv", str(CSV), stdout=StringIO())
    assert exc.value.returncode == 2 and "training.goodput" in str(exc.value)


def test_form_pins_an_exact_training_layout():
    from planner.forms import WorkloadForm

    form = WorkloadForm(data={**FORM, "training__tensor_parallel": "2", "training__pipeline_parallel": "1",
                              "training__data_parallel": "4", "hardware__count": "8"})
    form.is_valid()
    spec = form.build_spec()
    assert spec["training"]["tensor_parallel"] == 2 and spec["training"]["data_parallel"] == 4


def test_form_sends_a_layout_that_does_not_make_the_count_to_its_field(client, editor):
    # TP2 x DP4 = 8 GPUs, but 6 are asked for: a field error that says why, nothing written
    data = {**FORM, "team": editor.memberships.get().team_id, "training__tensor_parallel": "2",
            "training__data_parallel": "4", "hardware__accelerator": "nvidia-h100-sxm5-80gb", "hardware__count": "6"}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert any("8" in str(e) for field in ("hardware__count", "training__data_parallel") for e in errors.get(field, []))
    assert _counts() == (0, 0, 0)
