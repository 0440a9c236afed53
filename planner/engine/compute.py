"""FLOPs, efficiency (MFU) presets and time (docs/SIZING.md).

The efficiency is the share of the accelerator's dense peak that the FLOPs actually executed
reach. Executed FLOPs include recomputation: with full activation checkpointing training runs
8ND instead of 6ND. Presets are documented defaults, overridable with hardware.mfu.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .architecture import ModelArch
from .messages import Msg

# Base efficiency of a large (>= 13B) dense transformer training run by accelerator family.
# Sources: LLaMA-65B 380 tok/s/GPU on 2048 A100 = 0.476 (Touvron 2023); Megatron-LM 1T on 3072
# A100 = 0.52 of peak incl. recomputation (Narayanan 2021); Llama 2 7B GPU-hours imply 0.39;
# Llama 3 405B 38-43% BF16 MFU on 8-16k H100 (Llama 3 paper, Table 4); PaLM 46.2% on TPU v4.
# No public long-run figure for Blackwell, Ada, AMD or Gaudi was read: those are assumptions,
# set below Hopper and marked so in the explanation.
MFU_BASE = {
    "volta": (0.35, "assumption (pre-BF16 generation)"),
    "turing": (0.25, "assumption (inference card, FP16 only)"),
    "ampere": (0.48, "LLaMA-65B 0.476 and Megatron 1T 0.52 on A100"),
    "ada": (0.35, "assumption (PCIe cards without NVLink)"),
    "hopper": (0.40, "Llama 3 405B: 38-43% on H100"),
    "blackwell": (0.35, "assumption (no published long-run MFU read)"),
    "cdna": (0.30, "assumption (ROCm stack; MI300X measured matmul peak is ~51% of spec)"),
    "gaudi": (0.35, "assumption"),
    "tpu": (0.45, "PaLM 540B: 46.2% on TPU v4"),
    "other": (0.30, "assumption (unknown accelerator family)"),
}
GENERATION_KEYS = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna", "gaudi", "tpu")


def generation_of(architecture: str) -> str:
    s = architecture.lower()
    for key in GENERATION_KEYS:
        if key in s:
            return key
    if "lovelace" in s:
        return "ada"
    return "other"


def size_factor(params: float) -> float:
    """Small models reach lower utilisation (narrow matmuls, more overhead per FLOP)."""
    if params < 1e9:
        return 0.6
    if params < 3e9:
        return 0.75
    if params < 13e9:
        return 0.85
    return 1.0


def cluster_factor(gpus):
    """Very large clusters lose some efficiency to communication and stragglers."""
    g = np.asarray(gpus, dtype=float)
    return np.where(g > 16384, 0.85, np.where(g > 4096, 0.93, 1.0))


METHOD_FACTOR = {"full": 1.0, "lora": 0.85, "qlora": 0.6}  # QLoRA dequantises weights every step
VISION_FACTOR = 0.5  # convolutional/vision nets reach about half an LLM's utilisation (assumption)
MFU_RANGE = (0.7, 1.25)  # low-high multipliers around the preset, capped at 0.6


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    value: float
    low: float
    high: float
    explain: str


def mfu_preset(*, architecture: str, params: float, gpus: int, method: str = "full",
               vision: bool = False, pinned: float | None = None) -> Efficiency:
    if pinned is not None:
        return Efficiency(value=pinned, low=pinned, high=pinned, explain=Msg("given in hardware.mfu"))
    gen = generation_of(architecture)
    base, why = MFU_BASE[gen]
    sf = 1.0 if vision else size_factor(params)  # the vision factor already covers small nets
    cf = float(cluster_factor(gpus))
    mf = METHOD_FACTOR[method]
    vf = VISION_FACTOR if vision else 1.0
    v = base * sf * cf * mf * vf
    parts = [Msg("{gen} base {base:.2f} ({why})", gen=gen, base=base, why=why), Msg("x{sf:g} model size", sf=sf)]
    if cf != 1.0:
        parts.append(Msg("x{cf:g} cluster of {gpus}", cf=cf, gpus=gpus))
    if mf != 1.0:
        parts.append(Msg("x{mf:g} {method}", mf=mf, method=method))
    if vf != 1.0:
        parts.append(Msg("x{vf:g} vision", vf=vf))
    return Efficiency(value=v, low=v * MFU_RANGE[0], high=min(0.6, v * MFU_RANGE[1]),
                      explain=Msg("preset: {parts}", parts=_join(parts, " ")))


def _join(parts, sep: str):
    """Texts joined with a separator, keeping each part translatable."""
    out = ""
    for i, part in enumerate(parts):
        out = out + (sep if i else "") + part
    return out


def training_flops(a: ModelArch, *, tokens: float, method: str, trainable_params: float) -> float:
    """Model FLOPs: 6*N*D for full training (2 forward + 4 backward per parameter per token).

    LoRA/QLoRA: frozen weights need no weight gradients, so 4*N*D (forward + input gradients)
    plus 6 per adapter parameter per token. MoE counts active parameters only.
    """
    n = a.active_params
    if method == "full":
        return 6.0 * n * tokens
    return 4.0 * n * tokens + 6.0 * trainable_params * tokens


def recompute_factor(*, checkpointing: str, method: str) -> float:
    """Executed / model FLOPs: full checkpointing re-runs the forward pass (2N of 6N: x4/3;
    of 4N for LoRA: x3/2). Selective recomputation repeats only attention cores (~1-3%)."""
    if checkpointing == "full":
        return 4.0 / 3.0 if method == "full" else 1.5
    return 1.0


def classic_training_flops(a: ModelArch, *, samples: float, epochs: float) -> float:
    """Forward FLOPs per sample x 3 (backward ~ 2x forward) x samples x epochs."""
    return 3.0 * (a.flops_per_sample or 0.0) * samples * epochs


def hours(*, flops, gpus, peak_tflops, efficiency):
    return flops / (np.asarray(gpus, dtype=float) * peak_tflops * 1e12 * efficiency) / 3600.0
