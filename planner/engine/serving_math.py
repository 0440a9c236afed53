"""Numeric helpers of the serving model (serving_model.Engine): the fixed-point acceleration of its steady
state, the attention-DP balancing arrivals and the search for the largest rate that passes a test
(docs/SIZING.md "Serving model")."""

from __future__ import annotations

import numpy as np

BISECT_STEPS = 16  # relative precision 1.5e-5 of the capacity bound (a tight one: compute or KV saturation)
# bisect_largest: halvings per round (a 2**h-way search) by the number of rates searched at once, up to
# (numpy's per-call cost dominates a plan's ~150 fitting layouts: 16 ways there, 3 ms less a plan than 4 ways
# in bench/bench_pipeline.py; beyond, 2**h - 1 tries per round cost as many elements)
FAN_HALVINGS = ((4, 256), (2, 4096), (1, float("inf")))


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


def bisect_largest(ok, hi, shape=None):
    """Largest rate in [0, hi] (elementwise) with ok(rate), to hi / 2**BISECT_STEPS (ok is monotone: true
    below a threshold).

    A k-way search: each round tries k - 1 evenly spaced rates in one vectorised call of ok and keeps the
    k-th of the interval below the first failing one, reaching the grid point BISECT_STEPS halvings reach.
    Small arrays (a plan's few candidates) go 16 ways, a third of the calls (numpy's per-call cost
    dominates them); large ones (a whole-catalog search) 4 ways or halve, where the elementwise work
    dominates. `shape`: the shape ok answers in (its inputs broadcast against the rate), so the added
    leading axis of tried rates never meets another array's axis; without it, one call at hi tells."""
    hi = np.array(hi, dtype=float, copy=True)
    if shape is None:
        with np.errstate(all="ignore"):  # beyond saturation the step time is inf: only the shape is read
            shape = np.shape(ok(hi))
    shape = np.broadcast_shapes(hi.shape, tuple(shape))
    hi = np.broadcast_to(hi, shape).copy()
    lo = np.zeros_like(hi)
    size = max(hi.size, 1)
    per_round = next(h for h, most in FAN_HALVINGS if size <= most)
    fan = 2 ** per_round
    fractions = np.arange(1, fan, dtype=float).reshape((-1,) + (1,) * hi.ndim) / fan
    for _ in range(BISECT_STEPS // per_round if per_round > 1 else 0):
        width = hi - lo
        good = np.broadcast_to(ok(lo + fractions * width), (fan - 1,) + shape)
        # how many tried rates pass, counted from the bottom (ok is monotone: a prefix of them)
        passed = np.cumprod(good, axis=0).sum(axis=0)
        lo = lo + passed * (width / fan)
        hi = lo + width / fan
    return _halvings(ok, lo, hi, BISECT_STEPS % per_round if per_round > 1 else BISECT_STEPS)


def _halvings(ok, lo, hi, steps):
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return lo
