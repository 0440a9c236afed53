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
from django.utils.translation import gettext_lazy, pgettext_lazy

from costs.labels import KIND_LABELS, ROW_LABELS, line_label, option_label

from .order import (  # noqa: F401 (re-exported: the exports' numbering)
    COMPARED_MAX,
    OWNED_KINDS,
    _total,
    compared_count,
    compared_options,
    decision_order,
    export_order,
)

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
    rows.append((_("Order"), _("the decided option, then the cheapest of each other way of paying (as in the PDF), "
                               "then the other options: those that meet the targets first, then the cheapest")))
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
    from planner.presentation import source_label

    out = []
    for b in line.get("breakdown") or []:
        share = _dec(b.get("share")) if b.get("share") else None
        amount = _dec(b.get("amount"))
        if amount is not None and share is not None:
            amount = amount * share
        months = b.get("months") if b.get("per") == "month" else None
        out.append([str(b.get("item") or ""), _dec(b.get("quantity")), _unit(b.get("quantity_unit")),
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
    for rank, o in enumerate(export_order(result, meta.meets), start=1):
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


# Units of breakdown quantities that the page's unit table does not translate.
UNIT_NAMES = {"servers": gettext_lazy("servers"), "kW": pgettext_lazy("unit symbol", "kW")}


def _unit(unit) -> str:
    from planner.presentation import _unit_text

    return str(UNIT_NAMES[unit]) if isinstance(unit, str) and unit in UNIT_NAMES else _unit_text(unit)
