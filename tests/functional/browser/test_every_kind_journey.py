"""Issue 15 in Chromium: every workload kind is created through the form and reaches a done
plan, in English and in Russian; an htmx redraw keeps what was typed while it was in flight;
a number field refuses text visibly. Fields are found by name, so the same steps run in both
languages. Screenshots: test-artifacts/screenshots/<test name>/."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from planner.choices import Role
from planner.models import PlanVersion
from tests.planner_factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-for-tests-1"
PLAN_TIMEOUT_MS = 90_000
# What each kind needs beyond the defaults (field name -> value); selects are marked "select:".
KINDS = {
    "inference": {"preset": "select:llama-3.1-8b", "serving__concurrency": "16"},
    "rag": {"preset": "select:qwen2.5-7b", "rag__documents": "100000"},
    "finetuning": {"preset": "select:llama-3.1-8b", "training__method": "select:lora", "training__tokens": "2e8"},
    "pretraining": {"preset": "select:llama-3.2-1b", "training__tokens": "1e10"},
    "classic_training": {"preset": "select:resnet-50", "training__dataset_samples": "1281167"},
    "external_api": {"rag__documents": "100000", "serving__requests_per_second": "1"},
}


@pytest.fixture
def owner():
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    return member(Role.OWNER)


def log_in(page, live_server, user, lang):
    page.set_extra_http_headers({"Accept-Language": lang})
    page.goto(f"{live_server.url}/accounts/login/")
    page.locator("input[name=username]").fill(user.username)
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("input[name=password]").press("Enter")
    expect(page.locator("nav a[href='/workloads/new/']")).to_be_visible()


def settled(page):
    """The response has arrived, but htmx swaps it in a moment later: a change made before the
    swap lands on an element about to be replaced and sends nothing (seen under load)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')")


def choose_kind(page, kind):
    with page.expect_response(lambda r: "/workloads/new/steps/" in r.url):
        page.locator("select[name=kind]").select_option(kind)
    settled(page)
    if kind == "external_api":
        expect(page.locator("input[name=model_source]")).to_have_count(0)  # no model step at all


def fill(page, name, value):
    field = page.locator(f"[name={name}]")
    if value.startswith("select:"):
        if name == "preset":
            with page.expect_response(lambda r: "/workloads/new/steps/" in r.url):
                field.select_option(value.removeprefix("select:"))
            settled(page)
        else:
            field.select_option(value.removeprefix("select:"))
    else:
        field.fill(value)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_kind_reaches_a_done_plan_through_the_form(page, live_server, owner, screenshots, lang):
    log_in(page, live_server, owner, lang)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    for kind, fields in KINDS.items():
        page.goto(f"{live_server.url}/workloads/new/")
        page.locator("input[name=name]").fill(f"{kind} ({lang})")
        choose_kind(page, kind)
        for name, value in fields.items():
            fill(page, name, value)
        page.locator("select[name=currency]").select_option("RUB")
        page.locator("main form[action='/workloads/new/'] button[type=submit]:not([name=refresh])").click()
        expect(page.locator("#recommendation")).to_be_visible(timeout=PLAN_TIMEOUT_MS)
        screenshots(page, f"{kind}-{lang}")
        version = PlanVersion.objects.filter(plan__name=f"{kind} ({lang})").get()
        assert version.status == "done", version.error
        assert version.inputs["spec"]["kind"] == kind and version.inputs["costs"]["currency"] == "RUB"
        if kind == "external_api":
            # an agent plan names the CPU server it runs on, and no GPU (issue 20, 8.)
            expect(page.locator("#recommendation")).to_contain_text(
                "The server the agent runs on" if lang == "en" else "Сервер, на котором работает агент")


def test_a_redraw_keeps_what_was_typed_while_it_was_in_flight(page, live_server, owner, screenshots):
    log_in(page, live_server, owner, "en")
    page.goto(f"{live_server.url}/workloads/new/")
    page.locator("input[name=name]").fill("Typed values")
    page.locator("select[name=currency]").select_option("RUB")
    page.locator("input[name=serving__requests_per_second]").fill("5")
    held = []
    page.route("**/workloads/new/steps/**", lambda route: held.append(route))
    page.locator("select[name=preset]").select_option("llama-3.1-8b")  # the redraw request goes out...
    page.wait_for_function("() => true")
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the preset change did not ask the server for the steps"
    # ...and while it is held, the user keeps typing.
    page.locator("input[name=serving__input_tokens]").fill("2000")
    page.locator("input[name=serving__output_tokens]").fill("400")
    with page.expect_response(lambda r: "/workloads/new/steps/" in r.url):
        held[0].continue_()
    expect(page.locator("input[name=model__architecture__hidden_size]")).to_have_value("4096")  # redrawn
    expect(page.locator("input[name=serving__input_tokens]")).to_have_value("2000")
    expect(page.locator("input[name=serving__output_tokens]")).to_have_value("400")
    expect(page.locator("input[name=serving__requests_per_second]")).to_have_value("5")
    expect(page.locator("select[name=currency]")).to_have_value("RUB")
    screenshots(page, "after-redraw")
    page.unroute("**/workloads/new/steps/**")
    page.locator("main form[action='/workloads/new/'] button[type=submit]:not([name=refresh])").click()
    expect(page.locator("#recommendation")).to_be_visible(timeout=PLAN_TIMEOUT_MS)
    version = PlanVersion.objects.get(plan__name="Typed values")
    assert version.inputs["costs"]["currency"] == "RUB"
    assert version.inputs["spec"]["serving"] == {"input_tokens": 2000, "output_tokens": 400,
                                                  "requests_per_second": 5.0}


def test_text_in_a_number_field_is_refused_visibly(page, live_server, owner, screenshots):
    log_in(page, live_server, owner, "en")
    page.goto(f"{live_server.url}/workloads/new/")
    field = page.locator("input[name=serving__requests_per_second]")
    field.fill("five")
    with page.expect_response(lambda r: "/workloads/new/validate/" in r.url):
        field.press("Tab")
    expect(page.locator("#field-serving__requests_per_second .errorlist")).to_contain_text("Enter a number")
    expect(page.locator("input[name=serving__requests_per_second]")).to_have_value("five")
    screenshots(page, "number-refused")
