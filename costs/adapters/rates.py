"""Rates from the snapshots: the rate card, FX, VAT, model-API prices, the power tariff and storage rates."""

from __future__ import annotations

from decimal import Decimal

from catalog.domain.messages import Msg
from costs.engine.errors import CostValidationError, FieldError
from costs.engine.inputs import (
    ApiPrice,
    Rate,
)
from costs.engine.money import FxRate, FxTable, Price, VatRate, VatTable

from .common import (
    _date,
    _price,
    _source,
)

# ---- snapshots -> price book and rates -------------------------------------------------------


def rates_from_snapshot(rate_snapshot: dict) -> dict[str, Rate]:
    out = {}
    for key, r in (rate_snapshot.get("rates") or {}).items():
        source = (
            r["source"]
            if not r.get("is_assumption") or r["source"].startswith("assumption")
            else f"assumption: {r['source']}"
        )
        out[key] = Rate(
            value=Decimal(r["value"]),
            unit=r.get("unit", ""),
            currency=r.get("currency") or None,
            source=source,
            valid_from=_date(r.get("valid_from")),
        )
    return out


def fx_from_snapshot(price_snapshot: dict) -> FxTable:
    return FxTable(
        rates=tuple(
            FxRate(
                base=r["base"],
                quote=r["quote"],
                rate=Decimal(r["rate"]),
                valid_from=_date(r["date"]),
                source=f"{_source(r)} ({r['date']})",
            )
            for r in price_snapshot.get("fx_rates", [])
        )
    )


def vat_from_snapshots(price_snapshot: dict, rate_snapshot: dict) -> VatTable:
    rows = rate_snapshot.get("vat_history") or price_snapshot.get("vat_rates", [])
    return VatTable(
        rates=tuple(
            VatRate(
                country=r["country"],
                rate=Decimal(r["rate_percent"]) / 100,
                valid_from=_date(r["valid_from"]),
                valid_to=_date(r.get("valid_to")),
                source=_source(r),
            )
            for r in rows
        )
    )



def model_api_key(provider: str, model: str) -> str:
    """How a spec names a model API (serving.model_api): "provider/model"."""
    return f"{provider}/{model}"


def chosen_api_prices(api_prices: tuple[ApiPrice, ...], spec) -> tuple[ApiPrice, ...]:
    """The model APIs the spec names (serving.model_api), matched case-insensitively on
    "provider/model"; all of them when it names none. A name not priced in the catalog is a
    field error on spec.serving.model_api that lists what is priced."""
    named = tuple(getattr(getattr(spec, "serving", None), "model_api", ()) or ())
    if not named:
        return api_prices
    by_key = {model_api_key(a.provider, a.model).lower(): a for a in api_prices}
    unknown = [n for n in named if n.lower() not in by_key]
    if unknown:
        priced = ", ".join(sorted(model_api_key(a.provider, a.model) for a in api_prices)) or "none"
        raise CostValidationError(
            [FieldError(path="spec.serving.model_api",
                        message=f"model API {', '.join(unknown)} not priced in the catalog; priced: {priced}")]
        )
    return tuple(dict.fromkeys(by_key[n.lower()] for n in named))


def api_prices_from_snapshot(rate_snapshot: dict) -> tuple[ApiPrice, ...]:
    out = []
    for a in rate_snapshot.get("api_prices", []):
        common = dict(
            currency=a["currency"],
            vat_included=bool(a.get("includes_vat")),
            source=a["source"],
            as_of=_date(a.get("valid_from")),
        )
        out.append(
            ApiPrice(
                provider=a["provider"],
                model=a["model"],
                input_per_1m_tokens=Price(
                    amount=Decimal(a["input_per_1m_tokens"]), unit="per 1M input tokens", **common
                ),
                output_per_1m_tokens=Price(
                    amount=Decimal(a["output_per_1m_tokens"]), unit="per 1M output tokens", **common
                ),
                open_weights_model=a.get("open_weights_model") or None,  # older snapshots: unknown
            )
        )
    return tuple(out)


def power_tariff_from_snapshot(price_snapshot: dict, *, country: str) -> tuple[Price | None, str | None]:
    """A business tariff of the country from the catalog; a residential one is not what a data
    centre pays, so then the rate card's tariff is used and the result says why."""
    tariffs = [t for t in price_snapshot.get("electricity_tariffs", []) if t.get("country") == country]
    business = [t for t in tariffs if "residential" not in (t.get("consumer_class") or "").lower()]
    if not business:
        if tariffs:
            return None, (
                Msg("the catalog's {country} electricity tariffs are residential only; the rate card's "
                    "electricity tariff is used for data-centre power", country=country)
            )
        return None, None
    t = business[0]
    price = _price(t["price_per_kwh"], t, "per kWh")
    where = f"{t.get('region', '')} {t.get('consumer_class', '')}".strip()
    return Price(
        amount=price.amount,
        currency=price.currency,
        unit=price.unit,
        vat_included=price.vat_included,
        as_of=price.as_of,
        source=f"{price.source} [{where}]",
    ), None


STORAGE_PROVIDERS = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "lambda": "Lambda", "runpod": "RunPod"}
NOT_STANDARD = ("express", "one zone", "provisioned", "cold", "archive", "local ssd", "ephemeral", "io2")


def _standard_rank(t: dict) -> int:
    """0 for a provider's standard tier (e.g. S3 Standard, pd-ssd, EBS gp3), 1 for special tiers
    (S3 Express One Zone, io2, cold HDD, host-attached local SSD): defaults use the standard one."""
    name = (t.get("name") or "").lower()
    return 1 if any(x in name for x in NOT_STANDARD) else 0


def storage_rates_from_snapshot(price_snapshot: dict) -> dict[str, Rate]:
    """Catalog storage prices replace the rate card's assumptions for the same tier: per media the
    standard tier (not an express or provisioned-IOPS one), scoped per provider (``@AWS``) where
    the tier's id names one, the cheapest standard tier as the default for other options."""
    out: dict[str, Rate] = {}
    tiers = sorted(price_snapshot.get("storage_tiers", []), key=_standard_rank)
    for t in tiers:
        media = t.get("media")
        svc, buy = t.get("service_price_per_gb_month"), t.get("purchase_price_per_tb")
        src = f"{_source(t)} ({t.get('name', '')})"
        provider = STORAGE_PROVIDERS.get(str(t.get("id") or "").split("-", 1)[0])
        if svc and _standard_rank(t) == 0:
            rate = Rate(
                value=Decimal(svc["amount"]),
                unit="per GB-month",
                currency=svc["currency"],
                source=src,
                valid_from=_date(t.get("valid_from")),
            )
            if provider and f"cloud_storage_per_gb_month.{media}@{provider}" not in out:
                out[f"cloud_storage_per_gb_month.{media}@{provider}"] = rate
            if provider and f"cloud_storage_per_gb_month.{media}" not in out:
                out[f"cloud_storage_per_gb_month.{media}"] = rate
        if buy and f"onprem_storage_capex_per_gb.{media}" not in out:
            out[f"onprem_storage_capex_per_gb.{media}"] = Rate(
                value=Decimal(buy["amount"]) / 1000,
                unit="per GB",
                currency=buy["currency"],
                source=src,
                valid_from=_date(t.get("valid_from")),
            )
    return out
