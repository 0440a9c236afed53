"""Numeric helpers of the serving model (serving_model.Engine): the fixed-point acceleration of its steady
state and the attention-DP balancing arrivals (docs/SIZING.md "Serving model")."""

from __future__ import annotations

import numpy as np


def aitken(t0, t1, t2):
    """Aitken's delta-squared extrapolation of a linearly converging fixed-point sequence (elementwise), kept
    where it is finite and within a factor 2 of the iterates, else the last iterate."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        d1, d2 = t1 - t0, t2 - t1
        den = d2 - d1
        acc = t2 - d2 * d2 / np.where(den != 0.0, den, 1.0)
        lo = 0.5 * np.minimum(np.minimum(t0, t1), t2)
        hi = 2.0 * np.maximum(np.maximum(t0, t1), t2)
        good = np.isfinite(acc) & np.isfinite(t2) & (np.abs(den) > 1e-12 * np.abs(t2)) & (acc >= lo) & (acc <= hi)
    return np.where(good, acc, t2)


def balance_arrivals(ranks):
    """Mean number of later arrivals a context request waits for until every one of `ranks` attention-DP ranks
    holds one (TensorRT-LLM's context balancing, docs/SIZING.md). In a closed loop a new request goes to the rank
    whose request just finished (the one with the fewest active requests), i.e. to a rank at random: the ranks fill
    as coupons do, N arrivals with E[N] = r H_r and Var N = r^2 sum 1/k^2 - r H_r, and an arrival waits for
    (E[N^2] - E[N]) / (2 E[N]) more on average ((r - 1) / 2 if the ranks filled in turn)."""
    r = np.asarray(ranks, dtype=float)
    n = int(np.max(r)) if r.size else 1
    k = np.arange(1, max(n, 1) + 1, dtype=float)
    h = np.cumsum(1.0 / k)  # H_r
    h2 = np.cumsum(1.0 / k ** 2)
    idx = np.clip(np.rint(r).astype(int) - 1, 0, len(k) - 1)
    en = r * h[idx]
    var = r * r * h2[idx] - en
    return np.where(r > 1.0, (var + en * en - en) / (2.0 * np.maximum(en, 1e-12)), 0.0)
