"""Writes of the costs app."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from costs.models import ApiTokenPrice, RateCard
from costs.rate_csv import API_PRICES_PATH, DEFAULT_PATH, read_api_price_csv, read_rate_csv

FIELDS = ("value", "unit", "currency", "valid_to", "source", "is_assumption", "notes")


def rate_cards_load(*, path: Path = DEFAULT_PATH) -> dict[str, int]:
    """Load the rate-card CSV: validated in full first, then written in one transaction.

    Idempotent: a row is matched on (key, valid_from) and only updated when it differs.
    Raises costs.engine.errors.CostValidationError (nothing written) on any bad row.
    """
    rows = read_rate_csv(path)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    with transaction.atomic():
        for row in rows:
            obj = RateCard.objects.filter(key=row["key"], valid_from=row["valid_from"]).first()
            if obj is None:
                RateCard.objects.create(
                    key=row["key"], valid_from=row["valid_from"], **{f: row[f] for f in FIELDS}
                )
                counts["created"] += 1
            elif any(getattr(obj, f) != row[f] for f in FIELDS):
                for f in FIELDS:
                    setattr(obj, f, row[f])
                obj.save()
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
    return counts


API_FIELDS = ("input_per_1m_tokens", "output_per_1m_tokens", "currency", "includes_vat", "valid_to",
              "open_weights_model", "source")


def api_token_prices_load(*, path: Path = API_PRICES_PATH) -> dict[str, int]:
    """Load the external model API price CSV: validated in full first, then written in one transaction.

    Idempotent: a row is matched on (provider, model, valid_from) and only updated when it differs.
    Rows added in the admin and absent from the file are left alone.
    Raises costs.engine.errors.CostValidationError (nothing written) on any bad row.
    """
    rows = read_api_price_csv(path)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    with transaction.atomic():
        for row in rows:
            match = dict(provider=row["provider"], model=row["model"], valid_from=row["valid_from"])
            obj = ApiTokenPrice.objects.filter(**match).first()
            if obj is None:
                ApiTokenPrice.objects.create(**match, **{f: row[f] for f in API_FIELDS})
                counts["created"] += 1
            elif any(getattr(obj, f) != row[f] for f in API_FIELDS):
                for f in API_FIELDS:
                    setattr(obj, f, row[f])
                obj.save()
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
    return counts
