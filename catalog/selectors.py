"""Read-side of the catalog: plain values for the engines, snapshots for saved plans.

Everything takes an explicit `as_of` date (no clock here): a row is valid at `as_of` when
valid_from <= as_of and (valid_to is NULL or as_of < valid_to). Exchange rates: the latest
rate dated on or before `as_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

from django.db.models import F, Q

from catalog.models import (
    Accelerator,
    CloudOffer,
    DedicatedServerOffer,
    ElectricityTariff,
    ExchangeRate,
    HardwarePrice,
    NetworkOption,
    ServerPlatform,
    StorageTier,
    VatRate,
)
from planner.engine.catalog_csv import load_accelerator_aliases
from planner.engine.hardware import AcceleratorSpec

SNAPSHOT_SCHEMA = "gpu-planner.price-snapshot/1"
# Bank of Russia publishes every rate against the rouble, so crosses go through RUB.
CROSS_CURRENCY = "RUB"


class CatalogLookupError(LookupError):
    """A rate or price the caller needs is not in the catalog for that date."""


def valid_at(as_of: date) -> Q:
    return Q(valid_from__lte=as_of) & (Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))


@dataclass(frozen=True)
class FxTable:
    """The latest rate per (base, quote) dated on or before as_of, loaded once."""

    as_of: date
    rates: dict[tuple[str, str], ExchangeRate]

    @classmethod
    def load(cls, *, as_of: date) -> FxTable:
        rates: dict[tuple[str, str], ExchangeRate] = {}
        for row in ExchangeRate.objects.filter(rate_date__lte=as_of).order_by("rate_date"):
            rates[(row.base, row.quote)] = row  # later dates overwrite earlier ones
        return cls(as_of=as_of, rates=rates)

    def rate(self, *, base: str, quote: str) -> Decimal:
        if base == quote:
            return Decimal(1)
        direct = self.rates.get((base, quote))
        if direct is not None:
            return direct.rate
        inverse = self.rates.get((quote, base))
        if inverse is not None:
            return Decimal(1) / inverse.rate
        if CROSS_CURRENCY not in (base, quote):
            try:
                return self.rate(base=base, quote=CROSS_CURRENCY) * self.rate(base=CROSS_CURRENCY, quote=quote)
            except CatalogLookupError:
                pass
        raise CatalogLookupError(
            f"no exchange rate {base}->{quote} dated on or before {self.as_of.isoformat()} in the catalog"
        )


def fx_rate(*, base: str, quote: str, as_of: date) -> Decimal:
    """How many `quote` one `base` buys at `as_of` (direct, inverse, or crossed through RUB)."""
    return FxTable.load(as_of=as_of).rate(base=base, quote=quote)


def vat_rate(*, country: str, as_of: date) -> Decimal:
    """The VAT rate in percent (e.g. Decimal('22.00')) for an ISO country code at as_of."""
    row = VatRate.objects.filter(valid_at(as_of), country=country.upper()).order_by("-valid_from").first()
    if row is None:
        raise CatalogLookupError(f"no VAT rate for country {country!r} valid on {as_of.isoformat()} in the catalog")
    return row.rate_percent


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _purchase_prices(*, as_of: date, fx: FxTable) -> dict[int, tuple[Decimal, HardwarePrice]]:
    """accelerator id -> (USD price, row): the most recent price valid at as_of, lowest if tied."""
    best: dict[int, tuple[Decimal, HardwarePrice]] = {}
    for price in HardwarePrice.objects.filter(valid_at(as_of), accelerator__isnull=False):
        try:
            usd = price.price * fx.rate(base=price.currency, quote="USD")
        except CatalogLookupError:
            continue  # no rate for that currency at that date: the price stays unknown
        current = best.get(price.accelerator_id)
        if (
            current is None
            or price.valid_from > current[1].valid_from
            or (price.valid_from == current[1].valid_from and usd < current[0])
        ):
            best[price.accelerator_id] = (usd, price)
    return best


def _cloud_prices(*, as_of: date, fx: FxTable, plain: bool = False) -> dict[int, tuple[Decimal, CloudOffer]]:
    """accelerator id -> (USD per GPU-hour, offer): the cheapest unflagged whole-instance on-demand offer.
    ``plain``: the offers as plain rows (_plain_rows), not model instances, for callers that need the price."""
    best: dict[int, tuple[Decimal, CloudOffer]] = {}
    offers = CloudOffer.objects.filter(
        valid_at(as_of), accelerator__isnull=False, price_on_demand_per_hour__isnull=False, flagged=False
    ).exclude(price_basis="accelerator_only")
    for offer in _plain_rows(offers) if plain else offers:
        try:
            per_gpu = offer.price_on_demand_per_hour * fx.rate(base=offer.currency, quote="USD") / offer.gpu_count
        except CatalogLookupError:
            continue
        if offer.accelerator_id not in best or per_gpu < best[offer.accelerator_id][0]:
            best[offer.accelerator_id] = (per_gpu, offer)
    return best


ALIASES_CSV = Path(__file__).resolve().parent / "data" / "accelerator_aliases.csv"


@lru_cache(maxsize=1)
def accelerator_aliases() -> dict[str, str]:
    """Accelerator names as nvidia-smi, rocm-smi and providers write them -> catalog ids
    (catalog/data/accelerator_aliases.csv, each row with its source; docs/CATALOG.md)."""
    return load_accelerator_aliases(ALIASES_CSV)


def accelerator_specs(*, as_of: date) -> list[AcceleratorSpec]:
    """Every accelerator as the sizing engine sees it, with prices valid at as_of (USD, for ranking).

    purchase_price_usd: the most recent HardwarePrice valid at as_of (lowest if several start the
    same day), converted at the FX rate of as_of, as recorded (VAT not removed).
    cloud_price_per_gpu_hour_usd: the cheapest on-demand whole-instance price / gpu_count among
    offers valid at as_of; offers flagged as anomalous at the source and GPU-only prices
    (which still need a host VM) are left out. None when unknown.
    """
    fx = FxTable.load(as_of=as_of)
    purchase = {k: v[0] for k, v in _purchase_prices(as_of=as_of, fx=fx).items()}
    cloud = {k: v[0] for k, v in _cloud_prices(as_of=as_of, fx=fx, plain=True).items()}

    specs = []
    for acc in _plain_rows(Accelerator.objects.all()):
        specs.append(
            AcceleratorSpec(
                id=acc.slug,
                vendor=acc.vendor,
                model=acc.model,
                architecture=acc.architecture,
                form_factor=acc.form_factor,
                memory_gib=float(acc.memory_gib),
                memory_bandwidth_gb_s=float(acc.memory_bandwidth_gb_s),
                fp32_tflops=_float(acc.fp32_tflops),
                tf32_tflops_dense=_float(acc.tf32_tflops_dense),
                bf16_tflops_dense=_float(acc.bf16_tflops_dense),
                fp16_tflops_dense=_float(acc.fp16_tflops_dense),
                fp8_tflops_dense=_float(acc.fp8_tflops_dense),
                int8_tops_dense=_float(acc.int8_tops_dense),
                fp4_tflops_dense=_float(acc.fp4_tflops_dense),
                tdp_w=_float(acc.tdp_w),
                interconnect=acc.interconnect,
                interconnect_gb_s=_float(acc.interconnect_gb_s),
                pcie_gen=acc.pcie_gen,
                release_year=acc.release_year,
                min_cuda=acc.min_cuda,
                min_driver=acc.min_driver,
                purchase_price_usd=_float(purchase.get(acc.id)),
                cloud_price_per_gpu_hour_usd=_float(cloud.get(acc.id)),
            )
        )
    return specs


@dataclass(frozen=True)
class AcceleratorRow:
    """One line of the catalog page: the accelerator, its prices in USD and derived ratios."""

    accelerator: Accelerator
    purchase_price_usd: Decimal | None
    purchase_price: HardwarePrice | None
    cloud_price_per_gpu_hour_usd: Decimal | None
    cloud_offer: CloudOffer | None

    @property
    def price_per_gib_usd(self) -> Decimal | None:
        if self.purchase_price_usd is None:
            return None
        return self.purchase_price_usd / self.accelerator.memory_gib

    @property
    def price_per_bf16_tflop_usd(self) -> Decimal | None:
        if self.purchase_price_usd is None or not self.accelerator.bf16_tflops_dense:
            return None
        return self.purchase_price_usd / self.accelerator.bf16_tflops_dense


# sort key -> (attribute path, descending). Unknown values always sort last.
ACCELERATOR_SORTS = {
    "memory": ("accelerator.memory_gib", True),
    "bandwidth": ("accelerator.memory_bandwidth_gb_s", True),
    "bf16": ("accelerator.bf16_tflops_dense", True),
    "price_per_gib": ("price_per_gib_usd", False),
    "price_per_tflop": ("price_per_bf16_tflop_usd", False),
}


def _attr(row: AcceleratorRow, path: str):
    value = row
    for part in path.split("."):
        value = getattr(value, part)
    return value


def accelerator_catalog_rows(
    *,
    as_of: date,
    min_memory_gib: Decimal | None = None,
    vendor: str = "",
    form_factor_kind: str = "",
    sort: str = "memory",
) -> list[AcceleratorRow]:
    """The accelerators for the catalog page, filtered and sorted; a fixed number of queries."""
    fx = FxTable.load(as_of=as_of)
    purchase = _purchase_prices(as_of=as_of, fx=fx)
    cloud = _cloud_prices(as_of=as_of, fx=fx)
    accelerators = Accelerator.objects.all()
    if min_memory_gib is not None:
        accelerators = accelerators.filter(memory_gib__gte=min_memory_gib)
    if vendor:
        accelerators = accelerators.filter(vendor=vendor)
    if form_factor_kind:
        accelerators = accelerators.filter(form_factor_kind=form_factor_kind)
    rows = [
        AcceleratorRow(
            accelerator=acc,
            purchase_price_usd=purchase[acc.pk][0] if acc.pk in purchase else None,
            purchase_price=purchase[acc.pk][1] if acc.pk in purchase else None,
            cloud_price_per_gpu_hour_usd=cloud[acc.pk][0] if acc.pk in cloud else None,
            cloud_offer=cloud[acc.pk][1] if acc.pk in cloud else None,
        )
        for acc in accelerators
    ]
    path, descending = ACCELERATOR_SORTS.get(sort, ACCELERATOR_SORTS["memory"])
    known = [r for r in rows if _attr(r, path) is not None]
    unknown = [r for r in rows if _attr(r, path) is None]
    known.sort(key=lambda r: (_attr(r, path), r.accelerator.slug), reverse=descending)
    return known + sorted(unknown, key=lambda r: r.accelerator.slug)


def accelerator_vendors() -> list[str]:
    return list(Accelerator.objects.order_by("vendor").values_list("vendor", flat=True).distinct())


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


def jurisdiction_choices() -> list[tuple[str, str]]:
    """Jurisdictions the catalog knows (provider regions and provider countries), for the residency option."""
    from catalog.models import Provider, ProviderRegion

    codes = set(ProviderRegion.objects.values_list("jurisdiction", flat=True)) | set(
        Provider.objects.values_list("country", flat=True)
    )
    codes.add("RU")  # the 152-FZ case is always offered
    return [(c, c) for c in sorted(codes)]


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


def _plain_rows(queryset, **expressions) -> list[SimpleNamespace]:
    """The rows of a queryset as plain objects with the model's column values (attname: ``accelerator_id``)
    and the given expressions, without building model instances (a snapshot reads ~130 cloud offers)."""
    names = [f.attname for f in queryset.model._meta.concrete_fields]
    return [SimpleNamespace(**row) for row in queryset.values(*names, **expressions)]


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
