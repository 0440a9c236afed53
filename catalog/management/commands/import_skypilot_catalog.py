"""python manage.py import_skypilot_catalog --provider AWS SOURCE [--timeout S]

SOURCE is a SkyPilot catalog vms.csv (file path or http(s) URL, e.g.
https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7/aws/vms.csv).
Validates the whole file first; any error writes nothing, is recorded and exits with status 1.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.choices import ImportStatus
from catalog.feeds.skypilot import import_skypilot_vms


class Command(BaseCommand):
    help = "Import GPU cloud offers from a SkyPilot catalog vms.csv (file or URL)."

    def add_arguments(self, parser):
        parser.add_argument("source", help="vms.csv path or URL")
        parser.add_argument("--provider", required=True, help="provider name as the catalog spells it, e.g. AWS")
        parser.add_argument("--timeout", type=float, default=None)

    def handle(self, *args, source, provider, timeout, **options):
        run = import_skypilot_vms(
            source=source, provider=provider.strip(), timeout_s=timeout or settings.FEED_TIMEOUT_SECONDS
        )
        if run.status != ImportStatus.DONE:
            raise CommandError(f"SkyPilot catalog not imported (run #{run.pk}): {run.error}")
        c = run.counts
        self.stdout.write(
            f"{provider}: {c['created']} created, {c['updated']} updated, {c['closed']} closed, "
            f"{c['unchanged']} unchanged (run #{run.pk})"
        )
