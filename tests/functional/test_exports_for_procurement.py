"""The exports a procurement officer opens: the XLSX (openpyxl), the CSV and the PDF (text
extracted with pypdf) carry the plan, version, export date, currency, VAT, FX rate with its
date and source, and the options in the order of the decision; page 1 of the PDF holds the
decision summary."""

import csv
import io
import re
from decimal import Decimal

import openpyxl
import pytest
from django.urls import reverse
from django.utils import timezone
from pypdf import PdfReader

from tests.functional.test_russian_everywhere import plans  # noqa: F401 - the module's computed plans

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client, plans):  # noqa: F811
    client.force_login(plans["owner"])
    return client


def _get(client, plan, fmt, lang):
    return client.get(reverse("plan_version_export", args=[plan.id, 1, fmt]), HTTP_ACCEPT_LANGUAGE=lang)


def _block_and_table(text: str, delimiter: str):
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    blank = rows.index([])
    return {r[0]: r[1] for r in rows[:blank]}, rows[blank + 1], rows[blank + 2:]


def _costs(plan):
    return plan.versions.get().full_result["costs"]


def test_russian_csv_has_the_header_block_semicolons_and_decimal_commas(owner, plans):  # noqa: F811
    plan = plans["plans"]["inference"]
    text = _get(owner, plan, "csv", "ru").content.decode("utf-8-sig")
    block, header, rows = _block_and_table(text, ";")
    costs = _costs(plan)
    assert block["План"] == plan.name and block["Версия"] == "1"
    assert block["Дата выгрузки"] == timezone.localdate().isoformat()
    assert block["Цены на дату"] == costs["as_of"] and block["Валюта"] == "RUB"
    assert "22 %" in block["НДС"] and "включён" in block["НДС"]
    fx = next(v for k, v in block.items() if k.startswith("Курс"))
    fx_used = costs["inputs_used"]["fx"][0]
    assert (fx_used.get("rate_date") or fx_used["on"]) in fx and fx_used["source"][:30] in fx and "1 USD = " in fx
    assert header[:4] == ["Место", "Вариант", "Тип", "Цели выполнены"]
    totals = [r for r in rows if r[4] == "Итого"]
    # decimal comma, no dot; the order is the decision: cheapest first among those meeting the targets
    assert all("," in r[9] and "." not in r[9] for r in totals)
    # the exports' order (costs.exports.export_order): the decided option first, then the cheapest of
    # each other way of paying (the PDF's alternatives), then the rest in the decision's order
    from costs.exports import export_order

    values = [Decimal(r[11].replace(",", ".")) for r in totals]
    expected = [Decimal(o["totals"]["gross"]) for o in export_order(costs)]
    assert values == expected[:len(values)]
    assert export_order(costs)[0]["id"] == plan.versions.get().result["decision"]["option_id"]
    assert [int(r[0]) for r in totals] == list(range(1, len(totals) + 1))


def test_english_csv_uses_commas_and_decimal_points(owner, plans):  # noqa: F811
    plan = plans["plans"]["pretraining"]
    text = _get(owner, plan, "csv", "en").content.decode("utf-8-sig")
    block, header, rows = _block_and_table(text, ",")
    assert block["Currency"] == "RUB" and block["Version"] == "1"
    assert header[9] == "Total, net"
    total = next(r for r in rows if r[4] == "Total")
    assert "." in total[9] and "," not in total[9]


def test_xlsx_summary_first_sorted_with_human_headers_and_currency(owner, plans):  # noqa: F811
    plan = plans["plans"]["inference"]
    book = openpyxl.load_workbook(io.BytesIO(_get(owner, plan, "xlsx", "ru").content))
    assert book.sheetnames[0] == "Сводка"
    assert book.sheetnames[-2:] == ["Денежный поток", "Исходные данные"]
    assert all(len(n) <= 31 and "~" not in n and "|" not in n for n in book.sheetnames)
    ws = book["Сводка"]
    header_row = next(r for r in range(1, 30) if ws.cell(r, 1).value == "Место")
    headers = [c.value for c in ws[header_row]]
    assert headers[:7] == ["Место", "Вариант", "Тип", "Цели выполнены", "Итого без НДС", "НДС", "Итого с НДС"]
    assert ws.freeze_panes == f"A{header_row + 1}"
    first = ws.cell(header_row + 1, 7)
    assert isinstance(first.value, int | float) and "RUB" in first.number_format
    gross = [ws.cell(r, 7).value for r in range(header_row + 1, ws.max_row + 1) if ws.cell(r, 7).value is not None]
    from costs.exports import export_order

    costs = _costs(plan)  # in the exports' order: the decided option first, as in the PDF
    expected = [float(o["totals"]["gross"]) for o in export_order(costs)]
    assert gross == pytest.approx(expected[:len(gross)])
    assert ws.column_dimensions["B"].width >= 40  # labels fit
    facts = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(2, header_row)}
    assert facts["Валюта"] == "RUB" and "на " in next(v for k, v in facts.items() if k.startswith("Курс"))
    # P10/P50/P90 on both bases, each labelled, the gross ones the Monte Carlo's gross percentiles
    for label in ("P10, без НДС", "P50, без НДС", "P90, без НДС", "P10, с НДС", "P50, с НДС", "P90, с НДС"):
        assert label in headers, label
    mc = _costs(plan)["monte_carlo"]["options"]
    by_label = {ws.cell(r, 2).value: r for r in range(header_row + 1, ws.max_row + 1)}
    from django.utils import translation

    from costs.labels import option_label

    with translation.override("ru"):
        labels = {o["id"]: str(option_label(o)) for o in _costs(plan)["options"]}
    checked = 0
    for i, q in mc.items():
        r = by_label.get(labels[i])
        if r is None:
            continue
        assert ws.cell(r, headers.index("P50, с НДС") + 1).value == pytest.approx(float(q["p50_gross"]))
        assert ws.cell(r, headers.index("P50, без НДС") + 1).value == pytest.approx(float(q["p50_net"]))
        checked += 1
    assert checked


def test_xlsx_inputs_list_every_rate_with_its_own_date_and_source(owner, plans):  # noqa: F811
    plan = plans["plans"]["finetuning"]
    book = openpyxl.load_workbook(io.BytesIO(_get(owner, plan, "xlsx", "en").content))
    ws = book["Inputs"]
    assert [c.value for c in ws[1]] == ["Kind", "Name", "Value", "Currency", "Unit", "Source", "Date",
                                        "Age at the plan date, days"]
    rates = [r for r in ws.iter_rows(min_row=2, values_only=True) if r[0] == "rate"]
    assert len(rates) == len(_costs(plan)["inputs_used"]["rates"])
    assert all(r[5] for r in rates) and all(r[6] for r in rates)
    assert len({r[6] for r in rates}) > 1  # each rate its own date, not one date for all
    fx = [r for r in ws.iter_rows(min_row=2, values_only=True) if r[0] == "FX rate"]
    assert fx and fx[0][5] and fx[0][6]


def _pdf_pages(client, plan, lang):
    pdf = PdfReader(io.BytesIO(_get(client, plan, "pdf", lang).content))
    return [" ".join(p.extract_text().split()) for p in pdf.pages]


def _squash(text: str) -> str:
    return "".join(str(text).split())


KINDS = ["inference", "finetuning", "pretraining", "rag", "classic_training", "external_api"]


@pytest.mark.parametrize("kind", KINDS)
def test_pdf_is_a_short_report_with_the_decision_and_budget_on_page_one(owner, plans, kind):  # noqa: F811
    """Issue 21, part 6: at most 6 pages; page 1 the decision (its hardware, provider, budget, per
    month or per run, run time or latency) and the compared alternatives, the cloud among them."""
    from planner.templatetags.planner_tags import num

    plan = plans["plans"][kind]
    result = plan.versions.get().full_result
    decision, costs = result["decision"], result["costs"]
    pages = _pdf_pages(owner, plan, "ru")
    assert len(pages) <= 6, (kind, len(pages))
    first = pages[0]
    squashed = _squash(first)
    assert "Решение" in first and "Сравниваемые варианты" in first
    hardware = decision.get("hardware")
    if hardware:
        assert _squash(f'{hardware["gpu_count"]} × {hardware["accelerator"]}') in squashed, kind
    if decision.get("provider"):
        assert decision["provider"] in first, kind
    from django.utils import translation

    with translation.override("ru"):
        budget = _squash(f'{num(decision["budget"]["total"], 0)} RUB')
        per_month = decision["budget"].get("per_month")
        per_run = decision["budget"].get("per_run")
        per = _squash(num(per_run if per_run else per_month, 0)) if (per_run or per_month) else None
    assert budget in squashed, (kind, budget)
    assert "," not in budget  # whole roubles in the headline, no kopecks
    if per_run and Decimal(decision["budget"]["runs"]) == 1:
        # one run: the budget is that run's, said once ("за 1 запуск"), never "за 36 мес."
        assert "за 1 запуск" in first and "За запуск" not in first, kind
    elif per_run:
        assert "За запуск" in first and per in squashed, kind
    elif per_month:
        assert "В месяц" in first and per in squashed, kind
    targets = decision.get("targets") or {}
    if targets.get("wall_clock_hours"):
        assert "Время выполнения" in first and "GPU-часов" in first, kind
    if targets.get("ttft_p95_ms"):
        assert "Время до первого токена" in first, kind
    if decision.get("why"):
        assert "Почему" in first
    # the compared alternatives: the decided option and the cheapest of each other way of paying
    kinds = {o["kind"] for o in costs["options"]}
    if kinds & {"cloud_on_demand", "cloud_spot", "cloud_commit_1y", "cloud_commit_3y"}:
        assert "Облако" in first, kind
    assert "Рекомендуется" not in " ".join(pages)  # not the web page printed


@pytest.mark.parametrize("kind", KINDS)
def test_pdf_pages_two_to_four_compare_list_and_source(owner, plans, kind):  # noqa: F811
    plan = plans["plans"][kind]
    costs = _costs(plan)
    pages = _pdf_pages(owner, plan, "ru")
    second, rest = pages[1], " ".join(pages[2:])
    for text in ("Сравнение вариантов", "Накопленные затраты по месяцам", "месяц · RUB, с НДС",
                 "Сразу (месяц 0)", "Без НДС, RUB", "НДС, RUB", "С НДС, RUB"):
        assert text in second, (kind, text)
    # nice ticks on the chart's axis: whole millions or thousands, never 22 898 557
    assert re.search(r"\b\d+ (млн|тыс\.)", second), kind
    if (costs.get("monte_carlo") or {}).get("options"):
        assert "P10, P50 и P90 итога по вариантам" in second and "Монте-Карло, с НДС" in second, kind
    assert "Спецификация оборудования" in rest
    owned = (plan.versions.get().result["decision"].get("option_kind") or "") in ("onprem", "hybrid")
    for text in (["Серверы", "GPU", "CPU", "ОЗУ"] if kind != "external_api" else ["API модели", "CPU-сервер", "ОЗУ"]):
        assert text in rest, (kind, text)
    # the site's power and racks for hardware the team owns; a rented instance's are the provider's
    for text in ("Электропитание", "Стойки"):
        assert (text in rest) == (owned and kind != "external_api"), (kind, text)
    assert "Сеть" in rest or kind == "external_api"
    for text in ("Допущения, цены и их источники", "Горизонт", "Курс USD/RUB", "Цены, сначала самые старые",
                 "Источники цен", f"Выгружено {timezone.localdate().day}"):
        assert text in " ".join(pages), (kind, text)
    fx = costs["inputs_used"]["fx"][0]
    assert f"на {fx.get('rate_date') or fx['on']}" in rest
    from django.utils import translation

    from planner.pdf_summary import pdf_summary
    from planner.presentation import version_view

    with translation.override("ru"):
        version = plan.versions.get()
        sources = pdf_summary(version, version_view(version))["sources"]
    assert sources and all(_squash(src) in _squash(rest) for src in sources), kind


def test_russian_pdf_has_no_english_words(owner, plans):  # noqa: F811
    from tests.functional.test_russian_everywhere import latin_words

    for kind in ("inference", "pretraining"):
        text = " ".join(_pdf_pages(owner, plans["plans"][kind], "ru"))
        assert not latin_words(text, plans["allowed"]), (kind, sorted(latin_words(text, plans["allowed"])))


def test_pdf_in_english_holds_everything(owner, plans):  # noqa: F811
    plan = plans["plans"]["rag"]
    pages = _pdf_pages(owner, plan, "en")
    assert len(pages) <= 6
    first, second, rest = pages[0], _squash(pages[1]), _squash(" ".join(pages[2:]))
    for text in ("Decision", "Rent", "Budget", "Per month", "Alternatives compared", "Exported on"):
        assert text in first, text
    for text in ("The options compared", "Cumulative cost by month", "month · RUB, with VAT", "Net, RUB", "VAT, RUB",
                 "Gross (with VAT), RUB"):
        assert _squash(text) in second, text
    for text in ("Bill of materials", "Assumptions, prices and their sources", "FX rate USD/RUB", "Price sources"):
        assert _squash(text) in rest, text


def test_file_names_keep_a_cyrillic_title_for_every_format(owner, plans):  # noqa: F811
    """Issue 21, part 8: "Агент на внешнем API модели" was downloaded as api-v1.xlsx."""
    from urllib.parse import quote

    plan = plans["plans"]["external_api"]
    name = plan.name
    plan.name = "Агент на внешнем API модели"
    plan.save(update_fields=["name"])
    try:
        for fmt in ("pdf", "xlsx", "csv"):
            header = _get(owner, plan, fmt, "ru")["Content-Disposition"]
            assert header.startswith(f'attachment; filename="agent-na-vneshnem-api-modeli-v1.{fmt}"; '), header
            assert f"filename*=UTF-8''{quote(f'агент-на-внешнем-api-модели-v1.{fmt}', safe='')}" in header
    finally:
        plan.name = name
        plan.save(update_fields=["name"])


def test_russian_xlsx_calls_rate_card_rows_rates_and_fx_rows_exchange_rates(owner, plans):  # noqa: F811
    """Issue 21, part 7: every rate-card row was typed "курс" (exchange rate) instead of "ставка"."""
    plan = plans["plans"]["finetuning"]
    book = openpyxl.load_workbook(io.BytesIO(_get(owner, plan, "xlsx", "ru").content))
    kinds = [r[0] for r in book["Исходные данные"].iter_rows(min_row=2, values_only=True)]
    assert kinds.count("ставка") == len(_costs(plan)["inputs_used"]["rates"]) > 0
    assert "курс" not in kinds and "Курс валют" in kinds
    for name in book.sheetnames:  # whole words: no separator left dangling at the end of a cut name
        assert len(name) <= 31 and not name.endswith(("·", "-", ",")), name


def _xlsx(client, plan, lang="ru"):
    return openpyxl.load_workbook(io.BytesIO(_get(client, plan, "xlsx", lang).content))


def test_xlsx_options_are_numbered_as_in_the_pdf_without_gaps(owner, plans):  # noqa: F811
    """Issue 21, part 7: option numbers skipped (1-5, 7, 9 ...) and sheet names were cut mid-label."""
    from costs.exports import compared_count, export_order

    plan = plans["plans"]["pretraining"]
    book = _xlsx(owner, plan)
    costs = _costs(plan)
    k = compared_count(costs)
    option_sheets = book.sheetnames[1:-2]
    assert len(option_sheets) == k > 1
    assert [int(n.split(".", 1)[0]) for n in option_sheets] == list(range(1, k + 1))
    ws = book["Сводка"]
    header_row = next(r for r in range(1, 30) if ws.cell(r, 1).value == "Место")
    ranks = [ws.cell(r, 1).value for r in range(header_row + 1, ws.max_row + 1) if ws.cell(r, 1).value is not None]
    assert ranks == list(range(1, len(export_order(costs)) + 1))
    for i, name in enumerate(option_sheets, start=1):
        sheet = book[name]
        assert sheet["A1"].value == f"{i}. {ws.cell(header_row + i, 2).value}"  # the same option on both
        assert len(name) <= 31 and not name.rstrip().endswith(("·", "-", ",")), name
    # the first page of the PDF numbers its alternatives the same way
    first = _pdf_pages(owner, plan, "ru")[0]
    second_label = ws.cell(header_row + 2, 2).value
    assert _squash(f"2 {second_label}") in _squash(first)


def test_xlsx_has_capex_and_opex_and_a_server_purchase_is_capex(owner, plans):  # noqa: F811
    plan = plans["plans"]["pretraining"]
    book = _xlsx(owner, plan)
    ws = book["Сводка"]
    header_row = next(r for r in range(1, 30) if ws.cell(r, 1).value == "Место")
    headers = [c.value for c in ws[header_row]]
    net, capex, opex = (headers.index(h) + 1 for h in (
        "Итого без НДС", "Капитальные затраты (покупка оборудования), без НДС",
        "Операционные затраты (услуги, аренда, электричество, персонал), без НДС"))
    checked = owned = 0
    for r in range(header_row + 1, ws.max_row + 1):
        c, o, total = ws.cell(r, capex).value, ws.cell(r, opex).value, ws.cell(r, net).value
        if c is None or total is None:
            continue
        assert c + o == pytest.approx(total, abs=0.05)
        checked += 1
        owned += c > 0
    assert checked and owned  # the on-prem and hybrid options buy equipment
    sheet = next(book[n] for n in book.sheetnames if "Свои серверы" in n)
    rows = [[c.value for c in row] for row in sheet.iter_rows(min_row=5)]
    purchase = next(r for r in rows if r[1] == "GPU-серверы, покупка")
    assert purchase[2] == "капитальные" and purchase[3] > 0
    lines = [r[1] for r in rows if r[2] in ("капитальные", "операционные")]
    assert not any(str(x).startswith("Время GPU, полезное") or str(x).startswith("Время GPU, простой") for x in lines)
    assert any(r[2] == "операционные" and r[1] == "Электричество и охлаждение" for r in rows)
    assert any(r[0] == "в том числе капитальные затраты" for r in rows)


def test_xlsx_cash_flow_is_net_and_gross(owner, plans):  # noqa: F811
    plan = plans["plans"]["pretraining"]
    ws = _xlsx(owner, plan)["Денежный поток"]
    headers = [c.value for c in ws[3]]
    nets = [h for h in headers if h and h.endswith(", без НДС")]
    grosses = [h for h in headers if h and h.endswith(", с НДС")]
    assert nets and len(nets) == len(grosses)
    assert [h.rsplit(",", 1)[0] for h in nets] == [h.rsplit(",", 1)[0] for h in grosses]
    month0 = [c.value for c in ws[4]]
    assert month0[0] == 0
    n = len(nets)
    assert any(month0[1 + n + j] > month0[1 + j] for j in range(n))  # VAT on the upfront purchase


def test_russian_xlsx_has_no_english_labels_or_units(owner, plans):  # noqa: F811
    """No "It load kw = 5,16", "servers", "kW" or "Capex" on a Russian workbook; English-only sources
    stay verbatim in their own column."""
    plan = plans["plans"]["pretraining"]
    book = _xlsx(owner, plan)
    for name in book.sheetnames[1:-2]:
        ws = book[name]
        header = [c.value for c in ws[4]]
        inputs_col, source_col = header.index("Исходные данные (значение, единица)"), header.index("Источник")
        for row in ws.iter_rows(min_row=5, values_only=True):
            text = str(row[inputs_col] or "")
            assert not re.search(r"It load|Capex|\bservers\b|\bkW\b", text), (name, text)
            if row[source_col] and " " in str(row[source_col]):  # a source of one word ("допущение") may recur
                assert row[source_col] not in text
        for row in ws.iter_rows(values_only=True):
            assert not any(c in ("servers", "kW") for c in row), (name, row)
            assert not any(isinstance(c, str) and c.startswith("Работает 0,0") for c in row)


@pytest.mark.parametrize("kind", ["inference", "pretraining"])
def test_options_carry_the_same_numbers_on_the_page_and_in_the_xlsx(owner, plans, kind):  # noqa: F811
    """Issue 21, 7.: "option 3" is one option everywhere: the plan page's cost table and cards number
    the options as the XLSX's summary does (costs.order), the decision first."""
    from django.utils import translation

    from costs.labels import option_label
    from planner.models import PlanVersion
    from planner.presentation import version_view

    plan = plans["plans"][kind]
    version = PlanVersion.objects.get(plan=plan, number=1)
    with translation.override("ru"):
        view = version_view(version)
        labels = {o["id"]: str(option_label(o)) for o in _costs(plan)["options"]}
    page = {o["id"]: o["number"] for o in view["costs"]["options"]}
    assert view["costs"]["options"][0]["id"] == version.result["decision"]["option_id"]
    assert page[version.result["decision"]["option_id"]] == 1
    book = openpyxl.load_workbook(io.BytesIO(_get(owner, plan, "xlsx", "ru").content))
    ws = book["Сводка"]
    header_row = next(r for r in range(1, 30) if ws.cell(r, 1).value == "Место")
    xlsx = {ws.cell(r, 2).value: ws.cell(r, 1).value for r in range(header_row + 1, ws.max_row + 1)}
    compared = [oid for oid in page if labels[oid] in xlsx]
    assert compared and all(int(xlsx[labels[oid]]) == page[oid] for oid in compared)
