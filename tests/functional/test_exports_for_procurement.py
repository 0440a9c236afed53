"""The exports a procurement officer opens: the XLSX (openpyxl), the CSV and the PDF (text
extracted with pypdf) carry the plan, version, export date, currency, VAT, FX rate with its
date and source, and the options in the order of the decision; page 1 of the PDF holds the
decision summary."""

import csv
import io
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
    return plan.versions.get().result["costs"]


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
    # the order is the decision's (costs.decision.order): the decided option first
    values = [Decimal(r[11].replace(",", ".")) for r in totals]
    expected = [Decimal(costs["options"][i]["totals"]["gross"]) for i in costs["decision"]["order"]]
    assert values == expected[:len(values)]
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
    costs = _costs(plan)  # in the decision's order (costs.decision.order): the decided option first
    expected = [float(costs["options"][i]["totals"]["gross"]) for i in costs["decision"]["order"]]
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
    assert [c.value for c in ws[1]] == ["Kind", "Name", "Value", "Currency", "Unit", "Source", "Date"]
    rates = [r for r in ws.iter_rows(min_row=2, values_only=True) if r[0] == "rate"]
    assert len(rates) == len(_costs(plan)["inputs_used"]["rates"])
    assert all(r[5] for r in rates) and all(r[6] for r in rates)
    assert len({r[6] for r in rates}) > 1  # each rate its own date, not one date for all
    fx = [r for r in ws.iter_rows(min_row=2, values_only=True) if r[0] == "FX rate"]
    assert fx and fx[0][5] and fx[0][6]


def _pdf_pages(client, plan, lang):
    pdf = PdfReader(io.BytesIO(_get(client, plan, "pdf", lang).content))
    return [" ".join(p.extract_text().split()) for p in pdf.pages]


def test_pdf_page_one_holds_the_decision_summary(owner, plans):  # noqa: F811
    plan = plans["plans"]["inference"]
    first = _pdf_pages(owner, plan, "ru")[0]
    for text in ("Решение", "Оборудование", "Выбранный вариант", "Без НДС", "С НДС",
                 "НДС", "Курс", "Выгружено", "Вариант"):
        assert text in first, text
    fx = _costs(plan)["inputs_used"]["fx"][0]
    assert (fx.get("rate_date") or fx["on"]) in first
    assert "RUB" in first


@pytest.mark.parametrize("kind", ["inference", "finetuning", "pretraining", "rag", "classic_training",
                                  "external_api"])
def test_pdf_page_one_has_sources_fx_and_the_chart_for_every_kind(owner, plans, kind):  # noqa: F811
    plan = plans["plans"][kind]
    costs = _costs(plan)
    pages = _pdf_pages(owner, plan, "ru")
    first, rest = pages[0], " ".join(pages[1:])
    # the decision summary, the cost table with net / VAT / gross, FX with its date, the price sources,
    # the chart (its title and its axis: month, currency, the VAT basis of the totals), the export date
    for text in ("Решение", "Без НДС, RUB", "НДС, RUB", "С НДС, RUB", "Курс USD/RUB", "Источники цен",
                 "Накопленные затраты по месяцам", "месяц · RUB, с НДС",
                 f"Выгружено {timezone.localdate().day}"):
        assert text in first, (kind, text)
    fx = costs["inputs_used"]["fx"][0]
    assert f"на {fx.get('rate_date') or fx['on']}" in first
    # every price source of the summary is on page 1 (compared without white space: long
    # repository paths wrap), and the detail only starts on page 2
    from django.utils import translation

    from planner.pdf_summary import pdf_summary
    from planner.presentation import version_view

    with translation.override("ru"):
        version = plan.versions.get()
        sources = pdf_summary(version, version_view(version))["sources"]
    squashed = "".join(first.split())
    assert sources and all("".join(src.split()) in squashed for src in sources), kind
    assert "Рекомендуется" in rest and "Рекомендуется" not in first
    # the second chart, P10/P50/P90 of the shown options, opens page 2
    if (costs.get("monte_carlo") or {}).get("options"):
        assert "P10, P50 и P90 итога по вариантам" in pages[1] and "P90" in pages[1], kind
        # on the basis of page 1's totals (these plans show VAT), and labelled so
        assert "Монте-Карло, с НДС" in pages[1] and "RUB, с НДС" in pages[1], kind
    # the table's first row is the decision's first option, with its gross total in Russian format
    assert "1 / " in first and "Первые" in first


def test_pdf_page_one_in_english_holds_everything(owner, plans):  # noqa: F811
    plan = plans["plans"]["rag"]
    first = "".join(_pdf_pages(owner, plan, "en")[0].split())
    for text in ("Decision", "Net, RUB", "VAT, RUB", "Gross (with VAT), RUB", "FX rate USD/RUB", "Price sources",
                 "Cumulative cost by month", "month · RUB, with VAT", "Exported on"):
        assert "".join(text.split()) in first, text


def test_pdf_in_english_has_net_vat_gross_and_the_chart(owner, plans):  # noqa: F811
    plan = plans["plans"]["pretraining"]
    content = _get(owner, plan, "pdf", "en").content
    pdf = PdfReader(io.BytesIO(content))
    first = pdf.pages[0].extract_text()
    assert "Decision" in first and "Gross (with VAT)" in first and "Net" in first
    opening = "".join(p.extract_text() for p in pdf.pages)
    assert "Price sources" in opening and "Cumulative cost by month" in opening


def test_russian_xlsx_calls_rate_card_rows_rates_and_fx_rows_exchange_rates(owner, plans):  # noqa: F811
    """Issue 21, part 7: every rate-card row was typed "курс" (exchange rate) instead of "ставка"."""
    plan = plans["plans"]["finetuning"]
    book = openpyxl.load_workbook(io.BytesIO(_get(owner, plan, "xlsx", "ru").content))
    kinds = [r[0] for r in book["Исходные данные"].iter_rows(min_row=2, values_only=True)]
    assert kinds.count("ставка") == len(_costs(plan)["inputs_used"]["rates"]) > 0
    assert "курс" not in kinds and "Курс валют" in kinds
    for name in book.sheetnames:  # whole words: no separator left dangling at the end of a cut name
        assert len(name) <= 31 and not name.endswith(("·", "-", ",")), name
