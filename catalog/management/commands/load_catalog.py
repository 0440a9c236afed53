from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from catalog.services import CatalogImportError, catalog_import

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "data"


class Command(BaseCommand):
    help = "Load the catalog from a directory of CSV files (default catalog/data) or an .xlsx workbook. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("--dir", dest="path", default=str(DEFAULT_DIR), help="directory of <table>.csv files")
        parser.add_argument("--file", dest="file", default=None, help="an .xlsx workbook (one sheet per table) or one .csv")

    def handle(self, *args, path, file, **options):
        source = Path(file or path)
        try:
            counts = catalog_import(path=source)
        except CatalogImportError as exc:
            raise CommandError(f"catalog not loaded, nothing changed:\n{exc}") from None
        for table, c in counts.items():
            self.stdout.write(f"{table}: {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged")
        self.stdout.write(self.style.SUCCESS(f"catalog loaded from {source}"))
