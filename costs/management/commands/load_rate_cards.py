from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from costs.engine.errors import CostValidationError
from costs.rate_csv import API_PRICES_PATH, DEFAULT_PATH
from costs.services import api_token_prices_load, rate_cards_load


class Command(BaseCommand):
    help = (
        "Load the cost rate card (default costs/data/rate_cards.csv) and the external model API prices "
        "(default costs/data/api_token_prices.csv). Validated first; all or nothing; idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(DEFAULT_PATH), help="rate-card CSV")
        parser.add_argument("--api-file", default=str(API_PRICES_PATH), help="API token price CSV")

    def handle(self, *args, file, api_file, **options):
        try:
            # one transaction: a bad API price file leaves the rate card untouched too
            with transaction.atomic():
                counts = rate_cards_load(path=Path(file))
                api_counts = api_token_prices_load(path=Path(api_file))
        except CostValidationError as exc:
            lines = "\n".join(str(e) for e in exc.errors)
            raise CommandError(f"rate card not loaded, nothing changed:\n{lines}") from None
        except OSError as exc:
            raise CommandError(f"cannot read {exc.filename or file}: {exc}") from None
        self.stdout.write(
            f"rate card: {counts['created']} created, {counts['updated']} updated, "
            f"{counts['unchanged']} unchanged"
        )
        self.stdout.write(
            f"API token prices: {api_counts['created']} created, {api_counts['updated']} updated, "
            f"{api_counts['unchanged']} unchanged"
        )
