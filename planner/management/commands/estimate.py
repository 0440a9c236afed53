"""python manage.py estimate FILE|-  — size a WorkloadSpec JSON and print the result as JSON.

Accelerators come from the database catalog (catalog.selectors.accelerator_specs, prices as of
today). With an empty or unmigrated catalog the shipped catalog/data/accelerators.csv is used
and stderr says so. Invalid input exits with status 2 and one "field.path: message" per line.
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
    help = "Size a workload described by a WorkloadSpec JSON file (or - for stdin); prints JSON."

    def add_arguments(self, parser):
        parser.add_argument("file", help="path to a WorkloadSpec JSON file, or - for stdin")
        parser.add_argument("--indent", type=int, default=2, help="JSON indentation (0 for one line)")
        parser.add_argument("--catalog-csv", default=None,
                            help="use this accelerators CSV instead of the database catalog")

    def handle(self, *args, **options):
        data = self._read(options["file"])
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
            return json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            raise CommandError(f"(root): invalid JSON: {exc}", returncode=2) from exc

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


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a valid number")
