"""The main journey in headless Chromium (issue 5): log in, describe a workload from a preset,
watch it compute, read the plan and its charts, change currency and language, export XLSX,
share a read-only link, revoke it. Screenshots: test-artifacts/screenshots/<test name>/."""

import re

import openpyxl
import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from planner.choices import Role
from tests.planner_factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-for-tests-1"
PLAN_TIMEOUT_MS = 60_000


@pytest.fixture
def catalog():
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)


@pytest.fixture
def owner(catalog):
    return member(Role.OWNER)


def log_in(page, live_server, user):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    expect(page.locator("nav").get_by_role("link", name="New workload")).to_be_visible()


def create_inference_plan(page, live_server, name="Support bot", shot=None):
    page.goto(f"{live_server.url}/workloads/new/")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Model preset").select_option("llama-3.1-8b")
    # htmx swaps the steps with the preset's architecture filled in.
    expect(page.get_by_label("Hidden size", exact=True)).to_have_value("4096")
    page.get_by_label("Concurrent requests").fill("16")
    if shot:
        shot(page, "workload-form")
    page.get_by_role("button", name="Compute the plan").click()
    expect(page.locator("#costs")).to_be_visible(timeout=PLAN_TIMEOUT_MS)


def test_main_journey(page, live_server, owner, screenshots, tmp_path):
    log_in(page, live_server, owner)
    screenshots(page, "logged-in")

    create_inference_plan(page, live_server, shot=screenshots)
    plan_url = page.url
    expect(page.locator("#recommendation")).to_contain_text("×")
    expect(page.locator("#costs table.summary tbody tr").first).to_be_visible()
    expect(page.locator(".cost-table").first).to_contain_text("GPU time")
    for chart in ("tco-chart", "uncertainty-chart", "memory-chart"):
        expect(page.locator(f"#{chart}")).to_have_attribute("data-drawn", "true")
    screenshots(page, "plan")

    # Change an assumption: currency to RUB makes version 2.
    page.locator("#assumptions").get_by_label("Currency").select_option("RUB")
    page.get_by_role("button", name="Save and recompute").click()
    expect(page.locator("#costs")).to_be_visible(timeout=PLAN_TIMEOUT_MS)
    expect(page.locator("#costs table.summary")).to_contain_text("RUB")
    expect(page.locator("#versions")).to_contain_text("v2")
    screenshots(page, "plan-rub")

    # XLSX export opens with openpyxl and holds numbers.
    with page.expect_download() as download_info:
        page.locator("#exports").get_by_role("link", name="XLSX").click()
    path = tmp_path / "plan.xlsx"
    download_info.value.save_as(path)
    workbook = openpyxl.load_workbook(path)
    assert len(workbook.sheetnames) >= 2
    numbers = [c.value for ws in workbook for row in ws.iter_rows() for c in row if isinstance(c.value, int | float)]
    assert numbers

    # Share a read-only link and open it without logging in.
    page.get_by_role("button", name="Create a read-only link").click()
    link = page.locator("#new-share-link").input_value()
    assert re.search(r"/s/[A-Za-z0-9_-]{43,}/$", link)
    anonymous = page.context.browser.new_context()
    shared = anonymous.new_page()
    response = shared.goto(link)
    assert response.status == 200
    expect(shared.locator("#costs")).to_be_visible()
    expect(shared.get_by_role("button", name="Recompute with today's prices")).to_have_count(0)
    expect(shared.locator("#tco-chart")).to_have_attribute("data-drawn", "true")
    screenshots(shared, "shared")

    # Revoke it: the same link now answers 404.
    page.goto(plan_url)
    page.locator("#share").get_by_role("button", name="Revoke").click()
    expect(page.locator("#share")).to_contain_text("revoked")
    assert shared.goto(link).status == 404
    screenshots(shared, "revoked-404")
    anonymous.close()

    # Language: switch to Russian with the switcher.
    page.goto(plan_url)
    page.get_by_label("Language").select_option("ru")
    page.get_by_role("button", name="Switch").click()
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("#recommendation h2")).to_have_text("Оборудование решения")  # the decision's hardware
    screenshots(page, "plan-ru")


def test_keyboard_only_login_and_workload(page, live_server, owner, screenshots):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").focus()
    page.keyboard.type(owner.username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.locator("nav").get_by_role("link", name="New workload")).to_be_visible()
    # Tab to the "New workload" link and follow it with Enter.
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "New workload":
            break
    page.keyboard.press("Enter")
    expect(page.get_by_label("Name", exact=True)).to_be_visible()
    page.get_by_label("Name", exact=True).focus()
    page.keyboard.type("Keyboard plan")
    # The preset select: focus and choose with arrow keys, then submit with Enter in a text field.
    page.get_by_label("Model preset").focus()
    page.keyboard.press("ArrowDown")
    page.get_by_label("Name", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#costs, #status")).to_be_visible(timeout=PLAN_TIMEOUT_MS)
    screenshots(page, "keyboard-plan")


def test_pending_version_polls_until_done(page, live_server, owner, screenshots):
    """No worker yet: the page shows the queued version and polls; once it is computed the
    polling stops (286) and the page reloads with the plan."""
    from unittest import mock

    from planner import services
    from tests.planner_factories import PlanFactory

    plan = PlanFactory(workload__team=owner.memberships.get().team)
    with mock.patch("planner.services.plan_version_enqueue"):
        version = services.plan_version_create(plan=plan, user=owner)
    log_in(page, live_server, owner)
    page.goto(f"{live_server.url}/plans/{plan.id}/")
    expect(page.locator("#status")).to_contain_text("Queued")
    screenshots(page, "pending")
    with page.expect_response(lambda r: r.url.endswith("/status/") and r.status == 286, timeout=30_000):
        compute_beside_the_server(services, version.id)
    expect(page.locator("#costs")).to_be_visible(timeout=15_000)
    screenshots(page, "done-after-polling")


def compute_beside_the_server(services, version_id):
    """The worker's job, done from the test thread. SQLite's shared in-memory test database
    locks a table while the server thread reads it for a poll: retry briefly then."""
    import time

    from django.db import OperationalError

    for _ in range(50):
        try:
            services.plan_version_compute(version_id=version_id)
            return
        except OperationalError:
            time.sleep(0.1)
    raise AssertionError("the test database stayed locked")
