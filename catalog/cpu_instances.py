"""CPU-only cloud instances (catalog/data/cpu_instances.csv): the server an agent on a model API
runs on (its orchestration, vector database and queues; issue 20, 8.). Each row is one instance
type with its on-demand price, its source and the date it is valid from; read into the price
snapshot, so a plan keeps the prices it was made with."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal, InvalidOperation
from pathlib import Path

PATH = Path(__file__).resolve().parent / "data" / "cpu_instances.csv"
COLUMNS = [
    "provider", "region", "instance_type", "vcpus", "physical_cores", "ram_gib", "price_on_demand_per_hour",
    "currency", "includes_vat", "valid_from", "valid_to", "source_title", "source_url", "retrieved_on", "notes",
]


class CpuInstanceFileError(ValueError):
    pass


def read_cpu_instances(path: Path = PATH) -> list[dict]:
    """Every row, checked (a bad row raises CpuInstanceFileError naming its line and column)."""
    rows: list[dict] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise CpuInstanceFileError(f"{path.name}: columns must be {COLUMNS}")
        for n, raw in enumerate(reader, start=2):
            where = f"{path.name}:{n}"
            try:
                row = {
                    "provider": raw["provider"].strip(),
                    "region": raw["region"].strip(),
                    "instance_type": raw["instance_type"].strip(),
                    "vcpus": int(raw["vcpus"]),
                    "physical_cores": int(raw["physical_cores"]),
                    "ram_gib": str(Decimal(raw["ram_gib"])),
                    "price_on_demand_per_hour": str(Decimal(raw["price_on_demand_per_hour"])),
                    "currency": raw["currency"].strip(),
                    "includes_vat": {"true": True, "false": False}[raw["includes_vat"]],
                    "valid_from": dt.date.fromisoformat(raw["valid_from"]).isoformat(),
                    "valid_to": dt.date.fromisoformat(raw["valid_to"]).isoformat() if raw["valid_to"] else None,
                    "source": f"{raw['source_title'].strip()}: {raw['source_url'].strip()}",
                }
            except (KeyError, ValueError, InvalidOperation) as exc:
                raise CpuInstanceFileError(f"{where}: {exc}") from exc
            if not (row["provider"] and row["instance_type"] and raw["source_url"].strip()):
                raise CpuInstanceFileError(f"{where}: provider, instance_type and source_url are required")
            if row["vcpus"] < 1 or row["physical_cores"] < 1 or Decimal(row["price_on_demand_per_hour"]) <= 0:
                raise CpuInstanceFileError(f"{where}: vcpus, physical_cores and the price must be positive")
            rows.append(row)
    return rows


def cpu_instances_snapshot(*, as_of: dt.date, path: Path = PATH) -> list[dict]:
    """The rows valid at as_of (the latest valid_from per provider, region and instance type)."""
    latest: dict[tuple, dict] = {}
    for row in read_cpu_instances(path):
        if row["valid_from"] > as_of.isoformat() or (row["valid_to"] and row["valid_to"] <= as_of.isoformat()):
            continue
        key = (row["provider"], row["region"], row["instance_type"])
        if key not in latest or latest[key]["valid_from"] < row["valid_from"]:
            latest[key] = row
    return list(latest.values())
