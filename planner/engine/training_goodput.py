"""Goodput: the share of a training run's wall-clock spent in useful steps (docs/SIZING.md "Goodput").

Apart from the efficiency model of compute.py, which times the steps themselves: goodput counts what
a run loses around them (restarts, lost work, stalls), and grows worse with the GPU count.
"""

from __future__ import annotations

import numpy as np

# Goodput = GOODPUT_BASE / (1 + interruptions per GPU-hour x GPUs x lost hours per interruption).
# Interruptions scale with the GPU count. Llama 3 (Dubey et al. 2024, sec. 3.3.4): 466 job
# interruptions in 54 days of pre-training on 16,384 H100 GPUs, and "higher than 90% effective
# training time". LOST_HOURS_PER_INTERRUPTION is the mean useful time one interruption costs (lost
# work since the last checkpoint + restart) that turns that rate into 90%. The 90% is Llama 3's whole
# effective training time (useful training over elapsed, every loss), so L charges all of it to
# interruptions: Llama 3's own run is not also given GOODPUT_BASE (that counted its losses twice, 0.72;
# its published figure is its goodput: training_reference.run_goodput, docs/BENCHMARKS.md h/train6).
INTERRUPTIONS_PER_GPU_HOUR = 466 / (54 * 24 * 16384)
LOST_HOURS_PER_INTERRUPTION = (1 / 0.90 - 1) / (INTERRUPTIONS_PER_GPU_HOUR * 16384)
# The rest of the wall-clock a whole run loses at any scale (evaluation, checkpoint stalls, data and
# start-up stalls, short failed attempts): fitted by scripts/fit_training_efficiency.py as the
# geometric mean, over the whole-run rows with role "fit" (Llama 2 13B and 70B GPU-hours, BLOOM
# 176B GPU-hours), of published GPU-hours / the engine's step GPU-hours x the interruption term.
GOODPUT_BASE = 0.80
GOODPUT_FLOOR = 0.5


def interruption_goodput(gpus):
    """Share of wall-clock not lost to interruptions: 16,384 GPUs -> 0.90 (Llama 3); 2,048 -> 0.986."""
    g = np.asarray(gpus, dtype=float)
    return 1.0 / (1.0 + INTERRUPTIONS_PER_GPU_HOUR * g * LOST_HOURS_PER_INTERRUPTION)


def default_goodput(gpus, base: float | None = None):
    """Share of wall-clock in useful steps: GOODPUT_BASE x interruption_goodput, >= GOODPUT_FLOOR."""
    good = (GOODPUT_BASE if base is None else base) * interruption_goodput(gpus)
    return np.maximum(good, GOODPUT_FLOOR)
