"""SkyPilot service catalog CSVs (github.com/skypilot-org/skypilot-catalog, catalogs/v*/<cloud>/vms.csv).

Columns read: InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, SpotPrice,
Region, AvailabilityZone (GpuInfo and others are ignored). One row per availability zone; the
importer keeps one offer per (region, instance type, GPU): the on-demand Price (it must agree
across the region's zones) and the lowest SpotPrice of the zones. Rows without an accelerator are
CPU instances and are skipped; a GPU row without InstanceType is a GPU-only price (GCP attaches
GPUs to a host VM) and is stored as `accelerator_only`. Prices are USD per hour without VAT.

A price that changed closes the open row (valid_to = import day) and starts a new one, so the
price history stays; an unchanged price is left alone (idempotent).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import DatabaseError, transaction
from django.utils import timezone

from catalog.choices import CloudPriceBasis, Currency, FeedKind, ImportStatus
from catalog.feeds.fetch import FeedError, fetch
from catalog.feeds.gpu_names import accelerator_for
from catalog.models import Accelerator, CloudOffer, FeedImportRun

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region")

@dataclass
class _Offer:
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    vcpus: int | None
    ram_gib: Decimal | None
    on_demand: Decimal | None
    spot: Decimal | None
    line: int


def _dec(text: str, *, where: str, column: str) -> Decimal | None:
    t = (text or "").strip()
    if t == "":
        return None
    try:
        d = Decimal(t)
    except InvalidOperation:
        raise FeedError(f"{where}, column {column}: {t!r} is not a number") from None
    if not d.is_finite() or d < 0:
        raise FeedError(f"{where}, column {column}: {t!r} must be a number >= 0")
    return d


def parse_vms_csv(body: bytes, *, label: str) -> list[_Offer]:
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FeedError(f"{label}: not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise FeedError(f"{label}: not a SkyPilot vms.csv, missing column(s) {', '.join(missing)}")
        offers: dict[tuple, _Offer] = {}
        for row in reader:
            where = f"{label}, line {reader.line_num}"
            if None in row:
                raise FeedError(f"{where}: more fields than the header")
            gpu = (row.get("AcceleratorName") or "").strip()
            if not gpu:
                continue  # a CPU instance
            count_d = _dec(row.get("AcceleratorCount", ""), where=where, column="AcceleratorCount")
            if count_d is None or count_d <= 0 or count_d != count_d.to_integral_value():
                raise FeedError(f"{where}, column AcceleratorCount: must be a whole number > 0")
            region = (row.get("Region") or "").strip()
            if not region:
                raise FeedError(f"{where}, column Region: a value is required")
            itype = (row.get("InstanceType") or "").strip()
            price = _dec(row.get("Price", ""), where=where, column="Price")
            spot = _dec(row.get("SpotPrice", ""), where=where, column="SpotPrice")
            vcpus = _dec(row.get("vCPUs", ""), where=where, column="vCPUs")
            ram = _dec(row.get("MemoryGiB", ""), where=where, column="MemoryGiB")
            key = (region, itype, gpu, int(count_d))
            o = offers.get(key)
            if o is None:
                offers[key] = _Offer(region, itype, gpu, int(count_d), int(vcpus) if vcpus is not None else None,
                                     ram, price, spot, reader.line_num)
                continue
            if price is not None and o.on_demand is not None and price != o.on_demand:
                raise FeedError(
                    f"{where}: on-demand Price {price} differs from {o.on_demand} (line {o.line}) "
                    f"for {itype or gpu} in {region}"
                )
            o.on_demand = o.on_demand if o.on_demand is not None else price
            if spot is not None:
                o.spot = spot if o.spot is None else min(o.spot, spot)
    except csv.Error as exc:
        raise FeedError(f"{label}, line {reader.line_num}: malformed CSV ({exc})") from None
    result = [o for o in offers.values() if (o.on_demand or 0) > 0 or (o.spot or 0) > 0]
    if not result:
        raise FeedError(f"{label}: no GPU offer with a price")
    return result


def import_skypilot_vms(
    *, source: str, provider: str, timeout_s: float = 60.0, today: dt.date | None = None
) -> FeedImportRun:
    run = FeedImportRun.objects.create(kind=FeedKind.SKYPILOT, source=f"{provider}: {source}")
    today = today or timezone.localdate()
    try:
        offers = parse_vms_csv(fetch(source, timeout_s=timeout_s), label=source)
        accs = {a.slug: a for a in Accelerator.objects.all()}
        counts = {"created": 0, "updated": 0, "unchanged": 0, "closed": 0}
        with transaction.atomic():
            for o in offers:
                _upsert(o, provider=provider, source=source, today=today, accs=accs, counts=counts)
    except FeedError as exc:
        return _finish(run, status=ImportStatus.FAILED, error=str(exc))
    except DatabaseError as exc:
        return _finish(run, status=ImportStatus.FAILED, error=f"database error, nothing written ({exc})")
    return _finish(run, status=ImportStatus.DONE, counts=counts)


def _upsert(o: _Offer, *, provider: str, source: str, today: dt.date, accs: dict, counts: dict) -> None:
    itype = o.instance_type or f"{o.gpu_model} x{o.gpu_count} (GPU only)"
    od = o.on_demand if o.on_demand else None  # 0.0 is "no price" in SkyPilot catalogs
    spot = o.spot if o.spot else None
    slug = accelerator_for(gpu_model=o.gpu_model, cloud=provider, instance_type=o.instance_type)
    open_rows = CloudOffer.objects.filter(
        provider=provider, region=o.region, instance_type=itype, source_gpu_model=o.gpu_model,
        gpu_count=o.gpu_count, valid_to__isnull=True,
    )
    current = open_rows.order_by("-valid_from").first()
    values = {
        "accelerator": accs.get(slug),
        "vcpus": o.vcpus,
        "ram_gib": o.ram_gib,
        "price_on_demand_per_hour": od,
        "price_spot_per_hour": spot,
        "price_basis": CloudPriceBasis.INSTANCE if o.instance_type else CloudPriceBasis.ACCELERATOR_ONLY,
        "currency": Currency.USD,
        "includes_vat": False,
        "source_title": f"SkyPilot service catalog ({provider})",
        "source_url": source,
        "source_date": None,
        "retrieved_on": today,
        "notes": "imported by import_skypilot_catalog; spot = min over the region's zones",
    }
    if current is not None and current.price_on_demand_per_hour == od and current.price_spot_per_hour == spot:
        counts["unchanged"] += 1
        return
    if current is not None and current.valid_from == today:
        for k, v in values.items():
            setattr(current, k, v)
        current.full_clean()
        current.save()
        counts["updated"] += 1
        return
    if current is not None:
        current.valid_to = today
        current.save(update_fields=["valid_to"])
        counts["closed"] += 1
    row = CloudOffer(
        provider=provider, region=o.region, instance_type=itype, source_gpu_model=o.gpu_model,
        gpu_count=o.gpu_count, valid_from=today, **values,
    )
    try:
        row.full_clean()
    except Exception as exc:  # ValidationError: a row the catalog's constraints refuse
        raise FeedError(f"{source}, line {o.line}: {exc}") from None
    row.save()
    counts["created"] += 1


def _finish(run: FeedImportRun, *, status: str, error: str = "", counts: dict | None = None) -> FeedImportRun:
    run.status = status
    run.error = error
    run.counts = counts or {}
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "counts", "finished_at"])
    return run
