"""Snapshots a saved plan freezes: every price and rate valid at a date, the providers and their
regions, and a team's supplier quotes, JSON-serialisable (shapes: docs/CATALOG.md). The reads the
engines use directly (FX, VAT, accelerator specs) are in catalog.selectors."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.db.models import F

from catalog.models import (
    CloudOffer,
    DedicatedServerOffer,
    ElectricityTariff,
    HardwarePrice,
    NetworkOption,
    ServerPlatform,
    StorageTier,
    VatRate,
)
from catalog.selectors import CROSS_CURRENCY, CatalogLookupError, FxTable, _plain_rows, valid_at

SNAPSHOT_SCHEMA = "gpu-planner.price-snapshot/1"


# ---- price snapshot ---------------------------------------------------------------------------


def _dec(value: Decimal | None) -> str | None:
    """A Decimal as a plain string without exponent or trailing zeros ('55.04', '100')."""
    if value is None:
        return None
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _money(amount: Decimal | None, currency: str) -> dict | None:
    return None if amount is None else {"amount": _dec(amount), "currency": currency}


def _iso(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _source(row) -> dict:
    return {
        "title": row.source_title,
        "url": row.source_url,
        "date": _iso(row.source_date),
        "retrieved_on": _iso(row.retrieved_on),
        "notes": row.notes,
    }


def _validity(row) -> dict:
    return {"valid_from": _iso(row.valid_from), "valid_to": _iso(row.valid_to), "includes_vat": row.includes_vat}


def providers_snapshot() -> tuple[list[dict], list[dict]]:
    """Providers (country, priced or not) and regions (jurisdiction) for residency and 'not priced' notes."""
    from catalog.models import Provider, ProviderRegion

    providers = [
        {"name": p.name, "country": p.country, "kind": p.kind, "priced": p.priced, "notes": p.notes,
         "source": _source(p)}
        for p in Provider.objects.order_by("name")
    ]
    regions = [
        {"provider": r.provider.name, "region": r.region, "jurisdiction": r.jurisdiction, "location": r.location}
        for r in ProviderRegion.objects.select_related("provider").order_by("provider__name", "region")
    ]
    return providers, regions


def fx_on(*, base: str, quote: str, day: date) -> dict | None:
    """The rate a price dated `day` converts at: the latest Bank of Russia rate on or before that day."""
    table = FxTable.load(as_of=day)
    try:
        rate = table.rate(base=base, quote=quote)
    except CatalogLookupError:
        return None
    row = table.rates.get((base, quote)) or table.rates.get((quote, base)) or table.rates.get((base, CROSS_CURRENCY))
    return {"base": base, "quote": quote, "rate": _dec(rate), "date": row.rate_date.isoformat() if row else None,
            "source": _source(row) if row else None}


def supplier_quotes_snapshot(*, team_id: int, as_of: date) -> list[dict]:
    """The team's quotes on record at as_of (valid or expired; the plan uses the valid ones and
    flags the expired), with the FX rate of each quote's own date for non-RUB quotes."""
    from catalog.models import SupplierQuote

    out = []
    for q in SupplierQuote.objects.filter(team_id=team_id, quote_date__lte=as_of).select_related("accelerator"):
        out.append({
            "id": q.pk,
            "supplier": q.supplier,
            "item_kind": q.item_kind,
            "accelerator": q.accelerator.slug,
            "gpus_per_server": q.gpus_per_server,
            "description": q.description,
            "quantity": q.quantity,
            "unit_price": _money(q.unit_price, q.currency),
            "includes_vat": q.includes_vat,
            "quote_date": q.quote_date.isoformat(),
            "valid_until": q.valid_until.isoformat(),
            "document_name": q.document_name,
            "valid": q.is_valid_on(as_of),
            "fx_at_quote_date": {
                cur: fx_on(base=q.currency, quote=cur, day=q.quote_date)
                for cur in ("RUB", "USD", "EUR") if cur != q.currency
            },
        })
    return out


def price_snapshot(*, as_of: date) -> dict:
    """Every price and rate valid at as_of, JSON-serialisable. Shape: docs/CATALOG.md (stable)."""
    from django.conf import settings

    from catalog.compose import composed_cloud_offers
    from catalog.cpu_instances import cpu_instances_snapshot

    valid = valid_at(as_of)
    fx = FxTable.load(as_of=as_of)
    providers, regions = providers_snapshot()
    return {
        "schema": SNAPSHOT_SCHEMA,
        "as_of": as_of.isoformat(),
        "composed_cloud_offers": composed_cloud_offers(as_of=as_of),
        "cpu_instances": cpu_instances_snapshot(as_of=as_of),
        "providers": providers,
        "provider_regions": regions,
        "freshness_thresholds_days": dict(settings.PRICE_MAX_AGE_DAYS),
        "cloud_offers": [
            {
                "id": o.id,
                "provider": o.provider,
                "region": o.region,
                "instance_type": o.instance_type,
                "source_gpu_model": o.source_gpu_model,
                "accelerator": o.accelerator_slug,
                "gpu_count": o.gpu_count,
                "gpu_memory_gib": _dec(o.gpu_memory_gib),
                "vcpus": o.vcpus,
                "ram_gib": _dec(o.ram_gib),
                "local_disk_gb": o.local_disk_gb,
                "price_basis": o.price_basis,
                "on_demand_per_hour": _money(o.price_on_demand_per_hour, o.currency),
                "spot_per_hour": _money(o.price_spot_per_hour, o.currency),
                "commit_1y_per_hour": _money(o.price_commit_1y_per_hour, o.currency),
                "commit_3y_per_hour": _money(o.price_commit_3y_per_hour, o.currency),
                "billing_granularity_seconds": o.billing_granularity_seconds,
                "flagged": o.flagged,
                "flag_reason": o.flag_reason,
                **_validity(o),
                "source": _source(o),
            }
            for o in _plain_rows(CloudOffer.objects.filter(valid).order_by("pk"), accelerator_slug=F("accelerator__slug"))
        ],
        "dedicated_server_offers": [
            {
                "id": o.pk,
                "provider": o.provider,
                "plan_name": o.plan_name,
                "location": o.location,
                "accelerator": o.accelerator.slug,
                "gpu_count": o.gpu_count,
                "cpu_description": o.cpu_description,
                "ram_gib": o.ram_gib,
                "disk_description": o.disk_description,
                "price_per_month": _money(o.price_per_month, o.currency),
                "setup_fee": _money(o.setup_fee, o.currency),
                **_validity(o),
                "source": _source(o),
            }
            for o in DedicatedServerOffer.objects.filter(valid).select_related("accelerator").order_by("pk")
        ],
        "hardware_prices": [
            {
                "id": p.pk,
                "item_kind": "accelerator" if p.accelerator_id else "server_platform" if p.server_platform_id else "cpu",
                "item": p.item.slug,
                "price": _money(p.price, p.currency),
                "price_kind": p.price_kind,
                **_validity(p),
                "source": _source(p),
            }
            for p in HardwarePrice.objects.filter(valid)
            .select_related("accelerator", "server_platform", "cpu")
            .order_by("pk")
        ],
        "storage_tiers": [
            {
                "id": s.pk,
                "slug": s.slug,
                "name": s.name,
                "media": s.media,
                "purchase_price_per_tb": _money(s.purchase_price_per_tb, s.currency),
                "service_price_per_gb_month": _money(s.service_price_per_gb_month, s.currency),
                "read_throughput_mb_s": s.read_throughput_mb_s,
                "write_throughput_mb_s": s.write_throughput_mb_s,
                "capacity_tb": _dec(s.capacity_tb),
                **_validity(s),
                "source": _source(s),
            }
            for s in StorageTier.objects.filter(valid).order_by("pk")
        ],
        "network_options": [
            {
                "id": n.pk,
                "slug": n.slug,
                "name": n.name,
                "technology": n.technology,
                "speed_gbit_s": n.speed_gbit_s,
                "nic_price": _money(n.nic_price, n.currency),
                "switch_port_price": _money(n.switch_port_price, n.currency),
                "cable_price": _money(n.cable_price, n.currency),
                **_validity(n),
                "source": _source(n),
            }
            for n in NetworkOption.objects.filter(valid).order_by("pk")
        ],
        "server_platforms": [
            {
                "id": s.pk,
                "slug": s.slug,
                "vendor": s.vendor,
                "model": s.model,
                "gpu_slots": s.gpu_slots,
                "gpu_form_factor_kind": s.gpu_form_factor_kind,
                "included_accelerator": s.included_accelerator.slug if s.included_accelerator else None,
                "cpu_sockets": s.cpu_sockets,
                "included_cpu": s.included_cpu.slug if s.included_cpu else None,
                "max_cpu_cores_total": s.max_cpu_cores_total,
                "max_ram_gib": s.max_ram_gib,
                "pcie_gen": s.pcie_gen,
                "pcie_x16_slots": s.pcie_x16_slots,
                "pcie_lanes": s.pcie_lanes,
                "max_power_w": s.max_power_w,
                "psu_count": s.psu_count,
                "psu_unit_w": s.psu_unit_w,
                "rack_units": s.rack_units,
                "has_nvlink": s.has_nvlink,
                "has_nvswitch": s.has_nvswitch,
                "source": _source(s),
            }
            for s in ServerPlatform.objects.select_related("included_accelerator", "included_cpu").order_by("pk")
        ],
        "electricity_tariffs": [
            {
                "id": t.pk,
                "country": t.country,
                "region": t.region,
                "consumer_class": t.consumer_class,
                "price_per_kwh": _money(t.price_per_kwh, t.currency),
                **_validity(t),
                "source": _source(t),
            }
            for t in ElectricityTariff.objects.filter(valid).order_by("pk")
        ],
        "fx_rates": [
            {
                "id": r.pk,
                "date": r.rate_date.isoformat(),
                "base": r.base,
                "quote": r.quote,
                "rate": _dec(r.rate),
                "source": _source(r),
            }
            for _pair, r in sorted(fx.rates.items())
        ],
        "vat_rates": [
            {
                "id": v.pk,
                "country": v.country,
                "rate_percent": _dec(v.rate_percent),
                "valid_from": _iso(v.valid_from),
                "valid_to": _iso(v.valid_to),
                "source": _source(v),
            }
            for v in VatRate.objects.filter(valid).order_by("country", "pk")
        ],
    }
