"""python manage.py estimate FILE|-  — size a WorkloadSpec JSON and print the result as JSON.

Accelerators come from the database catalog (catalog.selectors.accelerator_specs, prices as of
today). With an empty or unmigrated catalog the shipped catalog/data/accelerators.csv is used
and stderr says so. Invalid input exits with status 2 and one "field.path: message" per line.

Batches (sweeps, replays): a JSON array of specs, or JSON Lines (one spec per line; blank lines
skipped), prints one result per line, in input order, as compact JSON. Every spec is validated
before any is sized: a bad one exits with status 2 naming it ("[3].model.preset: ..." for the
4th array item, "line 7: model.preset: ..." for JSON Lines) and prints no result. A spec the
sizing itself refuses (e.g. a pinned GPU that cannot hold the model) prints
{"line": N, "errors": [{"field": ..., "message": ...}]} in its place (N: 1-based array item or
file line), the others are still sized, and the command exits with status 2.
"""

import json
import sys
from datetime import date
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from planner.engine import SpecValidationError, parse_workload_spec, size_workload
from planner.engine.catalog_csv import load_accelerators_csv

CATALOG_CSV = Path(settings.BASE_DIR) / "catalog" / "data" / "accelerators.csv"


class Command(BaseCommand):
    help = ("Size a workload described by a WorkloadSpec JSON file (or - for stdin); prints JSON. A JSON array "
            "or JSON Lines of specs prints one result per line.")

    def add_arguments(self, parser):
        parser.add_argument("file", help="path to a WorkloadSpec JSON file (one object, an array, or JSON Lines), "
                                         "or - for stdin")
        parser.add_argument("--indent", type=int, default=2, help="JSON indentation (0 for one line)")
        parser.add_argument("--catalog-csv", default=None,
                            help="use this accelerators CSV instead of the database catalog")

    def handle(self, *args, **options):
        data = self._read(options["file"])
        if isinstance(data, _Batch):
            return self._batch(data, options)
        try:
            spec = parse_workload_spec(data)
            accelerators = self._accelerators(options["catalog_csv"])
            result = size_workload(spec=spec, accelerators=accelerators)
        except SpecValidationError as exc:
            raise CommandError("\n".join(str(e) for e in exc.errors), returncode=2) from exc
        indent = options["indent"] or None
        self.stdout.write(json.dumps(result.to_dict(), indent=indent, ensure_ascii=False))

    def _read(self, path: str):
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror})", returncode=2) from exc
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise CommandError(f"(root): invalid JSON: {exc}", returncode=2) from exc
            return self._read_lines(text)  # several JSON values: JSON Lines
        except ValueError as exc:
            raise CommandError(f"(root): invalid JSON: {exc}", returncode=2) from exc
        if isinstance(data, list):
            return _Batch([(i + 1, f"[{i}].", item) for i, item in enumerate(data)])
        return data

    def _read_lines(self, text: str) -> "_Batch":
        items, errors = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((number, f"line {number}: ", json.loads(line, parse_constant=_reject_constant)))
            except ValueError as exc:
                errors.append(f"line {number}: (root): invalid JSON: {exc}")
        if errors:
            raise CommandError("\n".join(errors), returncode=2)
        return _Batch(items)

    def _batch(self, batch: "_Batch", options) -> None:
        if not batch:
            raise CommandError("(root): no specs in the input", returncode=2)
        specs, errors = [], []
        for number, prefix, item in batch:
            try:
                specs.append((number, prefix, parse_workload_spec(item)))
            except SpecValidationError as exc:
                errors += [_where(prefix, e) for e in exc.errors]
        if errors:
            raise CommandError("\n".join(errors), returncode=2)
        accelerators = self._accelerators(options["catalog_csv"])
        refused = []
        for number, prefix, spec in specs:
            try:
                out = size_workload(spec=spec, accelerators=accelerators).to_dict()
            except SpecValidationError as exc:
                out = {"line": number, "errors": [{"field": e.field, "message": str(e.message)} for e in exc.errors]}
                refused += [_where(prefix, e) for e in exc.errors]
            self.stdout.write(json.dumps(out, ensure_ascii=False))
        if refused:
            raise CommandError("\n".join(refused), returncode=2)

    def _accelerators(self, csv_path):
        if csv_path:
            return load_accelerators_csv(csv_path)
        try:
            from catalog.selectors import accelerator_specs

            specs = accelerator_specs(as_of=date.today())
        except DatabaseError as exc:
            self.stderr.write(f"catalog database unavailable ({exc.__class__.__name__}); using {CATALOG_CSV.name}")
            return load_accelerators_csv(CATALOG_CSV)
        if not specs:
            self.stderr.write(f"catalog database is empty; using the shipped {CATALOG_CSV.name} (no prices)")
            return load_accelerators_csv(CATALOG_CSV)
        return specs


def _where(prefix: str, error) -> str:
    """'[3].model.preset: message' / 'line 7: model.preset: message' ('[3]: message' for the item itself)."""
    if error.field == "(root)" and prefix.endswith("."):
        return f"{prefix[:-1]}: {error.message}"
    return f"{prefix}{error.field}: {error.message}"


class _Batch(list):
    """(1-based line or item number, error prefix, spec data) of each spec in a batch."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a valid number")
