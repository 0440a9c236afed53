"""The options comparison (planner.options_compare) as files: an XLSX workbook (the table, the
cumulative cost month by month, the break-even in words) and a PDF of the page.
"""

from __future__ import annotations

from decimal import Decimal

from django.utils import timezone
from django.utils.translation import gettext as _

from costs.cash_flow import cumulative as cumulative_cost

from .options_compare import sentences


def export_filename(plan_name: str, number: int, fmt: str) -> str:
    """"агент-на-api-сравнение-вариантов-v1.xlsx": the plan's title, then what the file is."""
    from .downloads import export_filename as plan_filename

    return plan_filename(f"{plan_name} {_('options compared')}", number, fmt)


def _rows(table: dict) -> list[tuple[str, str, list]]:
    """(label, kind, values per option): the table of the page, kind "money"/"count"/"text"."""
    basis = table["basis_label"]
    o = table["options"]
    rows = [
        (_("Option"), "text", [x["short"] for x in o]),
        (_("Full description"), "text", [x["label"] for x in o]),
        (_("Kind"), "text", [str(x["kind_label"]) for x in o]),
        (_("CAPEX (upfront), %(basis)s") % {"basis": basis}, "money", [x["split"]["capex"].get(table["basis"]) for x in o]),
        (_("OPEX, average per month, %(basis)s") % {"basis": basis}, "money",
         [x["split"]["opex_month"].get(table["basis"]) for x in o]),
        (_("OPEX over the horizon, %(basis)s") % {"basis": basis}, "money",
         [x["split"]["opex_total"].get(table["basis"]) for x in o]),
        (_("Residual value at the end (resale), %(basis)s") % {"basis": basis}, "money",
         [x["split"]["residual"].get(table["basis"]) for x in o]),
        (_("Total, net of VAT"), "money", [x["net"] for x in o]),
        (_("VAT"), "money", [x["vat"] for x in o]),
        (_("Total, with VAT"), "money", [x["gross"] for x in o]),
        (_("P50 of the total, %(basis)s") % {"basis": basis}, "money", [x["p50"] for x in o]),
        (_("GPUs"), "count", [x["hw"]["gpus"] for x in o]),
        (_("Servers or cloud instances"), "count", [x["hw"]["servers"] for x in o]),
        (_("Power, kW"), "number", [x["hw"]["power_kw"] for x in o]),
        (_("Time to first token p95, ms"), "number", [x["hw"]["ttft_p95_ms"] for x in o]),
        (_("Time per output token p95, ms"), "number", [x["hw"]["tpot_p95_ms"] for x in o]),
        (_("Run time, hours"), "number", [x["hw"]["run_hours"] for x in o]),
    ]
    return [r for r in rows if any(v not in (None, "") for v in r[2])]


def xlsx(table: dict, *, plan_name: str, version_number: int) -> bytes:
    """The comparison as a workbook: the table (amounts with kopecks/cents as numbers with the
    currency format), the cumulative cost month by month (net and gross), the break-even in words."""
    import io

    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    from costs.exports_xlsx import _fit_widths, _money_format, xlsx_value

    money_format = _money_format(table["currency"])
    wb = Workbook()
    ws = wb.active
    ws.title = _("Comparison")[:31]
    head = [
        (_("Plan"), plan_name), (_("Version"), version_number),
        (_("Exported on"), timezone.localdate().isoformat()), (_("Prices as of"), table["as_of"] or ""),
        (_("Horizon, months"), table["horizon_months"]), (_("Currency"), table["currency"]),
        (_("Basis of CAPEX, OPEX, P50 and the chart"), str(table["basis_label"])),
    ]
    for label, value in head:
        ws.append([xlsx_value(label), xlsx_value(value)])
        ws.cell(ws.max_row, 1).font = Font(bold=True)
    ws.append([])
    ws.append([_("Break-even")] + [xlsx_value(x) for x in sentences(table)])
    ws.cell(ws.max_row, 1).font = Font(bold=True)
    ws.append([])
    ws.append([""] + [f"{x['n']}" for x in table["options"]])
    for label, kind, values in _rows(table):
        ws.append([label] + [float(v) if isinstance(v, Decimal) else xlsx_value(v) for v in values])
        ws.cell(ws.max_row, 1).font = Font(bold=True)
        for col in range(2, 2 + len(values)):
            cell = ws.cell(ws.max_row, col)
            if kind == "money":
                cell.number_format = money_format
            elif kind == "number":
                cell.number_format = "#,##0.0"
            cell.alignment = Alignment(wrap_text=kind == "text", vertical="top")
    _fit_widths(ws, maximum=60)

    flow = wb.create_sheet(_("Cumulative cost")[:31])
    options = table["options"]
    flow.append([_("Month")] + [xlsx_value(f"{x['n']}. {x['short']}, {_('net of VAT')}") for x in options]
                + [xlsx_value(f"{x['n']}. {x['short']}, {_('with VAT')}") for x in options])
    series = {}
    for x in options:
        series[x["id"]] = (cumulative_cost(x, "net"), cumulative_cost(x, "gross"))
    months = max((len(n) for n, _g in series.values()), default=0)
    for m in range(months):
        row = [m]
        for x in options:
            net = series[x["id"]][0]
            row.append(float(net[m]) if m < len(net) and net[m] is not None else None)
        for x in options:
            gross = series[x["id"]][1]
            row.append(float(gross[m]) if m < len(gross) and gross[m] is not None else None)
        flow.append(row)
        for col in range(2, len(row) + 1):
            flow.cell(flow.max_row, col).number_format = money_format
    for cell in flow[1]:
        cell.font = Font(bold=True)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    _fit_widths(flow, first_row=2, minimum=14, maximum=24)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def render_pdf(table: dict, *, plan, version, request=None) -> bytes:
    from django.template.loader import render_to_string
    from weasyprint import HTML

    html = render_to_string("planner/options_compare_pdf.html", {
        "plan": plan, "version": version, "table": table, "sentences": sentences(table),
        "rows": _rows(table), "exported_on": timezone.localdate()}, request=request)
    return HTML(string=html).write_pdf()  # no base_url: the template loads nothing over the network


EXPORT_TYPES = {
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}


def export(table: dict, *, plan, version, fmt: str, request=None) -> tuple[bytes, str, str]:
    from django.http import Http404

    if fmt not in EXPORT_TYPES:
        raise Http404("unknown export format")
    filename = export_filename(plan.name, version.number, fmt)
    if fmt == "pdf":
        content = render_pdf(table, plan=plan, version=version, request=request)
    else:
        content = xlsx(table, plan_name=plan.name, version_number=version.number)
    return content, EXPORT_TYPES[fmt], filename
