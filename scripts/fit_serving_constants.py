"""Fit the serving model's per-runtime constants on serving_measured.csv (H100 SXM rows).

    python -m scripts.fit_serving_constants            # fit on every H100 row of each runtime
    python -m scripts.fit_serving_constants --holdout model   # leave-one-model-out check

Fitted per runtime (vllm, sglang, trtllm): prefill_efficiency, decode_bandwidth_efficiency,
step_overhead_s, ttft_cohort_factor. Loss: mean |log(predicted / measured)| of TPOT plus that of
TTFT (robust to the noisy rows). Nelder-Mead in plain numpy (no SciPy in the project). The values
printed are what planner/engine/serving_constants.py FITTED holds; docs/BENCHMARKS.md records them.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from planner.engine.serving_constants import FITTED
from planner.engine.serving_replay import error_table, format_table, load_rows, replay

NAMES = ("prefill_efficiency", "decode_bandwidth_efficiency", "step_overhead_s", "ttft_cohort_factor", "request_overhead_s",
         "low_bit_gemm_factor")
SCALE = np.array([1.0, 1.0, 1e-3, 1.0, 1e-3, 1.0])
# Upper bounds are physical: H100 measured matmul peak is 794.5 of 989 TFLOPS (MAMF, stas00/ml-engineering).
BOUNDS = (np.array([0.1, 0.2, 0.0, 0.0, 0.0, 0.3]), np.array([0.8, 0.95, 20.0, 30.0, 500.0, 1.0]))


def _names(runtime):
    # The low-bit GEMM factor is fitted only where the data has low-bit rows enough (TensorRT-LLM fp8).
    return NAMES if runtime == "trtllm" else NAMES[:-1]


def _loss(x, rows, runtime, start, names):
    n = len(names)
    x = np.clip(x, BOUNDS[0][:n], BOUNDS[1][:n])
    consts = {**start, **dict(zip(names, x * SCALE[:n], strict=True))}
    out = replay(rows, consts_by_runtime={runtime: consts})
    lt = np.array([np.log(max(r["predicted_ttft_ms"], 1e-3) / r["measured_ttft_ms"]) for r in out])
    lp = np.array([np.log(max(r["predicted_tpot_ms"], 1e-3) / r["measured_tpot_ms"]) for r in out])
    lt = np.where(np.isfinite(lt), lt, 5.0)
    lp = np.where(np.isfinite(lp), lp, 5.0)
    return float(np.mean(np.abs(lt)) + 2.0 * np.mean(np.abs(lp)))  # TPOT weighted x2 (its target is tighter)


def nelder_mead(f, x0, steps=120):
    n = len(x0)
    pts = [np.array(x0, dtype=float)]
    for i in range(n):
        p = np.array(x0, dtype=float)
        p[i] = p[i] * 1.25 if p[i] else 0.25
        pts.append(p)
    vals = [f(p) for p in pts]
    for _ in range(steps):
        order = np.argsort(vals)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        c = np.mean(pts[:-1], axis=0)
        xr = c + (c - pts[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = c + 2 * (c - pts[-1])
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = c + 0.5 * (pts[-1] - c)
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0] + 0.5 * (p - pts[0]) for p in pts]
                vals = [f(p) for p in pts]
    i = int(np.argmin(vals))
    n = len(x0)
    return np.clip(pts[i], BOUNDS[0][:n], BOUNDS[1][:n]), vals[i]


def fit(rows, runtime, steps=120, start=None):
    start = start or FITTED[runtime]
    names = _names(runtime)
    if not any(r["precision"] in ("fp8", "fp4") for r in rows):
        names = tuple(n for n in names if n != "low_bit_gemm_factor")
    x0 = np.array([start[k] for k in names]) / SCALE[:len(names)]
    x, v = nelder_mead(lambda x: _loss(x, rows, runtime, start, names), x0, steps=steps)
    return dict(zip(names, (x * SCALE[:len(names)]).tolist(), strict=True)), v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--holdout", choices=("none", "model", "isl", "engine"), default="none")
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--runtimes", default="vllm,sglang,trtllm")
    args = ap.parse_args(argv)
    rows = [r for r in load_rows() if r["system"] == "h100_sxm"]
    if args.holdout == "none":
        for runtime in args.runtimes.split(","):
            sub = [r for r in rows if r["backend"] == runtime]
            c, v = fit(sub, runtime, args.steps)
            print(runtime, len(sub), "rows", {k: float(f"{x:.4g}") for k, x in c.items()}, f"loss {v:.3f}")
        return 0
    if args.holdout == "engine":
        # An engine never measured: the mean of the other engines' fitted constants (no refit).
        held = []
        for runtime in ("vllm", "sglang", "trtllm"):
            others = [FITTED[o] for o in ("vllm", "sglang", "trtllm") if o != runtime]
            consts = {k: float(np.mean([o[k] for o in others])) for k in FITTED[runtime]}
            out = replay([r for r in rows if r["backend"] == runtime], consts_by_runtime={runtime: consts})
            for r in out:
                r["heldout"] = f"{runtime} with the other engines' mean constants"
            held.extend(out)
        print(format_table(error_table(held, by=("heldout",))))
        return 0
    key = "model" if args.holdout == "model" else "isl"
    # Leave one group out: fit on the other groups of the same runtime, predict the held-out group.
    held = []
    for runtime in ("vllm", "sglang", "trtllm"):
        sub = [r for r in rows if r["backend"] == runtime]
        for g in sorted({r[key] for r in sub}):
            train = [r for r in sub if r[key] != g]
            test = [r for r in sub if r[key] == g]
            if not train:
                print(f"{runtime}: only one {key} ({g}); no held-out check possible")
                continue
            start = dict(FITTED[runtime])
            if not any(r["precision"] in ("fp8", "fp4") for r in train):
                start["low_bit_gemm_factor"] = 1.0  # no low-bit rows to learn from: neutral, not the full fit
            c, _ = fit(train, runtime, args.steps, start=start)
            out = replay(test, consts_by_runtime={runtime: {**start, **c}})
            for r in out:
                r["heldout"] = f"{runtime} {key}={g}"
            held.extend(out)
    if held:
        print(format_table(error_table(held, by=("heldout",))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
