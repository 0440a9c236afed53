"""Comparing a RUB plan with a USD plan in headless Chromium: choose the plans, compare, switch
the currency (htmx swaps the result and the address keeps the choice), and the same without
JavaScript (the GET form). Screenshots: test-artifacts/screenshots/<test name>/."""

import re

import pytest
from playwright.sync_api import expect

from planner.choices import Role
from tests.functional.browser.test_planner_journey import log_in
from tests.functional.test_compare_currency import _plan
from tests.planner_factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner_and_plans():
    user = member(Role.OWNER)
    team = user.memberships.get().team
    rub = _plan(team, name="RUB service", currency="RUB", net="4958019.76")
    usd = _plan(team, name="USD service", currency="USD", net="1234.56", horizon=12)
    return user, rub, usd


def test_compare_in_one_currency(page, live_server, owner_and_plans, screenshots):
    user, rub, usd = owner_and_plans
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/plans/compare/")
    page.get_by_label("RUB service").check()
    page.get_by_label("USD service").check()
    page.get_by_label("Show every plan in").select_option("RUB")  # htmx: the result only
    result = page.locator("#compare-result")
    # the horizons differ (24 and 12 months): per month
    expect(result).to_contain_text("All amounts in RUB per month.")
    # 1 234.56 USD / 12 months x 78.2696 = 8 052.38 RUB a month; 4 958 019.76 RUB / 24 = 206 584.16
    expect(result).to_contain_text("8,052.38 RUB")
    expect(result).to_contain_text("206,584.16 RUB")
    expect(result).to_contain_text("1 USD = 78.2696 RUB")
    screenshots(page, "compare-rub")

    page.get_by_label("Show every plan in").select_option("USD")
    expect(result).to_contain_text("All amounts in USD per month.")
    expect(result).to_contain_text("102.88 USD")  # 1 234.56 / 12
    expect(result).to_contain_text("2,639.39 USD")  # 4 958 019.76 / 24 / 78.2696 = 2 639.392...
    expect(page).to_have_url(re.compile(r"currency=USD"))  # the address keeps the choice
    page.get_by_label("Show every plan in").select_option("")  # the default: the first plan's currency
    expect(result).to_contain_text("All amounts in")
    page.get_by_role("button", name="Compare").click()  # the button too, through htmx
    expect(result).to_contain_text("1 USD = 78.2696 RUB")
    screenshots(page, "compare-usd")


def test_compare_without_javascript(browser, live_server, owner_and_plans, screenshots):
    user, rub, usd = owner_and_plans
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/plans/compare/?plans={rub.id}&plans={usd.id}")
    page.get_by_label("Show every plan in").select_option("USD")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#compare-result")).to_contain_text("All amounts in USD per month.")
    assert "currency=USD" in page.url
    screenshots(page, "compare-no-js")
    context.close()
