"""python manage.py import_cbr_rates [--url URL] [--date YYYY-MM-DD] [--timeout S]

Loads the Bank of Russia's official daily rates (XML_daily) for the catalog currencies. The URL
defaults to settings.CBR_DAILY_URL; --date asks for that day (date_req=dd/mm/yyyy). A failed or
malformed fetch changes no rate, is recorded as a failed FeedImportRun and exits with status 1.
"""

import datetime as dt
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

    def handle(self, *args, url, date, timeout, **options):
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
