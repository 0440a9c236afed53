"""Loading the Russian price files (catalog/data/ru/, copied from shared/data/ru; see its SOURCE_README.md).

Files and what becomes of them:
- providers.csv, provider_regions.csv -> Provider, ProviderRegion (country, region jurisdiction)
- vm_shapes.csv -> CloudVmShape (Yandex VM configurations, from gpus.md)
- cloud_gpu_offers_ru.csv, onprem_gpu_server_prices_ru.csv, power_and_colo_ru.csv -> PublishedPrice,
  each row as published (component prices stay components; catalog.compose builds VM prices)
- fx_cbr.csv -> ExchangeRate (1 <currency> = rate RUB) when the catalog lacks that date
- dedicated_gpu_servers_ru.csv: header only in the data (no offer found); rows would be refused
  until a GPU model can be linked, so an empty file is expected.

Every row is validated first; any error stops the load and nothing is written (one transaction).
Idempotent: rows are upserted by natural key and a second run reports them unchanged.

Rules applied to the published rows (docs/CATALOG.md):
- `includes_vat` "unknown" stays unknown (NULL). A provider price (cloud_gpu_offers_ru) needs its
  `valid_from` and `source_url`; it may be empty only when the notes say the source is undated, and
  then stays undated (NULL).
- vm_shapes.csv: a shape whose GPU the provider does not name links an accelerator only with an
  `accelerator_inference` ("inferred: ... Rule: ..."), shown in every plan that uses the shape.
- A row whose notes mark it STALE, or OLDER (superseded), is stale with the note as the reason.
  A superseded component row ends (valid_to) where the newest dated row of the same provider,
  platform, component and billing starts.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.db import transaction

from catalog.choices import Currency, PriceBilling, PriceComponent
from catalog.models import (
    Accelerator,
    CloudVmShape,
    ExchangeRate,
    Provider,
    ProviderRegion,
    PublishedPrice,
)

DEFAULT_DIR = Path(__file__).resolve().parent / "data" / "ru"
COMPONENTS = {
    "gpu": PriceComponent.GPU,
    "vgpu": PriceComponent.VGPU,  # a fraction of a V100 (2022 table); no VM shape uses it here
    "vcpu_100pct": PriceComponent.VCPU,
    "ram_1gb": PriceComponent.RAM_GIB,
    "gpu_cluster_per_vm": PriceComponent.GPU_CLUSTER_PER_VM,
}
# GPU names of whole-configuration rows that name exactly one catalog variant. DataSphere's
# "NVIDIA V100" / "NVIDIA A100" do not say the memory or form factor: not linked.
GPU_NAMES = {"NVIDIA T4": "nvidia-t4-16gb"}
PLATFORM_RE = re.compile(r"platform=([a-z0-9-]+)")
COMPONENT_RE = re.compile(r"component=([a-z0-9_]+)")
REGION_RE = re.compile(r"\b([a-z]{2,}-[a-z]+\d)\b")


class RuPriceError(Exception):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass
class _Reader:
    label: str
    rows: list[tuple[int, dict]]


@dataclass
class _Out:
    errors: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)


def _read(path: Path, required: list[str], errors: list[str]) -> _Reader | None:
    label = path.name
    if not path.exists():
        errors.append(f"{label}: file not found in {path.parent}")
        return None
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        errors.append(f"{label}: the file is not UTF-8")
        return None
    if not text.strip():
        errors.append(f"{label}: the file is empty (expected a header row)")
        return None
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    rows = []
    try:
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            errors.append(f"{label}: missing column(s) {', '.join(missing)}")
            return None
        for row in reader:
            if None in row:
                errors.append(f"{label}, line {reader.line_num}: more fields than the header")
                continue
            if any((v or "").strip() for v in row.values()):
                rows.append((reader.line_num, {k: (v or "").strip() for k, v in row.items()}))
    except csv.Error as exc:
        errors.append(f"{label}, line {reader.line_num}: malformed CSV ({exc})")
        return None
    return _Reader(label, rows)


class _Cells:
    def __init__(self, label: str, line: int, row: dict, errors: list[str]):
        self.label, self.line, self.row, self.errors = label, line, row, errors

    def err(self, column: str, message: str) -> None:
        self.errors.append(f"{self.label}, line {self.line}, column {column}: {message}")

    def text(self, column: str, *, required: bool = False) -> str:
        value = self.row.get(column, "")
        if required and not value:
            self.err(column, "a value is required")
        return value

    def dec(self, column: str, *, required: bool = False, positive: bool = False) -> Decimal | None:
        raw = self.text(column, required=required)
        if not raw:
            return None
        try:
            value = Decimal(raw)
        except InvalidOperation:
            self.err(column, f"{raw!r} is not a number")
            return None
        if not value.is_finite() or (positive and value <= 0) or value < 0:
            self.err(column, f"{raw!r} must be {'greater than 0' if positive else 'at least 0'}")
            return None
        return value

    def integer(self, column: str, *, required: bool = False) -> int | None:
        value = self.dec(column, required=required, positive=True)
        if value is not None and value != value.to_integral_value():
            self.err(column, f"{value} is not a whole number")
            return None
        return None if value is None else int(value)

    def day(self, column: str, *, required: bool = False) -> date | None:
        raw = self.text(column, required=required)
        if not raw:
            return None
        try:
            return date.fromisoformat(raw)
        except ValueError:
            self.err(column, f"{raw!r} is not a date YYYY-MM-DD")
            return None

    def tristate(self, column: str) -> bool | None:
        raw = self.text(column, required=True).lower()
        if raw in ("true", "false", "unknown"):
            return {"true": True, "false": False, "unknown": None}[raw]
        if raw:
            self.err(column, f"{raw!r} is not one of true, false, unknown")
        return None

    def boolean(self, column: str) -> bool:
        raw = self.text(column, required=True).lower()
        if raw not in ("true", "false"):
            if raw:
                self.err(column, f"{raw!r} is not true or false")
            return False
        return raw == "true"

    def currency(self, column: str = "currency") -> str:
        raw = self.text(column, required=True)
        if raw and raw not in Currency.values:
            self.err(column, f"{raw!r} is not one of {', '.join(Currency.values)}")
        return raw

    def country(self, column: str) -> str:
        raw = self.text(column, required=True)
        if raw and not (len(raw) == 2 and raw.isalpha() and raw.isupper()):
            self.err(column, f"{raw!r} is not a two-letter ISO country code")
        return raw

    def source(self) -> dict:
        return {
            "source_title": self.text("source_title", required=True),
            "source_url": self.text("source_url", required=True),
            "retrieved_on": self.day("retrieved_on", required=True),
        }


def _stale(notes: str) -> str:
    head = notes.split(";")[0].split(". ")[0].strip()
    if "stale" in notes.lower():
        return f"marked stale in the source file: {head}"
    if notes.upper().startswith("OLDER"):
        return f"superseded by a newer price in the same file: {head}"
    return ""


def _published(c: _Cells, *, dataset: str, accs: dict) -> dict:
    """One row of cloud_gpu_offers_ru / onprem_gpu_server_prices_ru / power_and_colo_ru as PublishedPrice fields."""
    notes = c.text("notes")
    common = {"dataset": dataset, "notes": notes, "currency": c.currency(), **c.source()}
    common["includes_vat"] = c.tristate("includes_vat")
    common["valid_from"] = c.day("valid_from")
    if dataset == "cloud_gpu_offers_ru" and not c.text("valid_from") and "undated" not in notes.lower():
        # a provider's price without its date: refused unless the row says the source shows none
        c.err("valid_from", "a value is required (the price list's date; if the source shows none, "
                            "say 'undated' in notes)")
    common["source_date"] = common["valid_from"]
    common["price"] = c.dec("price", required=True, positive=True)
    reason = _stale(notes)
    common.update(stale=bool(reason), stale_reason=reason)
    if dataset == "cloud_gpu_offers_ru":
        item = c.text("instance_or_config", required=True)
        platform = PLATFORM_RE.search(item)
        comp = COMPONENT_RE.search(item)
        if comp and comp.group(1) not in COMPONENTS:
            c.err("instance_or_config", f"unknown component {comp.group(1)!r} (expected {', '.join(COMPONENTS)})")
        billing = c.text("billing", required=True)
        if billing and billing not in PriceBilling.values:
            c.err("billing", f"{billing!r} is not one of {', '.join(PriceBilling.values)}")
        gpu_model = c.text("gpu_model")
        region_text = c.text("region")
        region = REGION_RE.search(region_text)
        return {
            **common,
            "provider": c.text("provider", required=True),
            "product": c.text("product", required=True),
            "region": region.group(1) if region else region_text,
            "item": item,
            "platform": platform.group(1) if platform else "",
            "component": COMPONENTS.get(comp.group(1), PriceComponent.INSTANCE) if comp else PriceComponent.INSTANCE,
            "gpu_model": gpu_model,
            "accelerator": None if comp else accs.get(GPU_NAMES.get(gpu_model, "")),
            "gpu_count": c.dec("gpu_count", positive=True),
            "gpu_memory_gib": c.dec("gpu_memory_gib", positive=True),
            "vcpus": c.integer("vcpus"),
            "ram_gib": c.dec("ram_gib", positive=True),
            "quantity": 1,
            "price_unit": c.text("price_unit", required=True),
            "billing": billing,
            "price_kind": "list price",
        }
    if dataset == "onprem_gpu_server_prices_ru":
        return {
            **common,
            "provider": c.text("seller_or_buyer", required=True),
            "product": c.text("product", required=True),
            "item": c.text("product", required=True),
            "component": PriceComponent.SERVER,
            "gpu_model": c.text("gpu_model"),
            "gpu_count": c.dec("gpu_count", positive=True),
            "gpu_memory_gib": c.dec("gpu_memory_gib", positive=True),
            "quantity": c.integer("quantity", required=True) or 1,
            "price_unit": c.text("price_basis", required=True),
            "billing": "",
            "price_kind": c.text("price_kind", required=True),
        }
    kind = c.text("kind", required=True)
    if kind and kind not in ("colocation", "electricity"):
        c.err("kind", f"{kind!r} is not colocation or electricity")
    return {
        **common,
        "provider": c.text("provider_or_publisher", required=True),
        "product": kind,
        "region": c.text("region"),
        "item": c.text("item", required=True),
        "component": PriceComponent.COLOCATION if kind == "colocation" else PriceComponent.ELECTRICITY,
        "price_unit": c.text("unit", required=True),
        "billing": "",
        "price_kind": "list price" if kind == "colocation" else "anecdotal",
    }


def _key(values: dict) -> str:
    return " | ".join(
        str(values.get(k) or "")
        for k in ("dataset", "provider", "product", "region", "item", "billing", "valid_from", "source_url")
    )[:400]


PUBLISHED_FILES = {
    "cloud_gpu_offers_ru": ["provider", "product", "region", "instance_or_config", "gpu_model", "price",
                            "currency", "price_unit", "billing", "includes_vat", "valid_from", "source_url"],
    "onprem_gpu_server_prices_ru": ["seller_or_buyer", "product", "gpu_model", "quantity", "price", "currency",
                                    "price_basis", "price_kind", "includes_vat", "valid_from", "source_url"],
    "power_and_colo_ru": ["kind", "region", "provider_or_publisher", "item", "price", "currency", "unit",
                          "includes_vat", "valid_from", "source_url"],
}


def load_ru_prices(*, directory: Path = DEFAULT_DIR) -> dict[str, dict[str, int]]:
    """Validate every file, then write them all in one transaction. Raises RuPriceError listing every error."""
    directory = Path(directory)
    errors: list[str] = []
    accs = {a.slug: a for a in Accelerator.objects.all()}
    providers, regions, shapes, published, fx = [], [], [], [], []

    r = _read(directory / "providers.csv", ["name", "country", "kind", "priced", "source_title", "source_url",
                                            "retrieved_on"], errors)
    for line, row in r.rows if r else ():
        c = _Cells(r.label, line, row, errors)
        providers.append({"name": c.text("name", required=True), "country": c.country("country"),
                          "kind": c.text("kind", required=True), "priced": c.boolean("priced"),
                          "source_date": c.day("source_date"), "notes": c.text("notes"), **c.source()})
    names = {p["name"] for p in providers} | set(Provider.objects.values_list("name", flat=True))
    r = _read(directory / "provider_regions.csv", ["provider", "region", "jurisdiction", "source_title",
                                                   "source_url", "retrieved_on"], errors)
    for line, row in r.rows if r else ():
        c = _Cells(r.label, line, row, errors)
        name = c.text("provider", required=True)
        if name and name not in names:
            c.err("provider", f"unknown provider {name!r} (add it to providers.csv)")
        regions.append({"provider": name, "region": c.text("region", required=True),
                        "jurisdiction": c.country("jurisdiction"), "location": c.text("location"),
                        "source_date": c.day("source_date"), "notes": c.text("notes"), **c.source()})
    r = _read(directory / "vm_shapes.csv", ["provider", "platform", "gpu_count", "vram_gib_total", "vcpus",
                                            "ram_gib", "accelerator", "cluster_capable"], errors)
    for line, row in r.rows if r else ():
        c = _Cells(r.label, line, row, errors)
        slug = c.text("accelerator")
        if slug and slug not in accs:
            c.err("accelerator", f"unknown accelerator {slug!r} (load the catalog first)")
        inference = c.text("accelerator_inference")
        if inference and not slug:
            c.err("accelerator_inference", "an inference without an accelerator (fill in accelerator)")
        elif inference and not inference.startswith("inferred: "):
            c.err("accelerator_inference", "must start with 'inferred: ' and state the rule")
        shapes.append({"provider": c.text("provider", required=True), "platform": c.text("platform", required=True),
                       "platform_name": c.text("platform_name"), "gpu_count": c.integer("gpu_count", required=True),
                       "vram_gib_total": c.dec("vram_gib_total", required=True, positive=True),
                       "vcpus": c.integer("vcpus", required=True), "ram_gib": c.dec("ram_gib", required=True, positive=True),
                       "accelerator": accs.get(slug), "accelerator_inference": inference,
                       "cluster_capable": c.boolean("cluster_capable"),
                       "source_date": c.day("source_date"), "notes": c.text("notes"), **c.source()})
    for dataset, required in PUBLISHED_FILES.items():
        r = _read(directory / f"{dataset}.csv", required, errors)
        for line, row in r.rows if r else ():
            c = _Cells(r.label, line, row, errors)
            published.append((r.label, line, _published(c, dataset=dataset, accs=accs)))
    r = _read(directory / "dedicated_gpu_servers_ru.csv", ["provider", "gpu_model", "price", "currency"], errors)
    if r and r.rows:
        errors.append(f"{r.label}, line {r.rows[0][0]}: dedicated server offers are not loaded from this file yet "
                      "(the data holds none); add them to catalog/data/dedicated_server_offers.csv with an accelerator")
    r = _read(directory / "fx_cbr.csv", ["date", "currency", "rate", "source_url", "source_title", "retrieved_on"],
              errors)
    for line, row in r.rows if r else ():
        c = _Cells(r.label, line, row, errors)
        cur = c.currency("currency")
        if cur == Currency.RUB:
            c.err("currency", "the rate is of a currency against RUB")
        fx.append({"rate_date": c.day("date", required=True), "base": cur, "quote": Currency.RUB,
                   "rate": c.dec("rate", required=True, positive=True), "notes": c.text("notes"), **c.source()})

    seen: dict[str, str] = {}
    for label, line, values in published:
        key = _key(values)
        if key in seen:
            errors.append(f"{label}, line {line}: duplicate of {seen[key]}")
        seen[key] = f"{label}, line {line}"
    if errors:
        raise RuPriceError(errors)
    _supersede(published)
    counts: dict[str, dict[str, int]] = {}
    with transaction.atomic():
        for p in providers:
            _upsert(counts, "providers", Provider, {"name": p.pop("name")}, p)
        by_name = {p.name: p for p in Provider.objects.all()}
        for g in regions:
            prov = by_name[g.pop("provider")]
            _upsert(counts, "provider_regions", ProviderRegion, {"provider": prov, "region": g.pop("region")}, g)
        for s in shapes:
            key = {k: s.pop(k) for k in ("provider", "platform", "gpu_count", "vcpus")}
            _upsert(counts, "vm_shapes", CloudVmShape, key, s)
        for _label, _line, values in published:
            _upsert(counts, values["dataset"], PublishedPrice, {"natural_key": _key(values)}, values)
        for f in fx:
            key = {k: f.pop(k) for k in ("rate_date", "base", "quote")}
            existing = ExchangeRate.objects.filter(**key).first()
            bucket = counts.setdefault("fx_cbr", {"created": 0, "updated": 0, "unchanged": 0})
            if existing is None:
                ExchangeRate.objects.create(**key, source_date=key["rate_date"], **f)
                bucket["created"] += 1
            else:
                bucket["unchanged"] += 1  # the catalog's own row for that date stays (same official rate)
    return counts


def _supersede(published: list[tuple[str, int, dict]]) -> None:
    newest: dict[tuple, date] = {}
    for _l, _n, v in published:
        if v["platform"] if "platform" in v else False:
            k = (v["provider"], v["platform"], v["component"], v["billing"])
            if v["valid_from"] and not v["stale"] and (k not in newest or v["valid_from"] > newest[k]):
                newest[k] = v["valid_from"]
    for _l, _n, v in published:
        if v.get("platform") and v["stale"] and v["stale_reason"].startswith("superseded"):
            k = (v["provider"], v["platform"], v["component"], v["billing"])
            v["valid_to"] = newest.get(k)


def _upsert(counts: dict, name: str, model, key: dict, values: dict) -> None:
    bucket = counts.setdefault(name, {"created": 0, "updated": 0, "unchanged": 0})
    obj = model.objects.filter(**key).first()
    if obj is None:
        obj = model(**key, **values)
        obj.full_clean(validate_unique=False)
        obj.save()
        bucket["created"] += 1
        return
    changed = [k for k, v in values.items() if getattr(obj, k) != v]
    if not changed:
        bucket["unchanged"] += 1
        return
    for k in changed:
        setattr(obj, k, values[k])
    obj.full_clean(validate_unique=False)
    obj.save()
    bucket["updated"] += 1
