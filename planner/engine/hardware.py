"""Hardware as the sizing engine sees it: plain frozen values, never querysets.

The catalog app converts its rows into these (catalog.selectors); unit tests build them
directly or from catalog/data/accelerators.csv. Unknown figures are None, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class AcceleratorSpec:
    id: str  # catalog slug, e.g. "nvidia-h100-sxm5-80gb"
    vendor: str
    model: str
    architecture: str
    form_factor: str  # SXM / PCIe ... / OAM / superchip / TPU
    memory_gib: float  # as marketed by the vendor ("GB" on datasheets); see docs/UNITS
    memory_bandwidth_gb_s: float
    fp32_tflops: float | None = None
    tf32_tflops_dense: float | None = None
    bf16_tflops_dense: float | None = None
    fp16_tflops_dense: float | None = None
    fp8_tflops_dense: float | None = None
    int8_tops_dense: float | None = None
    fp4_tflops_dense: float | None = None
    tdp_w: float | None = None
    interconnect: str = ""
    interconnect_gb_s: float | None = None
    pcie_gen: int | None = None
    release_year: int | None = None
    min_cuda: str = ""  # "CUDA 12.8" or "ROCm 6.0"; empty when not established
    min_driver: str = ""
    # Prices, where the catalog knows them (for ranking only; money math lives in costs).
    purchase_price_usd: float | None = None
    cloud_price_per_gpu_hour_usd: float | None = None


GENERATION_KEYS = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna", "gaudi", "tpu")


def generation_of(architecture: str) -> str:
    s = architecture.lower()
    for key in GENERATION_KEYS:
        if key in s:
            return key
    if "lovelace" in s:
        return "ada"
    return "other"


def gpus_per_server(acc: AcceleratorSpec) -> int:
    """Typical GPUs per server for the form factor (HGX/OAM baseboards: 8)."""
    ff = acc.form_factor.lower()
    if "tpu" in ff:
        return 8 if "v5e" in acc.id else 4
    if "superchip" in ff:
        return 4
    return 8
