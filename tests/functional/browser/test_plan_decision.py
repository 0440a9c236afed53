"""The plan page opens with the decision summary (issue 13); its headline, ranked list and cost
table agree: the recommended option is first in the ranking, it is a row of the cost table, and
the three show the same total."""

import pytest
from playwright.sync_api import expect

from tests.functional.browser.test_planner_journey import (  # noqa: F401  (fixtures)
    catalog,
    create_inference_plan,
    log_in,
    owner,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_decision_summary_headline_ranked_list_and_table_agree(page, live_server, owner, screenshots):  # noqa: F811
    log_in(page, live_server, owner)
    create_inference_plan(page, live_server, name="Decision check")
    decision = page.locator("#decision")
    expect(decision).to_be_visible()
    # the decision summary is the first card of the plan
    first = page.locator(".plan-main section.card").first
    expect(first).to_have_attribute("id", "decision")
    headline = page.locator("#decision-headline [data-option-id]")
    rec_id = headline.get_attribute("data-option-id")
    rec_label = headline.inner_text().strip()
    rec_total = page.locator("#decision-total").inner_text().strip()
    # the alternatives table starts with the recommended option, at the same total
    first_ranked = page.locator("#decision-ranked tr").first
    expect(first_ranked).to_have_attribute("data-option-id", rec_id)
    assert first_ranked.locator(".option-total").inner_text().strip() == rec_total
    # the cost table has the recommended option with the same (short) label and total; its cells
    # leave the currency to the line above the table
    row = page.locator(f'#costs table.summary tbody tr[data-option-id="{rec_id}"]')
    expect(row).to_have_count(1)
    expect(row).to_contain_text(rec_label)
    assert rec_total == row.locator(".option-total").inner_text().strip() + " " + rec_total.split()[-1]
    screenshots(page, "decision")
