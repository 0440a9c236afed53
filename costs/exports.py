"""CSV and XLSX exports of a cost result (the JSON of costs.engine / a stored plan version),
ready for a budget meeting: in the language active when they are made (headers, row and line
names, option labels, engine texts), ordered by the decision (options that meet the targets
first, cheapest on top), with the plan, version, export date, currency, VAT and FX rates
(each with its date and source) written into the file.

CSV: a header block, a blank line, then one line per cost line of every option (per row for
options priced in totals only) and a total line per option. Russian files use ";" and a
decimal comma (what Excel expects in a Russian locale); English ones "," and a decimal point.
XLSX: the summary sheet first, a sheet per shortlisted option, the cash flow and the inputs
(every rate with its own date and source). Numbers are numbers with a currency format.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext
from openpyxl import Workbook
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from costs.labels import KIND_LABELS, ROW_LABELS, line_label, option_label

MAX_OPTION_SHEETS = 30  # Excel handles more, people do not; every option is on the summary sheet
SHEET_NAME_MAX = 31  # Excel's limit


@dataclass
class ExportMeta:
    """What the file says about itself, besides the cost result."""

    plan: str = "GPU Planner"
    version: int | None = None
    exported_on: dt.date = field(default_factory=dt.date.today)
    # candidate id ("nvidia-h100-sxm5-80gb x8") -> does the sizing say it meets the targets
    meets: dict[str, bool] = field(default_factory=dict)


def _dec(value) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _russian() -> bool:
    return (translation.get_language() or "en").lower().startswith("ru")


def _total(option: dict, include_vat: bool) -> Decimal | None:
    return _dec((option.get("totals") or {}).get("gross" if include_vat else "net"))


def decision_order(result: dict, meets: dict[str, bool] | None = None) -> list[dict]:
    """The options in the order of the decision: those meeting the targets (or not known not
    to) first, then the cheapest; an option without a total last. A result that carries its
    own decision order (``decision.order``: positions in ``options``, or option ids) is taken as it is."""
    options = list(result.get("options") or [])
    order = ((result.get("decision") or {}).get("order") if isinstance(result.get("decision"), dict) else None)
    if isinstance(order, list) and order and all(isinstance(i, int) and 0 <= i < len(options) for i in order):
        # positions in `options` (costs.engine.decision.summary)
        listed = set(order)
        return [options[i] for i in order] + [o for n, o in enumerate(options) if n not in listed]
    if isinstance(order, list) and order:
        rank = {oid: i for i, oid in enumerate(order)}
        return sorted(options, key=lambda o: rank.get(o.get("id"), len(rank)))
    meets = meets or {}
    include_vat = bool(result.get("include_vat"))

    def key(o):
        total = _total(o, include_vat)
        met = meets.get(o.get("candidate"))
        return (met is False, total is None, total if total is not None else Decimal(0))

    return sorted(options, key=key)


def _meets_text(option: dict, meets: dict[str, bool]) -> str:
    met = meets.get(option.get("candidate"))
    if option.get("kind") == "api":
        return _("not applicable")
    return _("yes") if met else _("no") if met is False else _("unknown")


def _fx_lines(result: dict) -> list[tuple[str, str, str, str]]:
    """[(pair, "1 USD = 78.27 RUB", date, source)] for every FX rate the result used."""
    out = []
    for fx in (result.get("inputs_used") or {}).get("fx") or []:
        rate = _dec(fx.get("rate"))
        base, quote = fx.get("base", ""), fx.get("quote", "")
        if rate is None or rate == 0:
            text = _("unknown")
        elif rate < 1:  # show the pair the way people quote it: 1 USD = 78.27 RUB
            text = f"1 {quote} = {_number(1 / rate, 4)} {base}"
        else:
            text = f"1 {base} = {_number(rate, 4)} {quote}"
        out.append((f"{base}/{quote}", text, fx.get("rate_date") or fx.get("on") or "", fx.get("source") or ""))
    return out


def _vat_text(result: dict) -> str:
    vat = (result.get("inputs_used") or {}).get("vat") or {}
    rates = [_dec(r) for r in vat.get("rates_by_month") or []]
    rates = sorted({r for r in rates if r is not None})
    shares = ", ".join(f"{_number(r * 100, 0)} %" for r in rates) or _("unknown")
    if result.get("include_vat"):
        return _("included in the totals: %(rate)s (%(country)s)") % {"rate": shares, "country": vat.get("country", "")}
    return _("not included in the net totals; shown separately: %(rate)s (%(country)s)") % {
        "rate": shares, "country": vat.get("country", "")}


def _number(value, places: int | None = 2, *, group: bool = False) -> str:
    """A decimal in the file's convention: "1234,56" in Russian, "1234.56" in English."""
    number = _dec(value)
    if number is None:
        return ""
    if places is not None:
        number = number.quantize(Decimal(1).scaleb(-places)) if places else number.quantize(Decimal(1))
    text = f"{number:,f}" if group else f"{number:f}"
    if _russian():
        text = text.replace(",", "\u00a0").replace(".", ",")
    return text


def header_block(result: dict, meta: ExportMeta) -> list[tuple[str, str]]:
    """The facts a reader of the file needs before the numbers."""
    rows = [
        (_("Plan"), meta.plan),
        (_("Version"), str(meta.version) if meta.version is not None else ""),
        (_("Exported on"), meta.exported_on.isoformat()),
        (_("Prices as of"), str(result.get("as_of") or "")),
        (_("Horizon, months"), str(result.get("horizon_months") or "")),
        (_("Currency"), result.get("currency", "")),
        (_("VAT"), _vat_text(result)),
    ]
    for pair, text, on, source in _fx_lines(result):
        rows.append((_("FX rate %(pair)s") % {"pair": pair}, f"{text}; {_('as of %(date)s') % {'date': on}}; {source}"))
    if not _fx_lines(result):
        rows.append((_("FX rate"), _("none needed: every price is in %(currency)s") % {"currency": result.get("currency", "")}))
    rows.append((_("Order"), _("options that meet the targets first, then the cheapest")))
    return rows


# --- CSV -------------------------------------------------------------------------------------


def csv_columns() -> list[str]:
    return [_("Rank"), _("Option"), _("Kind"), _("Meets the targets"), _("Row"), _("Line"),
            _("Upfront, net"), _("Per month, net"), _("At the end, net"), _("Total, net"), _("VAT"),
            _("Total with VAT"), _("Currency"),
            # a line's breakdown items: quantity x unit price x months = amount, with the price's date and source
            _("Item"), _("Quantity"), _("Unit"), _("Unit price"), _("Months"), _("Amount"), _("Price date"), _("Source"),
            _("Basis")]


def breakdown_rows(line: dict) -> list[list]:
    """[item, quantity, unit, unit price, months, amount, date, source, basis] per breakdown item of a line."""
    from planner.presentation import _unit_text, source_label

    out = []
    for b in line.get("breakdown") or []:
        share = _dec(b.get("share")) if b.get("share") else None
        amount = _dec(b.get("amount"))
        if amount is not None and share is not None:
            amount = amount * share
        months = b.get("months") if b.get("per") == "month" else None
        out.append([str(b.get("item") or ""), _dec(b.get("quantity")), _unit_text(b.get("quantity_unit")),
                    _dec(b.get("unit_price")), _dec(months), amount, b.get("date") or "",
                    source_label(b.get("source")) or (_("rate card") if b.get("rate") else ""),
                    _(b["basis"]) if b.get("basis") else ""])
    return out


def costs_csv(result: dict, *, meta: ExportMeta | None = None) -> bytes:
    """UTF-8 with BOM (Excel opens it as UTF-8), in the active language's convention."""
    meta = meta or ExportMeta()
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=";" if _russian() else ",")
    for label, value in header_block(result, meta):
        w.writerow([label, value])
    w.writerow([])
    w.writerow(csv_columns())
    cur = result.get("currency", "")
    for rank, o in enumerate(decision_order(result, meta.meets), start=1):
        head = [rank, option_label(o), str(KIND_LABELS.get(o.get("kind"), o.get("kind"))), _meets_text(o, meta.meets)]
        budget, risk = _budget_and_risk_rows(o)
        for row in budget + risk:
            if row in risk:  # under the total: the expected cost of incidents is not in it
                totals = o.get("totals") or {}
                w.writerow([*head, _("Total"), "", "", "", "", _number(totals.get("net")),
                            _number(totals.get("vat")), _number(totals.get("gross")), cur])
            row_label = str(RISK_ROW_LABEL) if row in risk else str(ROW_LABELS.get(row.get("row"), row.get("row")))
            if row.get("lines") is None:  # an option priced in totals only (not the cheapest of its kind)
                w.writerow([*head, row_label, "", "", "", "", _number(row.get("total_net")), "",
                            _number(row.get("total_gross")), cur])
                continue
            for ln in row["lines"]:
                label = line_label(ln.get("key", ""))
                w.writerow([*head, row_label, label, _number(ln.get("upfront_net")),
                            _number(ln.get("monthly_net")), _number(ln.get("terminal_net")),
                            _number(ln.get("total_net")), _number(ln.get("vat")), _number(ln.get("total_gross")), cur])
                for item, qty, unit, price, months, amount, date, source, basis in breakdown_rows(ln):
                    w.writerow([*head, row_label, label, "", "", "", "", "", "", cur, item, _number(qty, None),
                                unit, _number(price, None), _number(months, None), _number(amount), date, source,
                                basis])
        if not risk:
            totals = o.get("totals") or {}
            w.writerow([*head, _("Total"), "", "", "", "", _number(totals.get("net")), _number(totals.get("vat")),
                        _number(totals.get("gross")), cur])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


RISK_ROW_LABEL = gettext_lazy("Expected cost of incidents: not in the total")


def _budget_and_risk_rows(option: dict) -> tuple[list[dict], list[dict]]:
    """The rows of the total and, apart, the risk row (the expected cost of incidents) that a
    result since issue 20 lists beside its total; an older result counted it in, so it stays."""
    rows = list(option.get("rows") or [])
    if not isinstance(option.get("risk"), dict):
        return rows, []
    return [r for r in rows if r.get("in_total", True)], [r for r in rows if not r.get("in_total", True)]


# --- XLSX ------------------------------------------------------------------------------------


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
        cell = ws.cell(row=start_row, column=j, value=name)
        cell.font = BOLD
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    fmt = _money_format(currency)
    for i, values in enumerate(rows, start=start_row + 1):
        for j, value in enumerate(values, start=1):
            cell = ws.cell(row=i, column=j, value=float(value) if isinstance(value, Decimal) else value)
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
    base = _shorten("".join(ch for ch in text if ch not in "[]:*?/\\"), SHEET_NAME_MAX) or "1"
    title, n = base, 2
    while title.lower() in used:
        suffix = f" ({n})"
        title = _shorten(base, SHEET_NAME_MAX - len(suffix)) + suffix
        n += 1
    used.add(title.lower())
    return title


def _sheet_kinds() -> dict[str, str]:
    return {"cloud_on_demand": _("On demand"), "cloud_spot": _("Spot"), "cloud_commit_1y": _("1-year commitment"),
            "cloud_commit_3y": _("3-year commitment"), "dedicated": _("Dedicated"), "onprem": _("Own servers"),
            "hybrid": _("Hybrid"), "api": _("API")}


def _option_sheet_name(rank: int, option: dict) -> str:
    """ "3. Spot · A100 PCIe 80GB": rank, a short kind and what runs, cut at a word."""
    kind = _sheet_kinds().get(option.get("kind"), option.get("kind") or "")
    d = option.get("detail") or {}
    what = d.get("accelerator") or d.get("model") or d.get("provider") or ""
    return _shorten(f"{rank}. {kind}" + (f" · {what}" if what else ""), SHEET_NAME_MAX)


def _summary_rows(ordered: list[dict], result: dict, meta: ExportMeta) -> list[list]:
    mc = (result.get("monte_carlo") or {}).get("options") or {}
    rows = []
    for rank, o in enumerate(ordered, start=1):
        totals, unit = o.get("totals") or {}, o.get("unit_costs") or {}
        q = mc.get(o.get("id")) or {}
        month = (o.get("per_month_average") or {}).get("gross" if result.get("include_vat") else "net")
        rows.append([
            rank, option_label(o), str(KIND_LABELS.get(o.get("kind"), o.get("kind"))), _meets_text(o, meta.meets),
            _dec(totals.get("net")), _dec(totals.get("vat")), _dec(totals.get("gross")), _dec(month),
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
        ])
    return rows


def _summary_headers() -> list[str]:
    return [_("Rank"), _("Option"), _("Kind"), _("Meets the targets"), _("Total, net"), _("VAT"),
            _("Total with VAT"), _("Per month (average)"), _("Per useful GPU-hour, net"), _("Per 1M tokens, net"),
            _("Per training run, net"), _("P10, net"), _("P50, net"), _("P90, net"),
            _("P10, with VAT"), _("P50, with VAT"), _("P90, with VAT"), _("Unknown inputs"),
            _("Expected cost of incidents, net (not in the total)"), _("Expected downtime, hours a year")]


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
        age = price.get("age_days")
        rows.append([_(price.get("kind") or "list price"), price.get("row", ""), "", "", "" if age is None else
                     _("%(days)s days old at the plan date") % {"days": age}, price.get("source") or "",
                     price.get("date") or _("undated")])
    if used.get("power_tariff"):
        p = used["power_tariff"]
        rows.append([_("electricity tariff"), _("electricity tariff"), _dec(p.get("amount")), p.get("currency") or "",
                     _("per kWh"), p.get("source") or "", p.get("valid_from") or p.get("as_of") or ""])
    return rows


def costs_xlsx(result: dict, *, title: str = "GPU Planner", meta: ExportMeta | None = None) -> bytes:
    from planner.presentation import line_inputs

    meta = meta or ExportMeta(plan=title)
    cur = result.get("currency", "")
    ordered = decision_order(result, meta.meets)
    wb = Workbook()
    ws = wb.active
    used: set[str] = set()
    ws.title = _sheet_title(_("Summary"), used)
    ws["A1"] = title
    ws["A1"].font = Font(bold=True, size=14)
    block = header_block(result, meta)
    for i, (label, value) in enumerate(block, start=2):
        ws.cell(row=i, column=1, value=label).font = BOLD
        ws.cell(row=i, column=2, value=value)
    start = len(block) + 3
    money = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19}
    _write_table(ws, _summary_headers(), _summary_rows(ordered, result, meta), start_row=start, money_cols=money,
                 currency=cur)
    _fit_widths(ws, first_row=start)
    ws.column_dimensions["B"].width = max(ws.column_dimensions["B"].width or 0, 60)

    by_rank = {o.get("id"): rank for rank, o in enumerate(ordered, start=1)}
    short = [i for ids in (result.get("shortlist") or {}).values() for i in ids]
    short = sorted(dict.fromkeys(short), key=lambda i: by_rank.get(i, 10**9))[:MAX_OPTION_SHEETS]
    by_id = {o.get("id"): o for o in ordered}
    line_headers = [_("Row"), _("Line"), _("Upfront, net"), _("Per month, net"), _("At the end, net"),
                    _("Total, net"), _("VAT"), _("Total with VAT"), _("Inputs (value, unit, source)")]
    for oid in short:
        o = by_id.get(oid)
        if o is None:
            continue
        sheet = wb.create_sheet(_sheet_title(_option_sheet_name(by_rank[oid], o), used))
        sheet["A1"] = option_label(o)
        sheet["A1"].font = BOLD
        sheet["A2"] = _("Utilisation %(u)s, efficiency %(e)s; rank %(rank)s of %(n)s") % {
            "u": _number(o.get("utilisation"), None), "e": _number(o.get("efficiency"), None),
            "rank": by_rank[oid], "n": len(ordered)}
        budget, risk = _budget_and_risk_rows(o)

        def line_rows(rows_of, label=None):
            out = []
            for row in rows_of:
                for ln in row.get("lines") or []:
                    inputs = "; ".join(
                        f"{r['name']} = {r['value']} {r['unit']}".strip() + (f" [{r['source']}]" if r.get("source") else "")
                        for r in line_inputs(ln.get("inputs") or {}))
                    out.append([label or str(ROW_LABELS.get(row.get("row"), row.get("row"))),
                                line_label(ln.get("key", "")),
                                _dec(ln.get("upfront_net")), _dec(ln.get("monthly_net")), _dec(ln.get("terminal_net")),
                                _dec(ln.get("total_net")), _dec(ln.get("vat")), _dec(ln.get("total_gross")), inputs])
            return out

        rows = line_rows(budget)
        totals = o.get("totals") or {}
        rows.append([_("Total"), "", None, None, None, _dec(totals.get("net")), _dec(totals.get("vat")),
                     _dec(totals.get("gross")), ""])
        total_row = len(rows)
        rows += line_rows(risk, str(RISK_ROW_LABEL))  # under the total, not in it
        _write_table(sheet, line_headers, rows, start_row=4, money_cols={3, 4, 5, 6, 7, 8}, currency=cur)
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
    cf_ids = [i for i in short if i in by_id]
    headers = [_("Month")] + [f"{by_rank[i]}. {option_label(by_id[i])}" for i in cf_ids]
    cf_rows = []
    for m in range(months + 1):
        cf_rows.append([m] + [_dec(((by_id[i].get("cash_flow") or {}).get("net") or [None] * (months + 1))[m])
                              if m < len((by_id[i].get("cash_flow") or {}).get("net") or []) else None
                              for i in cf_ids])
    cf["A1"] = _("Cash flow per month, net of VAT, in %(currency)s") % {"currency": cur}
    cf["A1"].font = BOLD
    _write_table(cf, headers, cf_rows, start_row=3, money_cols=set(range(2, len(headers) + 1)), currency=cur)
    _fit_widths(cf, first_row=3, maximum=40)

    inp = wb.create_sheet(_sheet_title(_("Inputs"), used))
    _write_table(inp, [_("Kind"), _("Name"), _("Value"), _("Currency"), _("Unit"), _("Source"), _("Date")],
                 inputs_rows(result), start_row=1, money_cols=set(), currency=cur)
    _fit_widths(inp, maximum=90)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()
