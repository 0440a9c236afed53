"""Which columns each catalog file has, and how a cell becomes a model value.

One `Table` per file (`<name>.csv`, or a sheet `<name>` of an .xlsx workbook). The same
description drives the loader (catalog.importers) and the exporter, so export then import
gives the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from catalog import models as m
from catalog.choices import (
    CloudPriceBasis,
    Currency,
    FormFactorKind,
    HardwareItemKind,
    NetworkTechnology,
    StorageMedia,
    Verification,
)

TRUE = {"true", "yes", "y", "1"}
FALSE = {"false", "no", "n", "0"}


class CellError(ValueError):
    """A cell that cannot be read; the message says why."""


@dataclass(frozen=True)
class Col:
    name: str  # column header in the file
    kind: str  # str | dec | int | bool | date | choice | fk
    required: bool = False  # the column must be present and the cell non-empty
    field: str = ""  # model field, defaults to name
    choices: tuple[str, ...] = ()
    fk: type | None = None  # model looked up by slug
    positive: bool = False  # value must be > 0
    non_negative: bool = False

    @property
    def model_field(self) -> str:
        return self.field or self.name

    def parse(self, raw: str):
        text = raw.strip()
        if text == "":
            if self.required:
                raise CellError("a value is required")
            return "" if self.kind == "str" else None
        if self.kind == "str":
            return text
        if self.kind == "choice":
            if text not in self.choices:
                raise CellError(f"{text!r} is not one of {', '.join(self.choices)}")
            return text
        if self.kind == "bool":
            if text.lower() in TRUE:
                return True
            if text.lower() in FALSE:
                return False
            raise CellError(f"{text!r} is not true/false")
        if self.kind == "date":
            try:
                return date.fromisoformat(text)
            except ValueError:
                raise CellError(f"{text!r} is not a date YYYY-MM-DD") from None
        if self.kind in ("dec", "int"):
            try:
                value = Decimal(text)
            except InvalidOperation:
                raise CellError(f"{text!r} is not a number") from None
            if not value.is_finite():
                raise CellError(f"{text!r} is not a finite number")
            if self.kind == "int":
                if value != value.to_integral_value():
                    raise CellError(f"{text!r} is not a whole number")
                value = int(value)
            if self.positive and value <= 0:
                raise CellError(f"must be greater than 0 (got {text})")
            if self.non_negative and value < 0:
                raise CellError(f"must not be negative (got {text})")
            return value
        if self.kind == "fk":
            return text  # resolved to a row by the importer
        raise AssertionError(self.kind)

    def format(self, value) -> str:
        if value is None:
            return ""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "date":
            return value.isoformat()
        if self.kind == "dec":
            text = format(value, "f")
            return text.rstrip("0").rstrip(".") if "." in text else text
        return str(value)


@dataclass(frozen=True)
class Table:
    name: str
    model: type
    columns: tuple[Col, ...]
    key: tuple[str, ...]  # model fields forming the natural key
    order_by: tuple[str, ...] = field(default=())

    @property
    def by_name(self) -> dict[str, Col]:
        return {c.name: c for c in self.columns}


def _choices(tc) -> tuple[str, ...]:
    return tuple(tc.values)


SOURCE = (
    Col("source_title", "str", required=True),
    Col("source_url", "str", required=True),
    Col("source_date", "date"),
    Col("retrieved_on", "date", required=True),
    Col("notes", "str"),
)
PRICED = (
    Col("currency", "choice", required=True, choices=_choices(Currency)),
    Col("includes_vat", "bool", required=True),
    Col("valid_from", "date", required=True),
    Col("valid_to", "date"),
)


def _money(name: str, required: bool = False) -> Col:
    return Col(name, "dec", required=required, positive=True)


TABLES: tuple[Table, ...] = (
    Table(
        "vat_rates", m.VatRate,
        (
            Col("country", "str", required=True),
            Col("rate_percent", "dec", required=True, non_negative=True),
            Col("valid_from", "date", required=True),
            Col("valid_to", "date"),
            *SOURCE,
        ),
        key=("country", "valid_from"),
    ),
    Table(
        "exchange_rates", m.ExchangeRate,
        (
            Col("rate_date", "date", required=True),
            Col("base", "choice", required=True, choices=_choices(Currency)),
            Col("quote", "choice", required=True, choices=_choices(Currency)),
            Col("rate", "dec", required=True, positive=True),
            *SOURCE,
        ),
        key=("rate_date", "base", "quote"),
    ),
    Table(
        "electricity_tariffs", m.ElectricityTariff,
        (
            Col("country", "str", required=True),
            Col("region", "str", required=True),
            Col("consumer_class", "str", required=True),
            _money("price_per_kwh", required=True),
            *PRICED,
            *SOURCE,
        ),
        key=("country", "region", "consumer_class", "valid_from"),
    ),
    Table(
        "accelerators", m.Accelerator,
        (
            Col("id", "str", required=True, field="slug"),
            Col("vendor", "str", required=True),
            Col("model", "str", required=True),
            Col("architecture", "str", required=True),
            Col("form_factor", "str", required=True),
            Col("form_factor_kind", "choice", required=True, choices=_choices(FormFactorKind)),
            Col("memory_gib", "dec", required=True, positive=True),
            Col("memory_type", "str"),
            Col("memory_bandwidth_gb_s", "dec", required=True, positive=True),
            *(
                Col(name, "dec", positive=True)
                for name in (
                    "fp32_tflops", "tf32_tflops_dense", "bf16_tflops_dense", "fp16_tflops_dense",
                    "fp8_tflops_dense", "int8_tops_dense", "fp4_tflops_dense",
                )
            ),
            Col("tdp_w", "int", positive=True),
            Col("interconnect", "str"),
            Col("interconnect_gb_s", "dec", positive=True),
            Col("pcie_gen", "int", positive=True),
            Col("release_year", "int", positive=True),
            Col("min_cuda", "str"),
            Col("min_driver", "str"),
            Col("source_title", "str", required=True),
            Col("source_where", "str", required=True, field="source_url"),
            Col("source_date", "date"),
            Col("retrieved_on", "date", required=True),
            Col("verified", "choice", required=True, choices=_choices(Verification)),
            Col("notes", "str"),
        ),
        key=("slug",),
    ),
    Table(
        "cpus", m.Cpu,
        (
            Col("id", "str", required=True, field="slug"),
            Col("vendor", "str", required=True),
            Col("model", "str", required=True),
            Col("cores", "int", required=True, positive=True),
            Col("threads", "int", positive=True),
            Col("base_clock_ghz", "dec", positive=True),
            Col("max_boost_clock_ghz", "dec", positive=True),
            Col("tdp_w", "int", positive=True),
            Col("memory_channels", "int", positive=True),
            Col("pcie_gen", "int", positive=True),
            Col("pcie_lanes", "int", positive=True),
            Col("release_year", "int", positive=True),
            *SOURCE,
        ),
        key=("slug",),
    ),
    Table(
        "server_platforms", m.ServerPlatform,
        (
            Col("id", "str", required=True, field="slug"),
            Col("vendor", "str", required=True),
            Col("model", "str", required=True),
            Col("gpu_slots", "int", required=True, positive=True),
            Col("gpu_form_factor_kind", "choice", required=True, choices=_choices(FormFactorKind)),
            Col("included_accelerator", "fk", fk=m.Accelerator),
            Col("cpu_sockets", "int", required=True, positive=True),
            Col("included_cpu", "fk", fk=m.Cpu),
            Col("max_cpu_cores_total", "int", positive=True),
            Col("max_ram_gib", "int", positive=True),
            Col("pcie_gen", "int", positive=True),
            Col("pcie_x16_slots", "int", non_negative=True),
            Col("pcie_lanes", "int", positive=True),
            Col("nic_options", "str"),
            Col("max_power_w", "int", positive=True),
            Col("psu_count", "int", positive=True),
            Col("psu_unit_w", "int", positive=True),
            Col("rack_units", "int", non_negative=True),
            Col("has_nvlink", "bool"),
            Col("has_nvswitch", "bool"),
            *SOURCE,
        ),
        key=("slug",),
    ),
    Table(
        "storage_tiers", m.StorageTier,
        (
            Col("id", "str", required=True, field="slug"),
            Col("name", "str", required=True),
            Col("media", "choice", required=True, choices=_choices(StorageMedia)),
            _money("purchase_price_per_tb"),
            _money("service_price_per_gb_month"),
            Col("read_throughput_mb_s", "int", positive=True),
            Col("write_throughput_mb_s", "int", positive=True),
            Col("capacity_tb", "dec", positive=True),
            *PRICED,
            *SOURCE,
        ),
        key=("slug", "valid_from"),
    ),
    Table(
        "network_options", m.NetworkOption,
        (
            Col("id", "str", required=True, field="slug"),
            Col("name", "str", required=True),
            Col("technology", "choice", required=True, choices=_choices(NetworkTechnology)),
            Col("speed_gbit_s", "int", required=True, positive=True),
            _money("nic_price"),
            _money("switch_port_price"),
            _money("cable_price"),
            *PRICED,
            *SOURCE,
        ),
        key=("slug", "valid_from"),
    ),
    Table(
        "cloud_offers", m.CloudOffer,
        (
            Col("provider", "str", required=True),
            Col("region", "str", required=True),
            Col("instance_type", "str", required=True),
            Col("source_gpu_model", "str", required=True),
            Col("accelerator", "fk", fk=m.Accelerator),
            Col("gpu_count", "int", required=True, positive=True),
            Col("gpu_memory_gib", "dec", positive=True),
            Col("vcpus", "int", positive=True),
            Col("ram_gib", "dec", positive=True),
            Col("local_disk_gb", "int", non_negative=True),
            _money("price_on_demand_per_hour"),
            _money("price_spot_per_hour"),
            _money("price_commit_1y_per_hour"),
            _money("price_commit_3y_per_hour"),
            Col("price_basis", "choice", required=True, choices=_choices(CloudPriceBasis)),
            Col("billing_granularity_seconds", "int", positive=True),
            Col("flagged", "bool", required=True),
            Col("flag_reason", "str"),
            *PRICED,
            *SOURCE,
        ),
        key=("provider", "region", "instance_type", "source_gpu_model", "gpu_count", "valid_from"),
    ),
    Table(
        "dedicated_server_offers", m.DedicatedServerOffer,
        (
            Col("provider", "str", required=True),
            Col("plan_name", "str", required=True),
            Col("location", "str", required=True),
            Col("accelerator", "fk", required=True, fk=m.Accelerator),
            Col("gpu_count", "int", required=True, positive=True),
            Col("cpu_description", "str"),
            Col("ram_gib", "int", positive=True),
            Col("disk_description", "str"),
            _money("price_per_month", required=True),
            _money("setup_fee"),
            *PRICED,
            *SOURCE,
        ),
        key=("provider", "plan_name", "location", "valid_from"),
    ),
    Table(
        "hardware_prices", m.HardwarePrice,
        (
            Col("item_kind", "choice", required=True, choices=_choices(HardwareItemKind)),
            Col("item", "str", required=True),  # slug of the accelerator / server platform / CPU
            _money("price", required=True),
            Col("price_kind", "str", required=True),
            *PRICED,
            *SOURCE,
        ),
        key=("accelerator", "server_platform", "cpu", "valid_from", "currency", "price_kind"),
    ),
)

TABLES_BY_NAME = {t.name: t for t in TABLES}
ITEM_MODELS = {
    HardwareItemKind.ACCELERATOR.value: ("accelerator", m.Accelerator),
    HardwareItemKind.SERVER_PLATFORM.value: ("server_platform", m.ServerPlatform),
    HardwareItemKind.CPU.value: ("cpu", m.Cpu),
}
