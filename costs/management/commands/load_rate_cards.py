from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from costs.engine.errors import CostValidationError
from costs.rate_csv import DEFAULT_PATH
from costs.services import rate_cards_load


class Command(BaseCommand):
    help = "Load the cost rate card (default costs/data/rate_cards.csv). Validated first; all or nothing; idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(DEFAULT_PATH), help="rate-card CSV")

    def handle(self, *args, file, **options):
        try:
            counts = rate_cards_load(path=Path(file))
        except CostValidationError as exc:
            lines = "\n".join(str(e) for e in exc.errors)
            raise CommandError(f"rate card not loaded, nothing changed:\n{lines}") from None
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc}") from None
        self.stdout.write(
            f"rate card: {counts['created']} created, {counts['updated']} updated, "
            f"{counts['unchanged']} unchanged"
        )
