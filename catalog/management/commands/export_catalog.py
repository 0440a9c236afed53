from pathlib import Path

from django.core.management.base import BaseCommand

from catalog.importers import export_csv, export_xlsx


class Command(BaseCommand):
    help = "Write the catalog out: --format csv (a directory of <table>.csv) or xlsx (one workbook, a sheet per table)."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["csv", "xlsx"], default="csv")
        parser.add_argument("--out", required=True, help="directory (csv) or .xlsx file path")

    def handle(self, *args, format, out, **options):
        if format == "csv":
            written = export_csv(Path(out))
            self.stdout.write(self.style.SUCCESS(f"wrote {len(written)} files to {out}"))
        else:
            self.stdout.write(self.style.SUCCESS(f"wrote {export_xlsx(Path(out))}"))
