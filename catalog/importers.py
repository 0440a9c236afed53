"""Reading and writing catalog files (the edge: CSV and XLSX <-> plain rows of strings).

A directory holds `<table>.csv` files; an .xlsx workbook holds one sheet per table named like
the table. Cells are read as text and converted by catalog.tables, so both formats behave alike.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zipfile import BadZipFile

from catalog.tables import ITEM_MODELS, TABLES, TABLES_BY_NAME, Table


class CatalogFileError(Exception):
    """A catalog file or workbook that cannot be read at all. `errors` lists messages."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class RawTable:
    table: Table
    label: str  # "accelerators.csv" or "catalog.xlsx, sheet accelerators"
    line_word: str  # "line" for CSV, "row" for XLSX
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line or row number, cells)


def read_catalog(path: Path) -> list[RawTable]:
    """Read every catalog table found at `path` (a directory of CSV files or an .xlsx workbook)."""
    path = Path(path)
    if path.is_dir():
        tables = [read_csv(path / f"{t.name}.csv", t) for t in TABLES if (path / f"{t.name}.csv").exists()]
        if not tables:
            expected = ", ".join(f"{t.name}.csv" for t in TABLES)
            raise CatalogFileError([f"{path}: no catalog files found (expected any of {expected})"])
        return tables
    if path.suffix.lower() == ".xlsx" and path.is_file():
        return read_xlsx(path)
    if path.suffix.lower() == ".csv" and path.is_file():
        table = TABLES_BY_NAME.get(path.stem)
        if table is None:
            raise CatalogFileError([f"{path.name}: unknown catalog file (expected one of {', '.join(TABLES_BY_NAME)})"])
        return [read_csv(path, table)]
    raise CatalogFileError([f"{path}: not a directory, .csv or .xlsx file"])


def read_csv(path: Path, table: Table) -> RawTable:
    label = path.name
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CatalogFileError(
            [f"{label}, line {line}: the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
             "save it as UTF-8"]
        ) from None
    if not text.strip():
        raise CatalogFileError([f"{label}: the file is empty (expected a header row)"])
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        header = [h.strip() for h in next(reader)]
        start = reader.line_num + 1
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                rows.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise CatalogFileError([f"{label}, line {reader.line_num}: malformed CSV ({exc})"]) from None
    return RawTable(table, label, "line", header, rows)


def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_xlsx(path: Path) -> list[RawTable]:
    from openpyxl import load_workbook  # only needed at this edge
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, BadZipFile, OSError, KeyError, ValueError) as exc:
        raise CatalogFileError([f"{path.name}: not a readable .xlsx workbook ({exc})"]) from None
    errors, tables = [], []
    try:
        for sheet in workbook.worksheets:
            table = TABLES_BY_NAME.get(sheet.title)
            if table is None:
                errors.append(f"{path.name}: unknown sheet {sheet.title!r} (expected {', '.join(TABLES_BY_NAME)})")
                continue
            label = f"{path.name}, sheet {sheet.title}"
            values = list(sheet.iter_rows(values_only=True))
            if not values or not any(_cell_text(v).strip() for v in values[0]):
                errors.append(f"{label}: the sheet is empty (expected a header row)")
                continue
            header = [_cell_text(v).strip() for v in values[0]]
            while header and header[-1] == "":
                header.pop()  # trailing empty cells of a styled sheet
            rows = []
            for number, row in enumerate(values[1:], start=2):
                cells = [_cell_text(v) for v in row]
                if len(cells) > len(header) and not any(c.strip() for c in cells[len(header):]):
                    cells = cells[: len(header)]  # unused styled cells right of the table
                if any(c.strip() for c in cells):
                    rows.append((number, cells))
            tables.append(RawTable(table, label, "row", header, rows))
    finally:
        workbook.close()
    if errors:
        raise CatalogFileError(errors)
    if not tables:
        raise CatalogFileError([f"{path.name}: no catalog sheets found"])
    order = {t.name: i for i, t in enumerate(TABLES)}
    return sorted(tables, key=lambda raw: order[raw.table.name])


# ---- export -----------------------------------------------------------------------------------


def table_rows(table: Table) -> list[list[str]]:
    """The rows of one table as text cells, in the file's column order, sorted by natural key."""
    rows = []
    queryset = table.model.objects.all().order_by(*[k for k in table.key if k not in ITEM_FIELDS], "pk")
    for obj in queryset.select_related(*_fk_fields(table)):
        cells = []
        for col in table.columns:
            if col.name == "item_kind":
                value = next(kind for kind, (fld, _m) in ITEM_MODELS.items() if getattr(obj, f"{fld}_id"))
            elif col.name == "item":
                value = obj.item.slug
            elif col.kind == "fk":
                related = getattr(obj, col.model_field)
                value = related.slug if related else None
            else:
                value = getattr(obj, col.model_field)
            cells.append(col.format(value))
        rows.append(cells)
    return rows


ITEM_FIELDS = {"accelerator", "server_platform", "cpu"}


def _fk_fields(table: Table) -> list[str]:
    if table.name == "hardware_prices":
        return sorted(ITEM_FIELDS)
    return [c.model_field for c in table.columns if c.kind == "fk"]


def export_csv(directory: Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table in TABLES:
        target = directory / f"{table.name}.csv"
        with target.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([c.name for c in table.columns])
            writer.writerows(table_rows(table))
        written.append(target)
    return written


def export_xlsx(target: Path) -> Path:
    from openpyxl import Workbook

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    workbook = Workbook()
    workbook.remove(workbook.active)
    for table in TABLES:
        sheet = workbook.create_sheet(table.name)
        sheet.append([c.name for c in table.columns])
        for cells in table_rows(table):
            sheet.append(cells)  # all text: numbers keep their exact decimal digits
    workbook.save(target)
    return target
