"""Issue 21, parts 9 and 10: the workload form as a new (Russian) user meets it, the shared page's
exports, and the leftovers (lists on the diff page, residency exclusions, bottleneck words, units,
the stale "queued" flash, kopecks in summaries)."""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation

from planner import services
from planner.choices import Role, VersionStatus
from planner.humanize import input_value_text
from planner.models import ShareLink, Workload
from planner.templatetags.whole_units import money_units
from tests.planner_factories import COST_OPTIONS, PlanFactory, PlanVersionFactory, member

pytestmark = pytest.mark.django_db

RU = {"HTTP_ACCEPT_LANGUAGE": "ru"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


@pytest.fixture
def editor(client):
    user = member(Role.EDITOR)
    client.force_login(user)
    return user


def _form(client, lang=RU, **data):
    if data:
        return client.post(reverse("workload_create"), data, **lang).content.decode()
    return client.get(reverse("workload_create"), **lang).content.decode()


def _details(html: str, step: str) -> str:
    match = re.search(rf'<details class="advanced" id="advanced-{step}"[^>]*>(.*?)</details>', html, re.S)
    assert match, f"no advanced section in step {step}"
    return match.group(1)


# --- part 9: the form ------------------------------------------------------------------------


def test_currency_follows_the_language(client, editor):
    assert re.search(r'<option value="RUB" selected>', _form(client, RU))
    assert re.search(r'<option value="USD" selected>', _form(client, EN))


def test_a_configured_default_currency_wins_over_the_language(client, editor, settings):
    settings.PLANNER_DEFAULT_CURRENCY = "EUR"
    assert re.search(r'<option value="EUR" selected>', _form(client, RU))


def test_a_preset_folds_the_architecture_under_advanced(client, editor):
    html = _form(client, RU)  # the preset is the default model source
    folded = _details(html, "model")
    assert 'name="model__architecture__layers"' in folded
    assert 'name="model__architecture__hidden_size"' in folded
    assert "Архитектура (для опытных)" in html
    assert re.search(r'<input[^>]*name="model__architecture__layers"[^>]*readonly', folded)  # used as they are
    assert re.search(r'<details class="advanced" id="advanced-model">', html)  # closed
    # outside the folded section the model step shows no architecture field
    main = html.replace(folded, "")
    assert 'name="model__architecture__layers"' not in main


def test_the_architecture_source_shows_its_fields_open(client, editor):
    html = client.post(reverse("workload_form_partial"), {"kind": "inference", "model_source": "architecture"},
                       **RU).content.decode()
    folded = _details(html, "model") if 'id="advanced-model"' in html else ""
    assert 'name="model__architecture__layers"' in html
    assert 'name="model__architecture__layers"' not in folded
    assert not re.search(r'<input[^>]*name="model__architecture__layers"[^>]*readonly', html)


def test_raw_json_areas_are_only_under_advanced(client, editor):
    html = _form(client, RU)
    costs = _details(html, "costs")
    assert 'name="overrides"' in costs and 'name="more"' in costs
    assert 'name="hf_config"' in _details(html, "model")  # config.json only when it is the source
    assert html.count("<textarea") == costs.count("<textarea") + _details(html, "model").count("<textarea")


def test_terms_are_explained_in_russian(client, editor):
    html = _form(client, RU)
    for text in ("Тензорный параллелизм (TP)", "Конвейерный параллелизм (PP)",
                 "MFU — доля пиковой производительности", "SwiGLU и другие полносвязные блоки",
                 "TTFT — время от отправки запроса", "TPOT — время между двумя токенами", "PUE — вся мощность",
                 "По умолчанию: рубли на русской странице"):
        assert text in html, text
    finetune = client.post(reverse("workload_form_partial"), {"kind": "finetuning", "model_source": "preset"},
                           **RU).content.decode()
    assert "QLoRA: LoRA поверх модели, квантованной до 4 бит" in finetune
    assert "Полезная доля времени — доля календарного времени" in finetune
    assert "параллелизма по данным (DP)" in finetune  # ZeRO


def test_residency_is_chosen_by_country_name_and_stored_as_a_code(client, editor):
    call_command("load_catalog", verbosity=0)  # the jurisdictions come from the catalog's providers
    call_command("load_ru_prices", verbosity=0)
    html = _form(client, RU)
    assert re.search(r'value="RU"[^>]*>\s*Россия</label>', html)
    assert re.search(r'value="US"[^>]*>\s*США</label>', html)
    assert re.search(r'value="RU"[^>]*>\s*Russia</label>', _form(client, EN))


def test_errors_are_summarised_on_top_with_links_to_each_field(client, editor):
    html = _form(client, RU, name="", kind="inference", model_source="preset", preset="llama-3.1-8b",
                 horizon_months="36", currency="RUB", serving__concurrency="-3")
    summary = re.search(r'<div class="card errorlist error-summary"[^>]*>(.*?)</div>', html, re.S).group(1)
    for name in ("name", "serving__concurrency"):
        assert f'href="#field-{name}"' in summary, name
        assert f'id="field-{name}"' in html
    assert "Обязательное поле" in summary or "обязательн" in summary.lower()
    # each message also stays under its own field
    assert re.search(r'id="field-serving__concurrency".*?class="errorlist"', html, re.S)
    assert Workload.objects.count() == 0


def test_an_error_in_a_folded_field_opens_its_section(client, editor):
    html = _form(client, RU, name="x", kind="inference", model_source="preset", preset="llama-3.1-8b",
                 horizon_months="36", currency="RUB", overrides="{not json")
    assert re.search(r'<details class="advanced" id="advanced-costs" open>', html)
    assert 'href="#field-overrides"' in html


def test_an_unknown_accelerator_is_named_with_what_the_catalog_has(client, editor):
    call_command("load_catalog", verbosity=0)
    response = client.post(reverse("workload_create"), {
        "name": "x", "kind": "inference", "model_source": "preset", "preset": "llama-3.1-8b", "horizon_months": "36",
        "currency": "RUB", "team": editor.memberships.get().team_id, "hardware__accelerator": "Quantum 9000"}, **RU)
    assert response.status_code == 400
    error = " ".join(response.context["form"].errors["hardware__accelerator"])
    assert "«Quantum 9000»" in error and "H100 SXM5 80GB" in error
    assert "nvidia-h100" not in error
    assert "по id" not in response.content.decode()  # the help text asks for a name, not an id
    html = response.content.decode()
    assert 'list="accelerator-names"' in html and '<option value="NVIDIA H100 SXM5 80GB">' in html


# --- part 10: computed plans ---------------------------------------------------------------


@pytest.fixture(autouse=True)
def _run_on_commit_now():
    with mock.patch("django.db.transaction.on_commit", side_effect=lambda fn, *a, **k: fn()):
        yield


@pytest.fixture(scope="module")
def computed(django_db_setup, django_db_blocker):
    """One real computation (inference, residency Russia), rolled back; tests store its result."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("load_catalog", verbosity=0)
        call_command("load_ru_prices", verbosity=0)  # providers and the countries of their regions
        call_command("load_rate_cards", verbosity=0)
        with mock.patch("planner.services.plan_version_enqueue"):
            plan = PlanFactory(cost_options={**COST_OPTIONS, "data_residency": ["RU"]})
            version = services.plan_version_create(plan=plan, user=None)
        version = services.plan_version_compute(version_id=version.id)
        assert version.status == VersionStatus.DONE, version.error
        stored = {k: getattr(version, k) for k in
                  ("inputs", "price_snapshot", "rate_snapshot", "result", "as_of", "engine_version")}
        transaction.set_rollback(True)
    return stored


@pytest.fixture
def plan(computed):
    version = PlanVersionFactory(number=1, status=VersionStatus.DONE,
                                 plan__cost_options={**COST_OPTIONS, "data_residency": ["RU"]}, **computed)
    return version.plan


@pytest.fixture
def owner(client, plan):
    client.force_login(member(Role.OWNER, team=plan.team))
    return client


def test_the_plan_pages_assumptions_keep_raw_json_under_advanced(owner, plan):
    html = owner.get(reverse("plan_detail", args=[plan.id]), **RU).content.decode()
    assumptions = re.search(r'<section class="card" id="assumptions">(.*?)</section>', html, re.S).group(1)
    folded = re.search(r'<details class="advanced"[^>]*>(.*?)</details>', assumptions, re.S).group(1)
    assert 'name="overrides"' in folded and 'name="more"' in folded
    assert assumptions.count("<textarea") == folded.count("<textarea")
    assert re.search(r'value="RU"[^>]*checked[^>]*>\s*Россия</label>', assumptions)  # residency by name


def test_residency_exclusions_are_one_line_with_details(owner, plan):
    html = owner.get(reverse("plan_detail", args=[plan.id]), **RU).content.decode()
    section = re.search(r'<section class="card" id="residency">(.*?)</section>', html, re.S).group(1)
    assert "Россия" in section
    assert re.search(r"<summary>\d+ ценов\w* предложени\w* исключен\w* по требованию локализации данных</summary>", section)
    assert "(США)" in section  # each provider with its country, on demand
    # the list of options not priced no longer repeats them one by one
    assert "вне выбранных юрисдикций" not in html
    assert html.count("неизвестно") < 20


def test_the_bottleneck_is_said_in_words(owner, plan):
    html = owner.get(reverse("plan_detail", args=[plan.id]), **RU).content.decode()
    assert "memory_bandwidth" not in html and "kv_capacity" not in html
    assert re.search(r"Узкое место.*?(пропускная способность памяти|вычисления|объём KV-кэша|связь между GPU|"
                     r"накладные расходы шага)", html, re.S)


def test_units_are_translated_on_russian_pages(owner, plan):
    html = owner.get(reverse("plan_detail", args=[plan.id]), **RU).content.decode()
    assert "TTFT, ms" not in html and ", ms<" not in html
    assert "TTFT, мс" in html


def test_the_diff_page_shows_lists_as_text(owner, plan, computed):
    PlanVersionFactory(plan=plan, number=2, status=VersionStatus.DONE,
                       **{**computed, "inputs": {**computed["inputs"], "costs": {
                           **computed["inputs"]["costs"], "data_residency": ["RU", "US"]}}})
    html = owner.get(reverse("plan_diff", args=[plan.id]) + "?a=1&b=2", **RU).content.decode()
    assert "[&#x27;RU" not in html and "['RU" not in html
    assert "Россия, США" in html


def test_options_priced_in_one_version_only_are_one_line(owner, plan, computed):
    import copy

    result = copy.deepcopy(computed["result"])
    dropped = result["costs"]["options"][-3:]
    result["costs"]["options"] = result["costs"]["options"][:-3]
    PlanVersionFactory(plan=plan, number=2, status=VersionStatus.DONE,
                       **{**computed, "result": result, "inputs": {**computed["inputs"], "costs": {
                           **computed["inputs"]["costs"], "data_residency": ["RU", "DE"]}}})
    response = owner.get(reverse("plan_diff", args=[plan.id]) + "?a=1&b=2", **RU)
    html = response.content.decode()
    assert len(response.context["diff"]["only_old"]) == len(dropped)
    assert all(row["old"] is not None and row["new"] is not None for row in response.context["diff"]["totals"])
    assert re.search(r"<summary>3 варианта рассчитаны только в версии 1 \(в версии 2 их нет\) — "
                     r"изменилась локализация данных</summary>", html)
    table = html.split("<table", 2)[2].split("</table>", 1)[0]  # the totals table
    assert "неизвестно" not in table


def test_input_values_read_as_text():
    with translation.override("ru"):
        assert input_value_text("costs.data_residency", ["RU"]) == "Россия"
        assert input_value_text("costs.include_vat", True) == "да"
    assert input_value_text("costs.horizon_months", 36) == 36
    assert input_value_text("costs.x", None) is None


def test_money_in_whole_units():
    with translation.override("ru"):
        assert money_units("40123456.78", "RUB") == "40\xa0123\xa0457 RUB"
    with translation.override("en"):
        assert money_units("40123456.49", "USD") == "40,123,456 USD"
    assert "unknown" in money_units(None)


def _share(plan, **kwargs):
    _link, token = services.share_link_create(plan=plan, user=None, **kwargs)
    return token


@pytest.mark.parametrize("fmt,content_type", [("pdf", "application/pdf"), ("csv", "text/csv"),
                                               ("xlsx", "application/vnd.openxmlformats")])
def test_the_shared_page_offers_exports_through_its_token(client, plan, fmt, content_type):
    if fmt == "pdf":
        pytest.importorskip("weasyprint")
    token = _share(plan)
    html = client.get(reverse("shared_plan", args=[token]), **RU).content.decode()
    url = reverse("shared_export", args=[token, fmt])
    assert f'href="{url}"' in html
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert "attachment" in response["Content-Disposition"]


def test_shared_exports_respect_expiry_and_revocation(client, plan):
    token = _share(plan, expires_at=timezone.now() + timedelta(days=1))
    url = reverse("shared_export", args=[token, "csv"])
    assert client.get(url).status_code == 200
    ShareLink.objects.filter(plan=plan).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert client.get(url).status_code == 404
    token = _share(plan)
    link = ShareLink.objects.filter(plan=plan, revoked_at__isnull=True, expires_at__isnull=True).get()
    services.share_link_revoke(link=link)
    assert client.get(reverse("shared_export", args=[token, "xlsx"])).status_code == 404
    assert client.get(reverse("shared_export", args=["not-a-token", "csv"])).status_code == 404


def test_the_new_share_link_sits_in_a_field_with_a_copy_button(owner, plan):
    owner.post(reverse("share_create", args=[plan.id]))
    html = owner.get(reverse("plan_detail", args=[plan.id]), **RU).content.decode()
    assert re.search(r'<span class="share-copy"><input type="text" readonly value="http://testserver/s/', html)
    assert 'data-copy="new-share-link"' in html and "Копировать" in html


def test_a_queued_flash_is_replaced_once_the_version_is_done(client, plan):
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    client.force_login(member(Role.OWNER, team=plan.team))
    response = client.post(reverse("plan_recompute", args=[plan.id]), follow=True, **RU)
    html = response.content.decode()
    version = plan.versions.order_by("-number").first()
    assert version.number == 2 and version.is_finished  # computed in-process before the redirect landed
    assert "в очереди" not in html.split("<main", 1)[1].split("</ul>", 1)[0]
    assert "Версия 2 рассчитана." in html or "Версия 2 не рассчитана" in html
