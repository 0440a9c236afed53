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

from django.db.models import Q

from catalog.models import (
    Accelerator,
    CloudOffer,
    ExchangeRate,
    HardwarePrice,
    VatRate,
)
from planner.engine.catalog_csv import load_accelerator_aliases
from planner.engine.hardware import AcceleratorSpec

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


def jurisdiction_choices() -> list[tuple[str, str]]:
    """Jurisdictions the catalog knows (provider regions and provider countries), for the residency option."""
    from catalog.models import Provider, ProviderRegion

    codes = set(ProviderRegion.objects.values_list("jurisdiction", flat=True)) | set(
        Provider.objects.values_list("country", flat=True)
    )
    codes.add("RU")  # the 152-FZ case is always offered
    return [(c, c) for c in sorted(codes)]


def _plain_rows(queryset, **expressions) -> list[SimpleNamespace]:
    """The rows of a queryset as plain objects with the model's column values (attname: ``accelerator_id``)
    and the given expressions, without building model instances (a snapshot reads ~130 cloud offers)."""
    names = [f.attname for f in queryset.model._meta.concrete_fields]
    return [SimpleNamespace(**row) for row in queryset.values(*names, **expressions)]
