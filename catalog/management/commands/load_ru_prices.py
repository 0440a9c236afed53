"""python manage.py load_ru_prices [--dir catalog/data/ru]

Loads the Russian price files (providers and regions with their jurisdictions, Yandex VM shapes,
published prices as published, Bank of Russia rates). Run after load_catalog (shapes link to its
accelerators). Any error: nothing written, exit status 1, one line per problem naming file/line/column.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from catalog.ru_prices import DEFAULT_DIR, RuPriceError, load_ru_prices


class Command(BaseCommand):
    help = "Load the Russian price files (catalog/data/ru)."

    def add_arguments(self, parser):
        parser.add_argument("--dir", default=str(DEFAULT_DIR))

    def handle(self, *args, dir, **options):
        try:
            counts = load_ru_prices(directory=Path(dir))
        except RuPriceError as exc:
            raise CommandError("Russian prices not loaded:\n" + "\n".join(f"  {e}" for e in exc.errors)) from None
        for name, c in counts.items():
            self.stdout.write(f"{name}: {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged")
