"""Read catalog/data/accelerators.csv into AcceleratorSpec values (pure: csv module only).

Used by unit tests, benchmarks and the CLI fallback when the database catalog is empty.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .hardware import AcceleratorSpec

_FLOATS = (
    "memory_gib", "memory_bandwidth_gb_s", "fp32_tflops", "tf32_tflops_dense", "bf16_tflops_dense",
    "fp16_tflops_dense", "fp8_tflops_dense", "int8_tops_dense", "fp4_tflops_dense", "tdp_w",
    "interconnect_gb_s", "purchase_price_usd", "cloud_price_per_gpu_hour_usd",
)


def _num(value: str | None) -> float | None:
    if value is None or not value.strip():
        return None
    return float(value)


def load_accelerators_csv(path: str | Path) -> list[AcceleratorSpec]:
    out: list[AcceleratorSpec] = []
    with Path(path).open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            kwargs = {k: _num(row.get(k)) for k in _FLOATS if k in row}
            if kwargs.get("memory_gib") is None or kwargs.get("memory_bandwidth_gb_s") is None:
                continue  # the engine cannot size on a part whose memory is unknown
            out.append(
                AcceleratorSpec(
                    id=row["id"],
                    vendor=row.get("vendor", ""),
                    model=row.get("model", ""),
                    architecture=row.get("architecture", ""),
                    form_factor=row.get("form_factor", ""),
                    interconnect=row.get("interconnect", ""),
                    pcie_gen=int(row["pcie_gen"]) if (row.get("pcie_gen") or "").strip() else None,
                    release_year=int(row["release_year"]) if (row.get("release_year") or "").strip() else None,
                    min_cuda=row.get("min_cuda", "") or "",
                    min_driver=row.get("min_driver", "") or "",
                    **kwargs,
                )
            )
    return out


def load_accelerator_aliases(path: str | Path) -> dict[str, str]:
    """catalog/data/accelerator_aliases.csv as {alias key: accelerator id} (resolve.alias_key)."""
    from .resolve import alias_key

    out: dict[str, str] = {}
    with Path(path).open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            key = alias_key(row["alias"])
            if key in out and out[key] != row["accelerator"]:
                raise ValueError(f"alias {row['alias']!r} names both {out[key]} and {row['accelerator']}")
            out[key] = row["accelerator"]
    return out
