"""Reads of the costs app."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

from django.db.models import Q

from costs.models import ApiTokenPrice, RateCard

RATE_SNAPSHOT_SCHEMA = "gpu-planner.rate-card-snapshot/1"


def rate_card_snapshot(*, as_of: date) -> dict:
    """Every rate valid at ``as_of`` (the latest valid_from per key), JSON-serialisable.

    A plan version stores this so it keeps its rates when the rate card changes (R6.4).
    It also carries the dated VAT history from the catalog: a horizon can cross a VAT change
    (Russia: 20 % to 2025-12-31, 22 % from 2026-01-01), which the price snapshot (rates valid
    at one date) cannot show.
    """
    valid = Q(valid_from__lte=as_of) & (Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))
    rates: dict[str, dict] = {}
    for r in _plain(RateCard.objects.filter(valid).order_by("key", "valid_from")):
        rates[r.key] = {
            "value": _dec(r.value),
            "unit": r.unit,
            "currency": r.currency or None,
            "valid_from": r.valid_from.isoformat(),
            "valid_to": r.valid_to.isoformat() if r.valid_to else None,
            "source": r.source,
            "is_assumption": r.is_assumption,
        }
    # external model API prices (self-hosting vs API); one row per provider/model, latest first wins
    api: dict[tuple[str, str], dict] = {}
    for a in _plain(ApiTokenPrice.objects.filter(valid).order_by("provider", "model", "valid_from")):
        api[(a.provider, a.model)] = {
            "provider": a.provider,
            "model": a.model,
            "input_per_1m_tokens": _dec(a.input_per_1m_tokens),
            "output_per_1m_tokens": _dec(a.output_per_1m_tokens),
            "currency": a.currency,
            "includes_vat": a.includes_vat,
            "valid_from": a.valid_from.isoformat(),
            "open_weights_model": a.open_weights_model,
            "source": a.source,
        }
    return {
        "schema": RATE_SNAPSHOT_SCHEMA,
        "as_of": as_of.isoformat(),
        "rates": rates,
        "api_prices": list(api.values()),
        "vat_history": _vat_history(),
    }


def _plain(queryset) -> list[SimpleNamespace]:
    """The rows as plain objects with the model's column values (no model instances: ~110 rows a plan)."""
    return [SimpleNamespace(**row) for row in queryset.values(*[f.attname for f in queryset.model._meta.concrete_fields])]


def _dec(value) -> str:
    return format(value.normalize(), "f")


def _vat_history() -> list[dict]:
    from catalog.models import VatRate

    return [
        {
            "country": v.country,
            "rate_percent": _dec(v.rate_percent),
            "valid_from": v.valid_from.isoformat(),
            "valid_to": v.valid_to.isoformat() if v.valid_to else None,
            "source": {"title": v.source_title, "url": v.source_url},
        }
        for v in VatRate.objects.order_by("country", "valid_from")
    ]
