"""The XLSX for procurement: a summary of every option (numbered as in the PDF and the CSV, CAPEX and
OPEX), a sheet per compared option, cash flow net and gross, and the inputs with their sources."""

from __future__ import annotations

import io
from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext
from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from costs.labels import KIND_LABELS, ROW_LABELS, line_label, option_label

from .exports import (
    OWNED_KINDS,
    RISK_ROW_LABEL,
    SHEET_NAME_MAX,
    ExportMeta,
    _budget_and_risk_rows,
    _dec,
    _fx_lines,
    _meets_text,
    _unit,
    breakdown_rows,
    compared_count,
    export_order,
    header_block,
)

# --- XLSX ------------------------------------------------------------------------------------


def xlsx_value(value):
    """Text as a worksheet can hold it: XML 1.0 forbids most control characters, and a supplier's quote
    or a plan name may carry them (openpyxl raises IllegalCharacterError; found by schemathesis)."""
    return ILLEGAL_CHARACTERS_RE.sub("", value) if isinstance(value, str) else value


def _money_format(currency: str) -> str:
    return f'#,##0.00 "{currency}"'


BOLD = Font(bold=True)


def _fit_widths(ws, *, first_row: int = 1, minimum: int = 8, maximum: int = 70) -> None:
    """Each column as wide as its longest value (money counted as formatted), within limits."""
    widths: dict[int, int] = {}
    for row in ws.iter_rows(min_row=first_row):
        for cell in row:
            if cell.value is None:
                continue
            value = cell.value
            length = len(f"{value:,.2f}") + 5 if isinstance(value, int | float | Decimal) and not isinstance(
                value, bool) else max(len(line) for line in str(value).splitlines() or [""])
            widths[cell.column] = max(widths.get(cell.column, 0), length)
    for col, width in widths.items():
        ws.column_dimensions[get_column_letter(col)].width = max(minimum, min(maximum, width + 2))


def _write_table(ws, headers: list[str], rows: list[list], *, start_row: int, money_cols: set[int],
                 currency: str) -> None:
    for j, name in enumerate(headers, start=1):
        cell = ws.cell(row=start_row, column=j, value=xlsx_value(name))
        cell.font = BOLD
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    fmt = _money_format(currency)
    for i, values in enumerate(rows, start=start_row + 1):
        for j, value in enumerate(values, start=1):
            cell = ws.cell(row=i, column=j, value=float(value) if isinstance(value, Decimal) else xlsx_value(value))
            if j in money_cols and value is not None:
                cell.number_format = fmt
    ws.freeze_panes = ws.cell(row=start_row + 1, column=1)


def _shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a word, without a dangling separator ("·", "-", ","); a
    single word longer than the limit is the only thing ever cut inside."""
    text = text.strip()
    while len(text) > limit and " " in text:
        text = text.rsplit(" ", 1)[0].rstrip(" ·-–—,;:")
    return text[:limit].strip()


def _sheet_title(text: str, used: set[str]) -> str:
    """A unique sheet name (Excel: at most 31 characters, none of []:*?/\\), shortened by words."""
    base = _shorten("".join(ch for ch in xlsx_value(text) if ch not in "[]:*?/\\"), SHEET_NAME_MAX) or "1"
    title, n = base, 2
    while title.lower() in used:
        suffix = f" ({n})"
        title = _shorten(base, SHEET_NAME_MAX - len(suffix)) + suffix
        n += 1
    used.add(title.lower())
    return title


def _sheet_kinds() -> dict[str, str]:
    """Short, whole names of the ways of paying, for sheet names (Excel allows 31 characters)."""
    return {"cloud_on_demand": _("Cloud, on demand"), "cloud_spot": _("Cloud, spot"),
            "cloud_commit_1y": _("Cloud, 1 year"), "cloud_commit_3y": _("Cloud, 3 years"),
            "dedicated": _("Dedicated servers"), "onprem": _("Own servers"), "hybrid": _("Hybrid"), "api": _("API")}


def _option_sheet_name(rank: int, option: dict) -> str:
    """ "3. Cloud, spot · A100 PCIe 80GB": the option's number, its way of paying and what runs,
    whole words only (what does not fit is left out, never cut inside a word)."""
    kind = _sheet_kinds().get(option.get("kind"), option.get("kind") or "")
    d = option.get("detail") or {}
    what = d.get("accelerator") or d.get("model") or d.get("provider") or ""
    return _shorten(f"{rank}. {kind}" + (f" · {what}" if what else ""), SHEET_NAME_MAX)


def _is_capex(option: dict, row: dict, line: dict) -> bool:
    """A purchase of owned equipment (servers, spares, network, storage bought at month 0)."""
    return (option.get("kind") in OWNED_KINDS and row.get("row") in ("gpu_time", "infrastructure")
            and (_dec(line.get("upfront_net")) or Decimal(0)) > 0)


def capex_opex(option: dict) -> tuple[Decimal | None, Decimal | None]:
    """(CAPEX, OPEX) of an option's total, net of VAT; (None, None) for an option priced in totals only."""
    budget, _risk = _budget_and_risk_rows(option)
    if not budget or any(row.get("lines") is None for row in budget):
        return None, None
    capex = opex = Decimal(0)
    for row in budget:
        for ln in row.get("lines") or []:
            total = _dec(ln.get("total_net")) or Decimal(0)
            if _is_capex(option, row, ln):
                capex += total
            else:
                opex += total
    return capex, opex


def _summary_rows(ordered: list[dict], result: dict, meta: ExportMeta) -> list[list]:
    mc = (result.get("monte_carlo") or {}).get("options") or {}
    rows = []
    for rank, o in enumerate(ordered, start=1):
        totals, unit = o.get("totals") or {}, o.get("unit_costs") or {}
        q = mc.get(o.get("id")) or {}
        month = (o.get("per_month_average") or {}).get("gross" if result.get("include_vat") else "net")
        rows.append([
            rank, option_label(o), str(KIND_LABELS.get(o.get("kind"), o.get("kind"))), _meets_text(o, meta.meets),
            _dec(totals.get("net")), _dec(totals.get("vat")), _dec(totals.get("gross")), *capex_opex(o), _dec(month),
            _dec(unit.get("per_useful_gpu_hour_net")), _dec(unit.get("per_1m_tokens_net")),
            _dec(unit.get("per_training_run_net")),
            # net beside "Total, net", gross beside "Total with VAT" (a result stored before the
            # gross percentiles has net ones only, under p10..)
            *(_dec(q.get(f"{k}_net", q.get(k))) for k in ("p10", "p50", "p90")),
            *(_dec(q.get(f"{k}_gross")) for k in ("p10", "p50", "p90")),
            "; ".join(str(u) for u in o.get("unknowns") or []),
            # beside the total, not in it; without a cost of an hour of downtime only its hours are known
            _dec((o.get("risk") or {}).get("expected_downtime_net")),
            _dec((o.get("risk") or {}).get("expected_downtime_hours_per_year")),
            _dec((o.get("risk") or {}).get("expected_downtime_hours_per_run")),
        ])
    return rows


def _summary_headers() -> list[str]:
    return [_("Rank"), _("Option"), _("Kind"), _("Meets the targets"), _("Total, net"), _("VAT"),
            _("Total with VAT"), _("CAPEX (equipment bought), net"), _("OPEX (services, rent, power, staff), net"),
            _("Per month (average)"), _("Per useful GPU-hour, net"), _("Per 1M tokens, net"),
            _("Per training run, net"), _("P10, net"), _("P50, net"), _("P90, net"),
            _("P10, with VAT"), _("P50, with VAT"), _("P90, with VAT"), _("Unknown inputs"),
            _("Expected cost of incidents, net (not in the total)"), _("Expected downtime, hours a year"),
            _("Expected downtime, hours per run")]


# Inputs of cost lines that are not rates, named in the file's language (the page's generic
# humanised key would leave "It load kw" or "Capex" in English).
INPUT_NAMES = {
    "it_load_kw": gettext_lazy("IT load, kW"), "capex": gettext_lazy("Equipment bought (CAPEX), net"),
    "hosts": gettext_lazy("Hosts"), "servers": gettext_lazy("Servers"), "gpus": gettext_lazy("GPUs"),
}
def _line_inputs(inputs: dict) -> tuple[str, str]:
    """("name = value unit; ...", "source; ...") of a cost line: values in the file's language,
    the sources (often only in English) verbatim in their own column."""
    from planner.presentation import _number_text, input_label, line_inputs, value_label

    values, sources = [], []
    for r in line_inputs({"rates": inputs.get("rates") or []}):
        values.append(f"{r['name']} = {r['value']} {r['unit']}".strip())
        if r.get("source") and str(r["source"]) not in sources:
            sources.append(str(r["source"]))
    for key, value in inputs.items():
        if key in ("rates", "unit") or key.endswith("_i18n") or isinstance(value, dict | list):
            continue
        name = str(INPUT_NAMES[key]) if key in INPUT_NAMES else input_label(key)
        unit = _unit(inputs.get("unit", "")) if key == "quantity" else ""
        values.append(f"{name} = {_number_text(value_label(value))} {unit}".strip())
    return "; ".join(values), "; ".join(sources)


def inputs_rows(result: dict) -> list[list]:
    """Every rate with its own value, unit, source and date; FX, VAT and the power tariff too."""
    from costs.engine.rates import RATE_SCHEMA, base_key
    from planner.i18n import render

    used = result.get("inputs_used") or {}
    rows = []
    for r in used.get("rates") or []:
        spec = RATE_SCHEMA.get(base_key(r.get("key", "")))
        name = render(spec.help) if spec is not None else r.get("key", "")
        rows.append([pgettext("rate card row", "rate"), name, _dec(r.get("value")), r.get("currency") or "",
                     _(r["unit"]) if r.get("unit") else "", r.get("source") or "", r.get("valid_from") or ""])
    for pair, text, on, source in _fx_lines(result):
        rows.append([_("FX rate"), pair, text, "", "", source, on])
    vat = used.get("vat") or {}
    for month, rate in enumerate(vat.get("rates_by_month") or []):
        rows.append([_("VAT"), _("VAT %(country)s, month %(n)s") % {"country": vat.get("country", ""), "n": month + 1},
                     _dec(rate), "", _("share"), vat.get("source") or "", ""])
    # every price the plan's options use, with its own date and age (costs.price_sources, issue 14)
    for price in (result.get("freshness") or {}).get("prices", []):
        if price.get("what") == "fx":
            continue
        rows.append([_(price.get("kind") or "list price"), price.get("row", ""), None, "", "",
                     price.get("source") or "", price.get("date") or _("undated"), price.get("age_days")])
    if used.get("power_tariff"):
        p = used["power_tariff"]
        rows.append([_("electricity tariff"), _("electricity tariff"), _dec(p.get("amount")), p.get("currency") or "",
                     _("per kWh"), p.get("source") or "", p.get("valid_from") or p.get("as_of") or ""])
    return rows


def inputs_headers() -> list[str]:
    return [_("Kind"), _("Name"), _("Value"), _("Currency"), _("Unit"), _("Source"), _("Date"),
            _("Age at the plan date, days")]


def _option_line_rows(option: dict, rows_of: list[dict], label=None) -> list[list]:
    """One row per cost line: [row, line, CAPEX/OPEX, upfront, per month, at the end, total, VAT,
    gross, inputs, source]. An owned option's server purchase, which the engine splits into GPU
    time useful / idle by utilisation, is one CAPEX line: the purchase of the servers."""
    out = []
    for row in rows_of:
        lines = list(row.get("lines") or [])
        purchase = [ln for ln in lines if str(ln.get("key", "")).startswith(("gpu_time.useful", "gpu_time.idle"))
                    and _is_capex(option, row, ln)]
        if len(purchase) > 1:
            merged = {"key": "gpu_time.purchase", "inputs": purchase[0].get("inputs") or {}}
            for k in ("upfront_net", "monthly_net", "terminal_net", "total_net", "vat", "total_gross"):
                values = [_dec(ln.get(k)) for ln in purchase]
                merged[k] = sum((v for v in values if v is not None), Decimal(0)) if any(
                    v is not None for v in values) else None
            at = lines.index(purchase[0])
            lines = [ln for ln in lines if ln not in purchase]
            lines.insert(at, merged)
        for ln in lines:
            capex = ln.get("key") == "gpu_time.purchase" or _is_capex(option, row, ln)
            values, sources = _line_inputs(ln.get("inputs") or {})
            out.append([label or (str(_("Equipment")) if capex else str(ROW_LABELS.get(row.get("row"), row.get("row")))),
                        str(_("GPU servers, purchase")) if ln.get("key") == "gpu_time.purchase"
                        else line_label(ln.get("key", "")),
                        "" if label else str(_("CAPEX") if capex else _("OPEX")),
                        _dec(ln.get("upfront_net")), _dec(ln.get("monthly_net")), _dec(ln.get("terminal_net")),
                        _dec(ln.get("total_net")), _dec(ln.get("vat")), _dec(ln.get("total_gross")), values, sources])
    return out


def _short_name(rank: int, option: dict) -> str:
    return _option_sheet_name(rank, option)


def costs_xlsx(result: dict, *, title: str = "GPU Planner", meta: ExportMeta | None = None) -> bytes:
    from planner.templatetags.planner_tags import pct

    meta = meta or ExportMeta(plan=title)
    cur = result.get("currency", "")
    ordered = export_order(result, meta.meets)
    compared = compared_count(result, meta.meets)
    wb = Workbook()
    ws = wb.active
    used: set[str] = set()
    ws.title = _sheet_title(_("Summary"), used)
    ws["A1"] = title
    ws["A1"].font = Font(bold=True, size=14)
    block = header_block(result, meta)
    for i, (label, value) in enumerate(block, start=2):
        ws.cell(row=i, column=1, value=xlsx_value(label)).font = BOLD
        ws.cell(row=i, column=2, value=xlsx_value(value))
    start = len(block) + 3
    money = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21}
    _write_table(ws, _summary_headers(), _summary_rows(ordered, result, meta), start_row=start, money_cols=money,
                 currency=cur)
    for r in range(start + 1, start + 1 + compared):  # the alternatives compared, each with its own sheet
        ws.cell(row=r, column=1).font = BOLD
        ws.cell(row=r, column=2).font = BOLD
    _fit_widths(ws, first_row=start)
    ws.column_dimensions["B"].width = max(ws.column_dimensions["B"].width or 0, 60)
    ws.cell(row=start - 1, column=1, value=_(
        "Options 1 to %(n)s: the decided option and the cheapest of each other way of paying (as in the PDF), "
        "each with its own sheet; the others follow in the order of the decision.") % {"n": compared})

    line_headers = [_("Row"), _("Line"), _("CAPEX or OPEX"), _("Upfront, net"), _("Per month, net"),
                    _("At the end, net"), _("Total, net"), _("VAT"), _("Total with VAT"), _("Inputs (value, unit)"),
                    _("Source")]
    for rank, o in enumerate(ordered[:compared], start=1):
        sheet = wb.create_sheet(_sheet_title(_option_sheet_name(rank, o), used))
        sheet["A1"] = f"{rank}. {option_label(o)}"
        sheet["A1"].font = BOLD
        sheet["A2"] = _("Utilisation %(u)s, efficiency %(e)s; option %(rank)s of %(n)s on the summary sheet") % {
            "u": pct(o.get("utilisation"), 1) if o.get("utilisation") is not None else _("unknown"),
            "e": pct(o.get("efficiency"), 0) if o.get("efficiency") is not None else _("unknown"),
            "rank": rank, "n": len(ordered)}
        budget, risk = _budget_and_risk_rows(o)
        rows = _option_line_rows(o, budget)
        totals = o.get("totals") or {}
        capex, opex = capex_opex(o)
        rows.append([_("Total"), "", "", None, None, None, _dec(totals.get("net")), _dec(totals.get("vat")),
                     _dec(totals.get("gross")), "", ""])
        total_row = len(rows)
        if capex is not None:
            rows.append([_("of which CAPEX"), "", _("CAPEX"), None, None, None, capex, None, None, "", ""])
            rows.append([_("of which OPEX"), "", _("OPEX"), None, None, None, opex, None, None, "", ""])
        rows += _option_line_rows(o, risk, str(RISK_ROW_LABEL))  # under the total, not in it
        _write_table(sheet, line_headers, rows, start_row=4, money_cols={4, 5, 6, 7, 8, 9}, currency=cur)
        for cell in sheet[4 + total_row]:
            cell.font = BOLD
        items = [[str(ROW_LABELS.get(row.get("row"), row.get("row"))), line_label(ln.get("key", "")), *b]
                 for row in o.get("rows") or [] for ln in row.get("lines") or [] for b in breakdown_rows(ln)]
        if items:
            start = sheet.max_row + 3
            sheet.cell(row=start - 1, column=1, value=_("Breakdown: quantity × unit price × months = amount")).font = BOLD
            _write_table(sheet, [_("Row"), _("Line"), _("Item"), _("Quantity"), _("Unit"), _("Unit price"), _("Months"),
                                 _("Amount"), _("Price date"), _("Source"), _("Basis")], items, start_row=start,
                         money_cols={6, 8}, currency=cur)
            sheet.freeze_panes = "A5"
        _fit_widths(sheet, first_row=4)

    cf = wb.create_sheet(_sheet_title(_("Cash flow"), used))
    months = int(result.get("horizon_months") or 0)
    shown = ordered[:compared]
    names = [_short_name(rank, o) for rank, o in enumerate(shown, start=1)]
    headers = [_("Month")] + [f"{n}, {_('net of VAT')}" for n in names] + [f"{n}, {_('with VAT')}" for n in names]

    def flow(o, key, m):
        values = (o.get("cash_flow") or {}).get(key) or []
        return _dec(values[m]) if m < len(values) else None

    cf_rows = [[m] + [flow(o, "net", m) for o in shown] + [flow(o, "gross", m) for o in shown]
               for m in range(months + 1)]
    cf_rows.append([_("Total")] + [sum((r[j] for r in cf_rows if r[j] is not None), Decimal(0))
                                   for j in range(1, len(headers))])
    cf["A1"] = _("Cash flow per month in %(currency)s: net of VAT, then with VAT (gross); month 0 is the "
                 "upfront payment") % {"currency": cur}
    cf["A1"].font = BOLD
    _write_table(cf, headers, cf_rows, start_row=3, money_cols=set(range(2, len(headers) + 1)), currency=cur)
    for cell in cf[3 + len(cf_rows)]:
        cell.font = BOLD
    _fit_widths(cf, first_row=3, maximum=40)

    inp = wb.create_sheet(_sheet_title(_("Inputs"), used))
    _write_table(inp, inputs_headers(), inputs_rows(result), start_row=1, money_cols=set(), currency=cur)
    _fit_widths(inp, maximum=90)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()
