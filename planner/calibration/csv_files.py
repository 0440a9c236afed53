"""CSV files of serving and training runs (the documented columns)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from .bench_files import _decode
from .fields import (
    MAX_ERRORS,
    MAX_RECORDS,
    SERVING_CSV_COLUMNS,
    SERVING_CSV_OPTIONAL,
    TRAINING_CSV_COLUMNS,
    TRAINING_CSV_OPTIONAL,
    Resolver,
    RunError,
    RunFileError,
    clean_serving,
    clean_training,
)


def _parse_csv(content: bytes, *, required: Sequence[str], optional: Sequence[str], clean, resolver) -> list[dict]:
    text = _decode(content)
    try:
        return _read_csv(text, required=required, optional=optional, clean=clean, resolver=resolver)
    except csv.Error as exc:  # NUL bytes, a field above the csv module's limit, a broken quote
        raise RunFileError([RunError(None, "file", f"not a readable CSV: {exc}")]) from None


def _read_csv(text: str, *, required, optional, clean, resolver) -> list[dict]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    errors: list[RunError] = []
    known = set(required) | set(optional)
    for h in header:
        if h not in known:
            errors.append(RunError(1, h or "(empty)", f"unknown column; expected {', '.join(required)}"))
    for h in required:
        if h not in header and h not in optional:
            errors.append(RunError(1, h, "missing column"))
    if errors:
        raise RunFileError(errors)
    reader.fieldnames = header
    records = []
    for row in reader:
        n = reader.line_num
        if len(records) >= MAX_RECORDS:
            raise RunFileError([RunError(n, "file", f"at most {MAX_RECORDS} rows per file")])
        if None in row:
            errors.append(RunError(n, "file", f"more values than the {len(header)} columns"))
            continue
        if not any((v or "").strip() for v in row.values()):
            continue
        rec = clean(dict(row), line=n, resolver=resolver, errors=errors)
        if rec is not None:
            rec["raw"] = dict(row)
            rec["source_line"] = n
            records.append(rec)
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise RunFileError(errors)
    if not records:
        raise RunFileError([RunError(2, "file", "no data rows")])
    return records


def parse_serving_csv(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _parse_csv(content, required=SERVING_CSV_COLUMNS, optional=SERVING_CSV_OPTIONAL,
                      clean=clean_serving, resolver=resolver)


def parse_training_csv(content: bytes, *, context: dict, resolver: Resolver) -> list[dict]:
    return _parse_csv(content, required=TRAINING_CSV_COLUMNS, optional=TRAINING_CSV_OPTIONAL,
                      clean=clean_training, resolver=resolver)
