"""The ten-second card (issue 21, 1. and 5.): at the top of a plan, in both languages, what to buy or
rent and how many (plural forms right), where and how it is paid, the budget in whole roubles, run
time (training) or latency against the target (serving), the reason; the alternatives as a compact
table; the break-even as an option × option matrix; the same card on the shared page."""

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.urls import reverse
from django.utils import translation

from planner import services
from planner.presentation import OKABE_ITO, break_even_matrix, option_style, short_option_label
from planner.templatetags.planner_tags import money_whole, signed_money_whole
from tests.functional.test_russian_everywhere import plans  # noqa: F401 - the module's computed plans

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).replace("\xa0", " ").replace("\u202f", " ").split())


def _card(html: str) -> str:
    start = html.index('id="decision"')
    return html[start:html.index("</section>", start)]


def _dd(card: str, dd_id: str) -> str:
    start = card.index(f'id="{dd_id}"')
    return _text(card[start:card.index("</dd>", start)])


def _whole(amount) -> str:
    return str(Decimal(str(amount)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _grouped(amount, lang) -> str:
    """'40123457' -> '40 123 457' (ru) / '40,123,457' (en): how the card prints whole money."""
    digits = _whole(amount)
    groups = []
    while digits:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    return (" " if lang == "ru" else ",").join(groups)


@pytest.fixture
def owner(client, plans):  # noqa: F811
    client.force_login(plans["owner"])
    return client


def _page(client, plan, lang):
    response = client.get(reverse("plan_detail", args=[plan.id]), HTTP_ACCEPT_LANGUAGE=lang)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_serving_plan_card_says_what_where_budget_and_latency_against_the_target(owner, plans, lang):  # noqa: F811
    plan = plans["plans"]["inference"]
    decision = plan.versions.get().result["decision"]
    html = _page(owner, plan, lang)
    # the card is the first card of the plan
    assert html.index('id="decision"') < html.index('id="recommendation"') < html.index('id="costs"')
    card = _card(html)
    hw = decision["hardware"]
    what = _dd(card, "decision-hardware")
    assert f'{hw["gpu_count"]} × {hw["accelerator"]}' in what
    n, per = hw["servers"], hw["gpus_per_server"]
    if lang == "en":
        server = f"{n} server" if n == 1 else f"{n} servers"
        gpus = f"with {per} GPU" + ("" if per == 1 else "s") + ("" if n == 1 else " each")
        assert f"{server} {gpus}" in what, what
        assert "1 server of 1 GPUs" not in what and "GPUs each" not in what.replace(f"{server} {gpus}", "")
    else:
        assert re.search(rf"{n} сервер(а|ов)? (с|по) {per} GPU", what), what
    budget = _dd(card, "decision-budget")
    total = decision["budget"]["total"]
    assert _grouped(total, lang) + " RUB" in budget, (budget, total)
    assert not re.search(r"\d[.,]\d\d RUB", budget), budget  # whole roubles, no kopecks
    per_month = decision["budget"]["per_month"]
    assert _grouped(per_month, lang) + " RUB" in budget
    assert ("a month" if lang == "en" else "в месяц") in budget
    assert ("over 24 months" if lang == "en" else "за 24 месяца") in budget
    assert ("with VAT" if lang == "en" else "с НДС") in budget
    latency = _dd(card, "decision-latency")
    target = decision["targets"]["ttft_p95_ms_target"]
    assert ("TTFT p95" in latency) and (f"{target:,}".replace(",", " " if lang == "ru" else ",") in latency), latency
    assert ("target" if lang == "en" else "цель") in latency
    assert ("meets the targets" if lang == "en" else "цели выполнены") in latency
    payment = _dd(card, "decision-payment")
    if decision.get("provider"):
        assert decision["provider"] in payment
    assert _dd(card, "decision-why")
    # the alternatives: a compact table, the decision first, whole money, the difference to it
    alternatives = card[card.index('id="decision-alternatives"'):]
    rows = re.findall(r'<tr data-option-id="([^"]+)"', alternatives)
    assert rows and rows[0] == decision["option_id"]
    assert ("the decision" if lang == "en" else "решение") in _text(alternatives.split("</tr>", 2)[1])


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_training_plan_card_gives_run_time_gpu_hours_and_budget_per_run(owner, plans, lang):  # noqa: F811
    plan = plans["plans"]["pretraining"]
    decision = plan.versions.get().result["decision"]
    html = _page(owner, plan, lang)
    card = _card(html)
    run = _dd(card, "decision-run-time")
    targets = decision["targets"]
    gpu_hours = _grouped(Decimal(str(targets["gpu_hours"])), lang)
    assert gpu_hours in run, (run, targets)
    assert ("h wall-clock" if lang == "en" else "ч по часам") in run, run
    assert ("deadline 720 h" if lang == "en" else "срок 720 ч") in run, run
    budget = _dd(card, "decision-budget")
    b = decision["budget"]
    assert not re.search(r"\d[.,]\d\d RUB", budget), budget
    runs = int(Decimal(str(b.get("runs") or 0)))
    if runs == 1:  # a one-off job: the total is the run's budget, said once
        assert ("one run (a one-off job)" if lang == "en" else "один запуск (разовая задача)") in budget, budget
    elif runs:
        assert _grouped(b["per_run"], lang) + " RUB" in budget
        assert ("per run" if lang == "en" else "за запуск") in budget
        if lang == "en":
            assert f"for {runs} run" + ("" if runs == 1 else "s") in budget
        else:
            assert f"за {runs} запуск" in budget
    assert _grouped(b["total"], lang) + " RUB" in budget
    assert "1 server of 1 GPUs" not in _text(card) and "1 сервер с 1 GPUs" not in _text(card)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_shared_page_shows_the_same_card(client, plans, lang):  # noqa: F811
    plan = plans["plans"]["inference"]
    _link, token = services.share_link_create(plan=plan, user=plans["owner"]) if hasattr(
        services, "share_link_create") else (None, None)
    if token is None:
        pytest.skip("no share-link service under that name")
    html = client.get(reverse("shared_plan", args=[token]), HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    card = _card(html)
    decision = plan.versions.get().result["decision"]
    assert _grouped(decision["budget"]["total"], lang) + " RUB" in _dd(card, "decision-budget")
    assert "decision-latency" in card and "decision-alternatives" in card


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_break_even_is_a_matrix_of_the_shown_options(owner, plans, lang):  # noqa: F811
    plan = plans["plans"]["inference"]
    html = _page(owner, plan, lang)
    assert "the curves cross in month" not in html and "кривые пересекаются" not in html
    costs = plan.versions.get().result["costs"]
    if not costs.get("break_even_months"):
        pytest.skip("no break-even pair in this plan")
    matrix = html[html.index('id="break-even-matrix"'):]
    matrix = matrix[:matrix.index("</table>")]
    header = re.findall(r'<th scope="col" class="num"[^>]*>(\d+)</th>', matrix)
    assert header == [str(i) for i in range(1, len(header) + 1)]
    cells = _text(matrix)
    assert ("from month" if lang == "en" else "с месяца") in cells or ("always" if lang == "en" else "всегда") in cells


def test_break_even_matrix_reads_each_pair_from_both_sides():
    options = [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}, {"id": "c", "label": "C"}]
    pairs = [{"a": "a", "b": "b", "month": 9, "cheaper_after": "b", "state": "crossing"},
             {"a": "a", "b": "c", "month": None, "cheaper_after": "a", "state": "a_never_more_expensive"}]
    m = break_even_matrix(options, pairs)
    cells = {(r["number"], j + 1): c for r in m["rows"] for j, c in enumerate(r["cells"])}
    assert cells[(1, 1)]["state"] == "self"
    assert cells[(2, 1)] == {"state": "from", "month": 9}  # B is cheaper than A from month 9
    assert cells[(1, 2)] == {"state": "until", "month": 9}
    assert cells[(1, 3)]["state"] == "always" and cells[(3, 1)]["state"] == "never"
    assert cells[(2, 3)] is None  # not compared
    assert break_even_matrix(options, []) is None


def test_whole_money_and_the_palette():
    with translation.override("ru"):
        assert money_whole("40123456.50", "RUB").replace("\xa0", " ") == "40 123 457 RUB"
        assert signed_money_whole("-1234.4", "RUB").replace("\xa0", " ") == "−1 234 RUB"
    with translation.override("en"):
        assert money_whole("40123456.49", "USD") == "40,123,456 USD"
        assert signed_money_whole("1234.5") == "+1,235"
    assert "unknown" in money_whole(None)
    colours = [option_style(i)["color"] for i in range(8)]
    assert colours == list(OKABE_ITO) and len(set(colours)) == 8
    assert option_style(8) != option_style(0)  # the ninth line differs by its dash
    assert short_option_label({"kind": "cloud_on_demand", "label": "long", "detail": {
        "gpus": 8, "accelerator": "H100 SXM", "provider": "Yandex Cloud", "region": "ru-central1"}}) == \
        "8 × H100 SXM · Yandex Cloud, ru-central1"


def test_the_options_table_writes_hours_as_russian_decimals(owner, plans):  # noqa: F811
    """'20.3 ч/год, не оценено' in the options table of a Russian page (a raw figure)."""
    html = _page(owner, plans["plans"]["inference"], "ru")
    table = html[html.index('id="options-summary"'):]
    table = _text(table[:table.index("</table>")])
    assert not re.search(r"\d\.\d+ ч/год", table), table[:400]
