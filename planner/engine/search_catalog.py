"""The search grid and the catalog as arrays: GPU counts, TP/PP options, per-accelerator columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import compute, fabrics, memory
from .hardware import AcceleratorSpec, gpus_per_server
from .precision import has_eight_bit_units, peak_tflops

GIB = memory.GIB
MAX_GPUS = 1024
COUNTS = np.array(list(range(1, 8)) + list(range(8, MAX_GPUS + 1, 8)), dtype=np.int64)
TP_OPTIONS = (1, 2, 4, 8)
PP_OPTIONS = (1, 2, 4, 8, 16, 32, 64)
SERVE_PP_OPTIONS = (1, 2, 4, 8)
DEFAULT_TRAINING_TARGET_HOURS = 30 * 24
CKPT_CODES = {"none": 0, "selective": 1, "full": 2}
CKPT_NAMES = {v: k for k, v in CKPT_CODES.items()}  # without a deadline, prefer runs of at most 30 days


@dataclass(frozen=True, kw_only=True)
class CatalogArrays:
    accelerators: tuple[AcceleratorSpec, ...]
    capacity_bytes: np.ndarray
    bandwidth_gb_s: np.ndarray
    peak_tflops: np.ndarray  # NaN where the compute format's peak is unknown
    peak_column: tuple[str, ...]
    peak_ratio: np.ndarray  # peak(compute format) / peak(bf16): attention cores run in bf16
    mfu_base: np.ndarray
    mfu_base_16bit: np.ndarray  # the generation's 16-bit base: an 8-bit step never beats the peak ratio
    mfu_base_explain: tuple[str, ...]
    attention_speedup: np.ndarray  # compute.ATTENTION_SPEEDUP of the chip generation (1 for most)
    tp_link_gb_s: np.ndarray  # one-way scale-up GB/s for TP > 2 (compute.tp_link_gb_s; NaN unknown)
    tp_link_small_gb_s: np.ndarray  # the same for TP <= 2 (a two-card bridge counts)
    tp_overlapped: np.ndarray  # the generation's stack overlaps TP traffic (compute.TP_COMM_OVERLAPPED)
    gpus_per_server: np.ndarray
    scale_up_domain: np.ndarray  # GPUs on one scale-up fabric (fabrics.scale_up_domain: the server or the NVL72 rack)
    scale_out_gb_s: np.ndarray  # one-way GB/s per GPU of the compute fabric (fabrics.scale_out_gb_s; NaN unknown)
    price_gpu_hour_usd: np.ndarray  # NaN where unknown


def catalog_arrays(accelerators: Sequence[AcceleratorSpec], *, compute_precision: str,
                   gpus_per_server_pin: int | None = None) -> CatalogArrays:
    peaks, cols, bases, whys, ratios, b16s, speedups = [], [], [], [], [], [], []
    links, links2, overlapped = [], [], []
    for a in accelerators:
        p, col = peak_tflops(a, compute_precision)
        peaks.append(np.nan if p is None else p)
        cols.append(col)
        p16, _ = peak_tflops(a, "bf16")
        ratios.append(p / p16 if p and p16 else 1.0)
        gen = compute.training_generation(a.architecture)
        base, why = compute.base_efficiency(gen, compute_precision, has_format_units=has_eight_bit_units(compute_precision, col))
        bases.append(base)
        b16s.append(compute.base_16bit(gen))
        speedups.append(compute.attention_speedup(a.architecture))
        links.append(compute.tp_link_gb_s(a, 8))
        links2.append(compute.tp_link_gb_s(a, 2))
        overlapped.append(gen in compute.TP_COMM_OVERLAPPED)
        whys.append(why)
    return CatalogArrays(
        accelerators=tuple(accelerators),
        capacity_bytes=np.array([a.memory_gib * GIB for a in accelerators], dtype=float),
        bandwidth_gb_s=np.array([a.memory_bandwidth_gb_s for a in accelerators], dtype=float),
        peak_tflops=np.array(peaks, dtype=float),
        peak_column=tuple(cols),
        peak_ratio=np.array(ratios, dtype=float),
        mfu_base=np.array(bases, dtype=float),
        mfu_base_16bit=np.array(b16s, dtype=float),
        mfu_base_explain=tuple(whys),
        attention_speedup=np.array(speedups, dtype=float),
        tp_link_gb_s=np.array(links, dtype=float),
        tp_link_small_gb_s=np.array(links2, dtype=float),
        tp_overlapped=np.array(overlapped, dtype=bool),
        gpus_per_server=np.array([gpus_per_server_pin or gpus_per_server(a) for a in accelerators], dtype=np.int64),
        scale_up_domain=np.array([fabrics.scale_up_domain(a, gpus_per_server_pin) for a in accelerators], dtype=np.int64),
        scale_out_gb_s=np.array([np.nan if fabrics.scale_out_gb_s(a) is None else fabrics.scale_out_gb_s(a)
                                 for a in accelerators], dtype=float),
        price_gpu_hour_usd=np.array(
            [np.nan if a.cloud_price_per_gpu_hour_usd is None else a.cloud_price_per_gpu_hour_usd for a in accelerators],
            dtype=float,
        ),
    )
