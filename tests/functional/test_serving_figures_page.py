"""The plan page shows the serving figures of issue 22: TPOT median in the ranked layouts and the
cost per million output tokens beside each priced option (English and Russian)."""

import pytest
from django.urls import reverse

from planner.templatetags.planner_tags import money
from tests.functional.test_planner_plan_pages import computed, owner_client, plan  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_ranked_layouts_show_tpot_median_and_options_their_cost_per_million_output_tokens(owner_client, plan):  # noqa: F811
    result = plan.versions.get().result
    costs, sizing = result["costs"], result["sizing"]
    html = owner_client.get(reverse("plan_detail", args=[plan.id])).content.decode()
    assert "TPOT median, ms" in html
    first = sizing["candidates"]["ranked"][0]
    assert first["tpot_p50_ms"] == first["tpot_ms"]  # median step = mean step (near-normal), both reported
    assert "Per million output tokens" in html
    key = "per_1m_output_tokens_gross" if costs.get("include_vat") else "per_1m_output_tokens_net"
    table = html[html.index('id="options-summary"'):]  # the options table (the card above names options too)
    priced = [o for o in costs["options"] if o["unit_costs"][key] and f'<tr data-option-id="{o["id"]}"' in table]
    assert priced, "no shown option has a cost per million output tokens"
    o = priced[0]
    row = table.split(f'<tr data-option-id="{o["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert 'class="num option-per-1m-output"' in row
    # kopecks kept for a per-token price; the currency is said once above the table
    assert str(money(o["unit_costs"][key])) in row
    assert o["unit_costs"]["currency"] == costs["currency"]


def test_the_new_figures_read_in_russian(owner_client, plan):  # noqa: F811
    html = owner_client.get(reverse("plan_detail", args=[plan.id]), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "За миллион выходных токенов" in html
    assert "TPOT, медиана, мс" in html
    assert "Per million output tokens" not in html
