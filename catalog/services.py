"""Writes to the catalog: the import (all files or nothing) and the background import run."""

from __future__ import annotations

import logging
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from catalog.choices import ImportStatus
from catalog.importers import CatalogFileError, RawTable, _fk_fields, read_catalog
from catalog.models import CatalogImportRun
from catalog.tables import ITEM_MODELS, Table

logger = logging.getLogger(__name__)
MAX_REPORTED_ERRORS = 50


class CatalogImportError(Exception):
    """The import was refused; nothing was written. `errors` lists 'file, line N, column C: reason'."""

    def __init__(self, errors: list[str]):
        shown = errors[:MAX_REPORTED_ERRORS]
        if len(errors) > MAX_REPORTED_ERRORS:
            shown.append(f"... and {len(errors) - MAX_REPORTED_ERRORS} more errors")
        super().__init__("\n".join(shown))
        self.errors = shown


def catalog_import(*, path: Path) -> dict[str, dict[str, int]]:
    """Load the catalog files at `path` atomically and idempotently (upsert by natural key).

    Tables load in dependency order inside one transaction; the first table with errors stops
    the import and rolls everything back. Rows already in the database but absent from the files
    are kept (an operator may have added them in the admin).
    Returns {table: {"created": n, "updated": n, "unchanged": n}}.
    """
    try:
        raw_tables = read_catalog(Path(path))
    except CatalogFileError as exc:
        raise CatalogImportError(exc.errors) from None
    counts: dict[str, dict[str, int]] = {}
    with transaction.atomic():
        for raw in raw_tables:
            counts[raw.table.name] = _import_table(raw)
    return counts


def _where(raw: RawTable, line: int, column: str | None = None) -> str:
    text = f"{raw.label}, {raw.line_word} {line}"
    return f"{text}, column {column}" if column else text


def _check_header(raw: RawTable) -> list[str]:
    table, errors = raw.table, []
    known = table.by_name
    seen: set[str] = set()
    for position, name in enumerate(raw.header, start=1):
        if name == "":
            errors.append(f"{raw.label}: column {position} has no name in the header")
        elif name in seen:
            errors.append(f"{raw.label}: column {name!r} appears twice in the header")
        elif name not in known:
            errors.append(f"{raw.label}: unknown column {name!r} (allowed: {', '.join(known)})")
        seen.add(name)
    for col in table.columns:
        if col.required and col.name not in seen:
            errors.append(f"{raw.label}: required column {col.name!r} is missing")
    return errors


def _import_table(raw: RawTable) -> dict[str, int]:
    table = raw.table
    errors = _check_header(raw)
    if errors:
        raise CatalogImportError(errors)

    slugs = _slug_maps(table)
    existing = {_key(table, obj): obj for obj in table.model.objects.select_related(*_fk_fields(table))}
    seen_keys: dict[tuple, int] = {}
    pending = []
    for line, cells in raw.rows:
        if len(cells) != len(raw.header):
            errors.append(f"{_where(raw, line)}: expected {len(raw.header)} fields, found {len(cells)}")
            continue
        values, row_errors = _parse_row(raw, line, dict(zip(raw.header, cells, strict=True)), slugs)
        if row_errors:
            errors.extend(row_errors)
            continue
        key = tuple(values.get(k) for k in table.key)
        if key in seen_keys:
            errors.append(f"{_where(raw, line)}: duplicate key {_key_text(table, values)} (first on line {seen_keys[key]})")
            continue
        seen_keys[key] = line
        obj = existing.get(key) or table.model()
        changed = obj.pk is None or any(getattr(obj, f) != v for f, v in values.items())
        for field_name, value in values.items():
            setattr(obj, field_name, value)
        try:
            # Uniqueness is the natural key (checked above); check constraints need no query.
            obj.full_clean(validate_unique=False, validate_constraints=False)
            _check_constraints(obj)
        except ValidationError as exc:
            errors.extend(_validation_messages(raw, line, table, exc))
            continue
        pending.append((obj, changed))
    if errors:
        raise CatalogImportError(errors)

    counts = {"created": 0, "updated": 0, "unchanged": 0}
    for obj, changed in pending:
        if not changed:
            counts["unchanged"] += 1
            continue
        counts["created" if obj.pk is None else "updated"] += 1
        obj.save()
    logger.info("catalog import %s: %s", raw.label, counts)
    return counts


def _check_constraints(obj) -> None:
    errors = []
    for constraint in obj._meta.constraints:
        if isinstance(constraint, models.CheckConstraint):
            try:
                constraint.validate(type(obj), obj)
            except ValidationError as exc:
                errors.extend(exc.messages)
    if errors:
        raise ValidationError(errors)


def _slug_maps(table: Table) -> dict[str, dict[str, object]]:
    """slug -> row for each model this table refers to (one query per model)."""
    models = {c.model_field: c.fk for c in table.columns if c.kind == "fk"}
    if table.name == "hardware_prices":
        models = {fld: model for fld, model in ITEM_MODELS.values()}
    return {fld: {obj.slug: obj for obj in model.objects.all()} for fld, model in models.items()}


def _parse_row(raw: RawTable, line: int, cells: dict[str, str], slugs) -> tuple[dict, list[str]]:
    table, values, errors = raw.table, {}, []
    for col in table.columns:
        text = cells.get(col.name, "")
        try:
            value = col.parse(text)
        except ValueError as exc:
            reason = str(exc)
            if col.name == "currency" and "required" in reason:
                reason = "a price needs its currency (RUB, USD or EUR)"
            errors.append(f"{_where(raw, line, col.name)}: {reason}")
            continue
        if col.kind == "fk" and value is not None:
            target = slugs[col.model_field].get(value)
            if target is None:
                errors.append(f"{_where(raw, line, col.name)}: unknown {col.fk._meta.verbose_name} {value!r}")
                continue
            value = target
        values[col.model_field] = value
    if table.name == "hardware_prices" and not errors:
        fld, model = ITEM_MODELS[values.pop("item_kind")]
        slug = values.pop("item")
        target = slugs[fld].get(slug)
        if target is None:
            errors.append(f"{_where(raw, line, 'item')}: unknown {model._meta.verbose_name} {slug!r}")
        for name in ITEM_MODELS.values():
            values[name[0]] = None
        values[fld] = target
    return values, errors


def _key(table: Table, obj) -> tuple:
    return tuple(getattr(obj, k) for k in table.key)


def _key_text(table: Table, values: dict) -> str:
    parts = [str(getattr(values.get(k), "slug", values.get(k))) for k in table.key if values.get(k) is not None]
    return "(" + ", ".join(parts) + ")"


def _validation_messages(raw: RawTable, line: int, table: Table, exc: ValidationError) -> list[str]:
    columns = {c.model_field: c.name for c in table.columns}
    messages = []
    for field_name, field_errors in exc.message_dict.items():
        column = columns.get(field_name) if field_name != "__all__" else None
        for message in field_errors:
            messages.append(f"{_where(raw, line, column)}: {message}")
    return messages


# ---- background import ------------------------------------------------------------------------


def catalog_import_run_create(*, source_path: str) -> CatalogImportRun:
    return CatalogImportRun.objects.create(source_path=str(source_path))


def catalog_import_run_execute(*, run_id: int) -> CatalogImportRun:
    """Run a pending import once: the status is checked under a row lock, so a duplicate
    delivery of the same task does nothing."""
    with transaction.atomic():
        run = CatalogImportRun.objects.select_for_update().get(pk=run_id)
        if run.status != ImportStatus.PENDING:
            return run
        run.status = ImportStatus.RUNNING
        run.started_at = timezone.now()
        run.save(update_fields=["status", "started_at"])
    try:
        counts = catalog_import(path=Path(run.source_path))
    except CatalogImportError as exc:
        run.status, run.errors, run.counts = ImportStatus.FAILED, exc.errors, {}
    except Exception as exc:  # noqa: BLE001 - recorded on the run so the operator sees it
        logger.exception("catalog import run %s crashed", run_id)
        run.status, run.errors, run.counts = ImportStatus.FAILED, [f"internal error: {exc}"], {}
    else:
        run.status, run.errors, run.counts = ImportStatus.DONE, [], counts
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "errors", "counts", "finished_at"])
    return run
