"""The FLOPs a training run executes and the wall-clock hours they take (docs/SIZING.md "Training
efficiency"): model FLOPs, the recomputation factor, and hours at an efficiency (compute.py) and a
goodput (training_goodput.py).
"""

from __future__ import annotations

import numpy as np

from .architecture import ModelArch


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


def hours(*, flops, gpus, peak_tflops, efficiency, goodput=1.0):
    """Wall-clock hours: executed FLOPs at efficiency x peak during steps, stretched by 1/goodput."""
    return flops / (np.asarray(gpus, dtype=float) * peak_tflops * 1e12 * efficiency) / 3600.0 / goodput
