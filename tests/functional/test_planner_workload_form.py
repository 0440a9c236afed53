"""The workload form: field errors from the spec validator, nothing saved on error, htmx partials."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from planner.choices import Role
from planner.models import Plan, PlanVersion, Workload
from tests.planner_factories import member

pytestmark = pytest.mark.django_db

BASE = {
    "name": "Support bot", "kind": "inference", "model_source": "preset", "preset": "llama-3.1-8b",
    "horizon_months": "36", "currency": "USD", "utilisation": "0.6",
    "serving__concurrency": "16", "serving__requests_per_second": "2",
}


@pytest.fixture
def editor(client):
    user = member(Role.EDITOR)
    client.force_login(user)
    return user


def post(client, **changes):
    data = {**BASE, "team": changes.pop("team", None) or ""}
    data.update(changes)
    return client.post(reverse("workload_create"), data)


def _team(user):
    return user.memberships.get().team_id


def test_get_renders_every_input_with_a_label(client, editor):
    html = client.get(reverse("workload_create")).content.decode()
    tags = re.findall(r"<(?:input|select|textarea)\b[^>]*>", html)
    visible = [t for t in tags if 'type="hidden"' not in t]
    assert len(visible) > 20
    for tag in visible:
        input_id = re.search(r'\bid="([^"]+)"', tag)
        assert input_id, tag
        assert f'for="{input_id.group(1)}"' in html or "aria-label=" in tag, tag


def test_bad_number_gives_field_error_and_saves_nothing(client, editor):
    response = post(client, team=_team(editor), serving__concurrency="-3")
    assert response.status_code == 400
    assert "serving__concurrency" in response.context["form"].errors
    assert Workload.objects.count() == Plan.objects.count() == PlanVersion.objects.count() == 0


def test_spec_validator_error_lands_on_its_field(client, editor):
    # kv_heads must divide attention_heads: only the engine's validator knows that.
    response = post(
        client, team=_team(editor), model_source="architecture", preset="",
        model__architecture__layers="32", model__architecture__hidden_size="4096",
        model__architecture__attention_heads="32", model__architecture__kv_heads="5",
        model__architecture__vocab_size="32000", model__architecture__ffn_hidden_size="11008",
    )
    assert response.status_code == 400
    assert "model__architecture__kv_heads" in response.context["form"].errors
    assert Workload.objects.count() == 0


def test_invalid_hf_config_json_is_a_field_error(client, editor):
    response = post(client, team=_team(editor), model_source="hf_config", hf_config="{not json")
    assert "hf_config" in response.context["form"].errors
    assert Workload.objects.count() == 0


def test_hf_config_missing_key_names_it(client, editor):
    cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000}
    response = post(client, team=_team(editor), model_source="hf_config", hf_config=json.dumps(cfg))
    errors = " ".join(response.context["form"].errors.get("hf_config", []))
    assert "num_hidden_layers" in errors or "layers" in errors


def test_hf_config_can_be_uploaded(client, editor):
    cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000}
    upload = SimpleUploadedFile("config.json", json.dumps(cfg).encode(), content_type="application/json")
    data = {**BASE, "team": _team(editor), "model_source": "hf_config", "hf_config_file": upload}
    response = client.post(reverse("workload_create"), data)
    # The uploaded file was read: its missing layer count is reported, not "paste a config".
    errors = " ".join(response.context["form"].errors.get("hf_config", []))
    assert "layers" in errors


def test_ambiguous_accelerator_pin_is_refused_on_its_field(client, editor):
    # "H100" matches several catalog parts; only the catalog can tell, so the form asks it.
    call_command("load_catalog", verbosity=0)
    response = post(client, team=_team(editor), hardware__accelerator="H100")
    assert response.status_code == 400
    error = " ".join(response.context["form"].errors["hardware__accelerator"])
    assert "several accelerators" in error and "H100 SXM5 80GB" in error  # said with names (issue 21)
    assert "nvidia-" not in error  # never a catalog id
    assert Workload.objects.count() == 0


def test_serving_layout_fields_reach_the_spec_and_bad_ones_are_field_errors(client, editor):
    call_command("load_catalog", verbosity=0)
    bad = post(client, team=_team(editor), serving__runtime="trtllm", hardware__tensor_parallel="3")
    assert bad.status_code == 400
    assert "divide" in " ".join(bad.context["form"].errors["hardware__tensor_parallel"])
    too_small = post(client, team=_team(editor), preset="llama-3.1-405b", hardware__accelerator="nvidia-t4-16gb",
                     hardware__count="1")
    assert too_small.status_code == 400
    assert "cannot hold" in " ".join(too_small.context["form"].errors["hardware__accelerator"])
    assert Workload.objects.count() == 0
    ok = post(client, team=_team(editor), serving__runtime="trtllm", hardware__accelerator="nvidia-h100-sxm5-80gb",
              hardware__count="2", hardware__tensor_parallel="2")
    assert ok.status_code == 302
    spec = Plan.objects.get().versions.get().inputs["spec"]
    assert spec["serving"]["runtime"] == "trtllm"
    assert spec["hardware"] == {"accelerator": "nvidia-h100-sxm5-80gb", "count": 2, "tensor_parallel": 2}


def test_utilisation_above_one_is_a_field_error(client, editor):
    response = post(client, team=_team(editor), utilisation="1.5")
    assert "utilisation" in response.context["form"].errors
    assert Workload.objects.count() == 0


def test_bad_rate_override_is_reported_on_overrides(client, editor):
    response = post(client, team=_team(editor), overrides='{"no_such_rate": 1}')
    assert "overrides" in response.context["form"].errors


def test_team_of_another_user_is_refused(client, editor):
    stranger_team = member(Role.OWNER).memberships.get().team_id
    response = post(client, team=stranger_team)
    assert "team" in response.context["form"].errors
    assert Workload.objects.count() == 0


def test_refresh_button_shows_fields_of_new_kind_without_saving(client, editor):
    response = post(client, team=_team(editor), kind="pretraining", refresh="1")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="training__tokens"' in html
    assert 'name="serving__concurrency"' not in html
    assert Workload.objects.count() == 0


def test_htmx_kind_change_returns_only_the_steps(client, editor):
    response = client.post(reverse("workload_form_partial"), {**BASE, "kind": "finetuning"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="steps">')
    assert 'name="training__method"' in html
    assert "<html" not in html


def test_htmx_preset_fills_the_architecture(client, editor):
    response = client.post(reverse("workload_form_partial") + "?fill=preset", {**BASE, "preset": "llama-2-7b"},
                           HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'name="model__architecture__hidden_size" value="4096"' in html
    assert 'name="model__architecture__layers" value="32"' in html


def test_htmx_validate_returns_one_field_with_its_error(client, editor):
    response = client.post(reverse("workload_validate") + "?field=serving__concurrency",
                           {**BASE, "serving__concurrency": "0"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div class="field')
    assert 'id="field-serving__concurrency"' in html
    assert "errorlist" in html
    assert html.count('class="field') == 1


def test_htmx_validate_valid_field_has_no_error(client, editor):
    response = client.post(reverse("workload_validate") + "?field=serving__concurrency",
                           {**BASE, "team": _team(editor)}, HTTP_HX_REQUEST="true")
    assert "errorlist" not in response.content.decode()


def test_htmx_validate_unknown_field_is_404(client, editor):
    response = client.post(reverse("workload_validate") + "?field=nope", BASE, HTTP_HX_REQUEST="true")
    assert response.status_code == 404


def test_htmx_validate_shows_spec_error_while_other_fields_are_empty(client, editor):
    # The name is still empty, yet the architecture field gets the engine's verdict at once.
    data = {**BASE, "name": "", "model_source": "architecture", "model__architecture__layers": "32",
            "model__architecture__hidden_size": "4096", "model__architecture__attention_heads": "32",
            "model__architecture__kv_heads": "5", "model__architecture__vocab_size": "32000",
            "model__architecture__ffn_hidden_size": "11008"}
    response = client.post(reverse("workload_validate") + "?field=model__architecture__kv_heads", data,
                           HTTP_HX_REQUEST="true")
    assert "errorlist" in response.content.decode()


def test_valid_post_saves_workload_plan_and_pending_version(client, editor):
    response = post(client, team=_team(editor), serving__context_length="8192")
    plan = Plan.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("plan_detail", args=[plan.id])
    version = plan.versions.get()
    assert version.inputs["spec"] == {
        "kind": "inference", "model": {"preset": "llama-3.1-8b"},
        "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2.0},
    }
    assert version.inputs["costs"] == {"horizon_months": 36, "currency": "USD", "include_vat": False,
                                       "utilisation": 0.6}
    assert plan.workload.created_by == editor


def test_a_service_at_utilisation_zero_is_a_field_error_and_saves_nothing(client, editor):
    response = post(client, team=_team(editor), utilisation="0")
    assert response.status_code == 400
    assert "hours a day" in " ".join(response.context["form"].errors["utilisation"])
    assert Workload.objects.count() == Plan.objects.count() == PlanVersion.objects.count() == 0


def test_empty_utilisation_is_left_to_the_cost_engine(client, editor):
    # An empty share is not 0.6: the cost engine derives utilisation from the workload.
    post(client, team=_team(editor), utilisation="")
    assert "utilisation" not in PlanVersion.objects.get().inputs["costs"]


def test_efficiency_is_passed_to_the_cost_options(client, editor):
    post(client, team=_team(editor), efficiency="0.8")
    assert PlanVersion.objects.get().inputs["costs"]["efficiency"] == 0.8


def test_utilisation_has_no_initial_value(client, editor):
    html = client.get(reverse("workload_create")).content.decode()
    tag = re.search(r'<input[^>]*name="utilisation"[^>]*>', html).group(0)
    assert "value=" not in tag


# --- issue 15: every kind submits; typed text is never dropped -----------------------------

def test_external_api_kind_submits_without_the_model_step(client, editor):
    # The kind has no model step, so the browser does not send "model given as" at all.
    data = {"name": "Agent", "team": _team(editor), "kind": "external_api", "horizon_months": "12",
            "currency": "USD", "rag__documents": "1000"}
    response = client.post(reverse("workload_create"), data)
    assert response.status_code == 302, response.context["form"].errors
    spec = PlanVersion.objects.get().inputs["spec"]
    assert spec["kind"] == "external_api" and "model" not in spec


def test_the_steps_of_the_external_api_kind_have_no_model_source(client, editor):
    response = post(client, team=_team(editor), kind="external_api", refresh="1")
    assert 'name="model_source"' not in response.content.decode()


@pytest.mark.parametrize("name", ["serving__concurrency", "serving__requests_per_second", "horizon_months",
                                  "utilisation"])
def test_text_in_a_number_field_is_a_visible_error(client, editor, name):
    response = post(client, team=_team(editor), **{name: "five"})
    assert response.status_code == 400
    assert name in response.context["form"].errors
    html = response.content.decode()
    assert f'id="id_{name}_errors"' in html
    # The typed text is shown back, not silently replaced by the default.
    assert re.search(rf'name="{name}"[^>]*value="five"', html)
    assert Workload.objects.count() == 0


def test_number_fields_are_text_boxes_with_a_numeric_keyboard(client, editor):
    html = client.get(reverse("workload_create")).content.decode()
    tag = re.search(r'<input[^>]*name="serving__requests_per_second"[^>]*>', html).group(0)
    assert 'type="text"' in tag and 'inputmode="decimal"' in tag


def test_decimal_comma_and_spaced_thousands_on_a_russian_page(client, editor):
    response = client.post(reverse("workload_create"), {**BASE, "team": _team(editor), "utilisation": "0,6",
                                                        "serving__concurrency": "1 024"},
                           HTTP_ACCEPT_LANGUAGE="ru")
    assert response.status_code == 302
    version = PlanVersion.objects.get()
    assert version.inputs["costs"]["utilisation"] == 0.6
    assert version.inputs["spec"]["serving"]["concurrency"] == 1024


def test_grouped_thousands_on_an_english_page(client, editor):
    post(client, team=_team(editor), serving__concurrency="1,024")
    assert PlanVersion.objects.get().inputs["spec"]["serving"]["concurrency"] == 1024


# --- the login page's demo hint (issue 15) ---------------------------------------------------

def test_login_page_names_the_demo_user_on_the_embedded_default(client, settings):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("demo", password="demo-planner")
    # The hint depends on the configured engine only; CI runs this file on PostgreSQL.
    settings.DATABASES = {**settings.DATABASES, "default": {**settings.DATABASES["default"],
                                                             "ENGINE": "django.db.backends.sqlite3"}}
    html = client.get(reverse("login")).content.decode()
    assert 'id="demo-login"' in html and "<strong>demo</strong>" in html and "demo-planner" in html


def test_login_page_gives_no_hint_on_a_configured_database(client, settings):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("demo", password="demo-planner")
    settings.DATABASES = {**settings.DATABASES, "default": {**settings.DATABASES["default"],
                                                             "ENGINE": "django.db.backends.postgresql"}}
    from planner.views import demo_login_hint

    assert demo_login_hint() is None


def test_login_page_gives_no_hint_without_the_demo_user(client):
    assert 'id="demo-login"' not in client.get(reverse("login")).content.decode()
