"""Supplier quotes: create, upload a quote table, list (team-scoped). Validation is SupplierQuoteForm's.

Upload format (CSV, UTF-8, header row; or the first sheet of an .xlsx with the same header):
supplier, item_kind (server | accelerator), accelerator (catalog id), gpus_per_server, description,
quantity, unit_price, currency (RUB | USD | EUR), includes_vat (true | false), quote_date (YYYY-MM-DD),
valid_until (YYYY-MM-DD), document_name, notes. Every row is validated first; one bad cell and
nothing is saved, and each error names the file, line and column.
"""

from __future__ import annotations

import csv
import io
from zipfile import BadZipFile

from django.db import transaction
from django.utils.translation import gettext as _

from catalog.forms import SupplierQuoteForm
from catalog.models import SupplierQuote

COLUMNS = list(SupplierQuoteForm.Meta.fields)
REQUIRED_COLUMNS = ["supplier", "item_kind", "accelerator", "unit_price", "currency", "includes_vat",
                    "quote_date", "valid_until"]
MAX_ROWS = 5000
TRUE, FALSE = {"true", "yes", "1", "да"}, {"false", "no", "0", "нет"}  # empty is an error: VAT must be stated


class QuoteUploadError(Exception):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def quotes_for_team(*, team_id: int):
    return SupplierQuote.objects.filter(team_id=team_id).select_related("accelerator").order_by("-quote_date", "pk")


def quote_create(*, team, data: dict, user) -> tuple[SupplierQuote | None, dict]:
    """Returns (quote, {}) or (None, {field: [messages]}). `includes_vat` must be given (a VAT-inclusive
    price read as net would be taxed twice)."""
    if not isinstance(data.get("includes_vat"), bool):
        return None, {"includes_vat": [str(_("Say whether the price includes VAT: true or false."))]}
    form = SupplierQuoteForm(data=data)
    if not form.is_valid():
        return None, {k: [str(m) for m in v] for k, v in form.errors.items()}
    quote = form.save(commit=False)
    quote.team, quote.created_by = team, user
    quote.save()
    return quote, {}


def _rows_csv(data: bytes, label: str) -> tuple[list[str], list[tuple[int, dict]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QuoteUploadError([f"{label}: the file is not UTF-8; save it as UTF-8"]) from None
    if not text.strip():
        raise QuoteUploadError([f"{label}: the file is empty (expected a header row)"])
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
        rows = []
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                if len(cells) != len(header):
                    raise QuoteUploadError([f"{label}, line {reader.line_num}: {len(cells)} fields, the header has "
                                            f"{len(header)}"])
                rows.append((reader.line_num, dict(zip(header, (c.strip() for c in cells), strict=True))))
    except csv.Error as exc:
        raise QuoteUploadError([f"{label}, line {reader.line_num}: malformed CSV ({exc})"]) from None
    return header, rows


def _rows_xlsx(data: bytes, label: str) -> tuple[list[str], list[tuple[int, dict]]]:
    from openpyxl import load_workbook

    try:
        ws = load_workbook(io.BytesIO(data), read_only=True, data_only=True).worksheets[0]
    except (BadZipFile, OSError, KeyError, ValueError, IndexError):
        raise QuoteUploadError([f"{label}: not a readable .xlsx workbook"]) from None

    def cell(v) -> str:
        if v is None:
            return ""
        if hasattr(v, "date") and callable(v.date):
            return v.date().isoformat()
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v).strip()

    it = ws.iter_rows(values_only=True)
    header = [cell(h) for h in next(it, ())]
    rows = []
    for i, values in enumerate(it, start=2):
        cells = [cell(v) for v in values]
        if any(cells):
            rows.append((i, dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=False))))
    return header, rows


def quotes_upload(*, team, filename: str, data: bytes, user) -> list[SupplierQuote]:
    label = filename or "upload"
    header, rows = (_rows_xlsx if label.lower().endswith(".xlsx") else _rows_csv)(data, label)
    word = "row" if label.lower().endswith(".xlsx") else "line"
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c and c not in COLUMNS]
    errors = []
    if missing:
        errors.append(f"{label}: missing column(s) {', '.join(missing)}")
    if unknown:
        errors.append(f"{label}: unknown column(s) {', '.join(unknown)} (expected {', '.join(COLUMNS)})")
    if not rows and not errors:
        errors.append(f"{label}: no quotes in the file")
    if len(rows) > MAX_ROWS:
        errors.append(f"{label}: more than {MAX_ROWS} rows")
    if errors:
        raise QuoteUploadError(errors)
    forms = []
    for line, row in rows:
        vat = row.get("includes_vat", "").lower()
        if vat not in TRUE | FALSE:
            errors.append(f"{label}, {word} {line}, column includes_vat: {row['includes_vat']!r} is not true or false")
            continue
        data_row = {**row, "includes_vat": vat in TRUE}
        form = SupplierQuoteForm(data=data_row)
        if not form.is_valid():
            for field, messages in form.errors.items():
                column = f", column {field}" if field != "__all__" else ""
                errors += [f"{label}, {word} {line}{column}: {m}" for m in messages]
            continue
        forms.append(form)
    if errors:
        raise QuoteUploadError(errors)
    created = []
    with transaction.atomic():
        for form in forms:
            q = form.save(commit=False)
            q.team, q.created_by = team, user
            q.save()
            created.append(q)
    return created


def quote_data(q: SupplierQuote) -> dict:
    return {
        "id": q.pk, "team": q.team_id, "supplier": q.supplier, "item_kind": q.item_kind,
        "accelerator": q.accelerator.slug, "gpus_per_server": q.gpus_per_server, "description": q.description,
        "quantity": q.quantity, "unit_price": {"amount": format(q.unit_price.normalize(), "f"), "currency": q.currency},
        "includes_vat": q.includes_vat, "quote_date": q.quote_date.isoformat(),
        "valid_until": q.valid_until.isoformat(), "document_name": q.document_name, "notes": q.notes,
    }
