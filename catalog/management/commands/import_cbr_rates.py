"""python manage.py import_cbr_rates [--url URL] [--date YYYY-MM-DD] [--timeout S]
   python manage.py import_cbr_rates --file XML_daily.xml

Loads the Bank of Russia's official daily rates (XML_daily) for the catalog currencies. The URL
defaults to settings.CBR_DAILY_URL; --date asks for that day (date_req=dd/mm/yyyy). --file imports a
saved copy of https://www.cbr.ru/scripts/XML_daily.asp offline (the rates' date is the file's
ValCurs Date; the Bank of Russia is the named source). A failed fetch, or a file that is not the
bank's XML_daily, changes no rate, is recorded as a failed FeedImportRun and exits with status 1
naming the file and the problem.
"""

import datetime as dt
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.choices import ImportStatus
from catalog.feeds.cbr import import_cbr_daily


def cbr_url(base: str, day: dt.date | None) -> str:
    if day is None or not base.startswith(("http://", "https://")):
        return base
    return f"{base}{'&' if '?' in base else '?'}{urlencode({'date_req': day.strftime('%d/%m/%Y')})}"


class Command(BaseCommand):
    help = "Import the Bank of Russia daily exchange rates (XML_daily) from a URL or a file."

    def add_arguments(self, parser):
        parser.add_argument("--url", default=None, help="URL or file path (default: settings.CBR_DAILY_URL)")
        parser.add_argument("--date", default=None, help="rates of this day, YYYY-MM-DD (default: latest)")
        parser.add_argument("--timeout", type=float, default=None, help="seconds (default: settings.FEED_TIMEOUT_SECONDS)")
        parser.add_argument("--file", default=None,
                            help="a saved XML_daily file of the Bank of Russia (offline import)")

    def handle(self, *args, url, date, timeout, file=None, **options):
        if file and (url or date):
            raise CommandError("--file: give either --file or --url/--date, not both")
        if file:
            path = Path(file)
            if not path.is_file():
                raise CommandError(f"{file}: no such file")
            run = import_cbr_daily(url=str(path), timeout_s=0)
            if run.status != ImportStatus.DONE:
                raise CommandError(f"{file}: not imported, no rate changed (run #{run.pk}): {run.error}")
        else:
            try:
                day = dt.date.fromisoformat(date) if date else None
            except ValueError:
                raise CommandError("--date: must be a date YYYY-MM-DD") from None
            source = cbr_url(url or settings.CBR_DAILY_URL, day)
            run = import_cbr_daily(url=source, timeout_s=timeout or settings.FEED_TIMEOUT_SECONDS)
            if run.status != ImportStatus.DONE:
                raise CommandError(f"Bank of Russia rates not imported (run #{run.pk}): {run.error}")
        c = run.counts
        self.stdout.write(
            f"Bank of Russia rates of {c['date']}: {c['created']} created, {c['updated']} updated, "
            f"{c['unchanged']} unchanged (run #{run.pk})"
        )
