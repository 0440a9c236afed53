"""CSV and XLSX exports of a cost result (the JSON of costs.engine / a stored plan version).

XLSX: a summary sheet (every option), a sheet per shortlisted option (its four rows and the
inputs of each line), a cash-flow sheet and an inputs sheet listing every rate with its source
and date. Numbers are stored as numbers with a currency number format, never as text.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from costs.tables import breakdown_frame, cash_flow_frame, inputs_frame, option_frame, summary_frame

KIND_SHORT = {
    "cloud_on_demand": "OD",
    "cloud_spot": "Spot",
    "cloud_commit_1y": "1y",
    "cloud_commit_3y": "3y",
    "dedicated": "Ded",
    "onprem": "OnPrem",
    "hybrid": "Hybrid",
    "api": "API",
}
MAX_OPTION_SHEETS = 30  # Excel handles more, people do not; every option is on the summary sheet
CSV_COLUMNS = [
    "option",
    "candidate",
    "kind",
    "label",
    "row",
    "line",
    "line_label",
    "upfront_net",
    "monthly_net",
    "terminal_net",
    "total_net",
    "vat",
    "total_gross",
    "currency",
    # per-line breakdown rows (row "item"): quantity x unit price x months = amount, with the price's
    # source and date (the Infracost convention)
    "quantity",
    "quantity_unit",
    "unit_price",
    "months",
    "amount",
    "price",
    "basis",
    "date",
    "source",
]


def costs_csv(result: dict) -> bytes:
    """One line per cost line of every shortlisted option (per row for the others), plus a TOTAL
    line per option (UTF-8 with BOM for Excel)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    cur = result["currency"]
    for o in result["options"]:
        head = [o["id"], o["candidate"], o["kind"], o["label"]]
        for row in o["rows"]:
            if row["lines"] is None:  # an option priced in totals only (not the cheapest of its kind)
                w.writerow(
                    [*head, row["row"], "", "", "", "", "", row["total_net"], "", row["total_gross"], cur, *[""] * 9]
                )
                continue
            for ln in row["lines"]:
                w.writerow(
                    [
                        *head,
                        row["row"],
                        ln["key"],
                        ln["label"],
                        ln["upfront_net"],
                        ln["monthly_net"],
                        ln["terminal_net"],
                        ln["total_net"],
                        ln["vat"],
                        ln["total_gross"],
                        cur,
                        *[""] * 9,
                    ]
                )
                for b in ln.get("breakdown") or []:
                    months = b["months"] if b["per"] == "month" else b["per"]
                    w.writerow(
                        [
                            *head,
                            "item",
                            ln["key"],
                            b["item"] + (f" (x share {b['share']})" if b.get("share") else ""),
                            *[""] * 6,
                            cur,
                            b["quantity"],
                            b["quantity_unit"],
                            b["unit_price"],
                            months,
                            b["amount"],
                            b.get("price", ""),
                            b.get("basis", ""),
                            b.get("date") or "",
                            b.get("source") or (f"rate card: {b['rate']}" if b.get("rate") else ""),
                        ]
                    )
        w.writerow(
            [
                *head,
                "TOTAL",
                "",
                "",
                "",
                "",
                "",
                o["totals"]["net"],
                o["totals"]["vat"],
                o["totals"]["gross"],
                cur,
                *[""] * 9,
            ]
        )
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def _money_format(currency: str) -> str:
    return f'#,##0.00 "{currency}"'


def _write_frame(ws, frame, *, money_cols: set[str], currency: str, start_row: int = 1) -> None:
    cols = list(frame.columns)
    for j, name in enumerate(cols, start=1):
        ws.cell(row=start_row, column=j, value=name).font = Font(bold=True)
    fmt = _money_format(currency)
    for i, rec in enumerate(frame.itertuples(index=False), start=start_row + 1):
        for j, (name, value) in enumerate(zip(cols, rec, strict=True), start=1):
            cell = ws.cell(row=i, column=j, value=value)
            if name in money_cols and value is not None:
                cell.number_format = fmt
    for j, name in enumerate(cols, start=1):
        ws.column_dimensions[get_column_letter(j)].width = max(12, min(60, len(name) + 4))
    ws.freeze_panes = ws.cell(row=start_row + 1, column=1)


def _sheet_title(text: str, used: set[str]) -> str:
    base = "".join(ch for ch in text if ch not in "[]:*?/\\")[:28] or "option"
    title, n = base, 2
    while title.lower() in used:
        title = f"{base[:26]}~{n}"
        n += 1
    used.add(title.lower())
    return title


def costs_xlsx(result: dict, *, title: str = "GPU Planner costs") -> bytes:
    cur = result["currency"]
    wb = Workbook()
    ws = wb.active
    ws.title = "Summary"
    ws["A1"] = title
    ws["A1"].font = Font(bold=True, size=14)
    ws["A2"] = (
        f"{result['horizon_months']} months, {cur}, as of {result['as_of']}, VAT country {result['country']}; "
        f"engine {result['engine_version']}"
    )
    money = {
        "total_net",
        "vat",
        "total_gross",
        "per_useful_gpu_hour_net",
        "per_1m_tokens_net",
        "per_training_run_net",
        "p10_net",
        "p50_net",
        "p90_net",
        "upfront_net",
        "monthly_net",
        "terminal_net",
    }
    _write_frame(ws, summary_frame(result), money_cols=money, currency=cur, start_row=4)
    used = {"summary", "cash flow", "inputs"}
    by_id = {o["id"]: o for o in result["options"]}
    short = [i for ids in result["shortlist"].values() for i in ids][:MAX_OPTION_SHEETS]
    for i in short:
        o = by_id[i]
        short_cand = o["candidate"].removeprefix("nvidia-").removeprefix("amd-").removeprefix("intel-")
        sheet = wb.create_sheet(_sheet_title(f"{KIND_SHORT.get(o['kind'], o['kind'])} {short_cand}", used))
        sheet["A1"] = o["label"]
        sheet["A1"].font = Font(bold=True)
        sheet["A2"] = f"utilisation {o['utilisation']}, efficiency {o['efficiency']}; option id {o['id']}"
        _write_frame(sheet, option_frame(o), money_cols=money, currency=cur, start_row=4)
        end = sheet.max_row + 1
        sheet.cell(row=end, column=1, value="TOTAL").font = Font(bold=True)
        for col, key in ((7, "net"), (8, "vat"), (9, "gross")):
            c = sheet.cell(row=end, column=col, value=Decimal(o["totals"][key]))
            c.number_format = _money_format(cur)
            c.font = Font(bold=True)
        frame = breakdown_frame(o)
        if len(frame):
            start = sheet.max_row + 3
            sheet.cell(row=start - 1, column=1, value="Breakdown: quantity x unit price x months = amount").font = Font(
                bold=True
            )
            _write_frame(sheet, frame, money_cols={"unit_price", "amount"}, currency=cur, start_row=start)
            sheet.freeze_panes = "A5"
    cf = wb.create_sheet("Cash flow")
    frame = cash_flow_frame(result, short)
    _write_frame(cf, frame, money_cols=set(short), currency=cur)
    inp = wb.create_sheet("Inputs")
    _write_frame(inp, inputs_frame(result), money_cols=set(), currency=cur)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()
