"""The compare pages hold at 1366 and 1920 px in English and Russian: nothing overflows the page
outside a sideways-scrolling container (the tables scroll inside `.compare-scroll`), and the
options comparison's chart legend overlaps nothing. Saves the screenshots of docs/WEB.md
(docs/img/options-compare-{ru,en}-1366.png) when GPU_PLANNER_DOC_SHOTS=1."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from planner.choices import Role
from tests.functional.browser.test_planner_journey import log_in
from tests.functional.test_compare_currency import _plan as _priced_plan
from tests.functional.test_options_compare import CLOUD, COMMIT, ONPREM, _plan
from tests.planner_factories import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS_IMG = Path(__file__).resolve().parents[3] / "docs" / "img"

# Elements wider than the viewport that are not inside a container scrolling sideways.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const scrolls = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
  const bad = [];
  for (const el of document.querySelectorAll('main *')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > width + 1 && !scrolls(el)) bad.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  if (document.documentElement.scrollWidth > width + 1) bad.push('page ' + document.documentElement.scrollWidth);
  return bad;
}"""

# Cells whose content is wider than the cell (text running into the next column).
CELLS_JS = """() => Array.from(document.querySelectorAll('table.compare th, table.compare td'))
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim().slice(0, 40))"""

LEGEND_JS = """() => {
  const a = document.querySelector('.compare-legend').getBoundingClientRect();
  const svg = document.querySelector('.compare-chart-wrap svg').getBoundingClientRect();
  const table = document.querySelector('.options-table').getBoundingClientRect();
  return a.top >= svg.bottom - 1 && a.bottom <= table.top;
}"""


@pytest.fixture
def owner_plans():
    user = member(Role.OWNER)
    team = user.memberships.get().team
    options_plan = _plan(team, name="Чат-бот поддержки", options=(ONPREM, CLOUD, COMMIT))
    plans = [_priced_plan(team, name=f"Сервис поддержки клиентов, вариант {i}", currency="USD" if i % 2 else "RUB",
                          net="4958019.76") for i in range(6)]
    return user, options_plan, plans


@pytest.mark.parametrize("width", [1366, 1920])
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_compare_pages_do_not_overflow(page, live_server, owner_plans, screenshots, width, lang):
    user, options_plan, plans = owner_plans
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, user)
    page.set_extra_http_headers({"Accept-Language": lang})
    query = "&".join(f"options={o['id']}" for o in (ONPREM, CLOUD, COMMIT))
    page.goto(f"{live_server.url}/plans/{options_plan.id}/v/1/options/?{query}")
    expect(page.locator("#break-even")).to_contain_text("17")
    assert page.evaluate(OVERFLOW_JS) == []
    assert page.evaluate(LEGEND_JS), "the legend sits between the chart and the table"
    assert page.evaluate(CELLS_JS) == []
    path = screenshots(page, f"options-{lang}-{width}")
    if width == 1366 and os.environ.get("GPU_PLANNER_DOC_SHOTS"):
        DOCS_IMG.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS_IMG / f"options-compare-{lang}-1366.png"), full_page=True)
    assert path.exists()

    ids = "&".join(f"plans={p.id}" for p in plans)
    page.goto(f"{live_server.url}/plans/compare/?{ids}&currency=RUB")
    expect(page.locator("#compare-basis")).to_be_visible()
    assert page.evaluate(OVERFLOW_JS) == []
    # six columns: the table is wider than the page and scrolls inside its wrapper
    scroll = page.locator("#compare-result .compare-scroll")
    widths = scroll.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert widths[0] >= widths[1]
    # every column at least its minimum width: no text runs into the next one
    assert page.evaluate(CELLS_JS) == []
    screenshots(page, f"plans-{lang}-{width}")
