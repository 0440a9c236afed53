"""Fit the training-efficiency constants of planner/engine/compute.py on published runs.

    .venv/bin/python scripts/fit_training_efficiency.py
    .venv/bin/python scripts/fit_training_efficiency.py --leave-one-source-out   # + refit without each source
    .venv/bin/python scripts/fit_training_efficiency.py --write-moe-errors       # what MoE training plans quote

Reads planner/engine/data/training_published.json, fits GEMM_HALF_WIDTH, TOKEN_HALF_WIDTH,
ATTENTION_COST and TP_COMM_EXPOSED by a joint grid search and one base per (generation, format) group
in closed form (geometric mean of observed / unit prediction), on the rows with role "fit" only;
fits GOODPUT_BASE on the whole-run fit rows; prints the constants, the error on the fit rows and on
the held-out rows (overall and per vendor and generation) as Markdown (docs/BENCHMARKS.md). With
--leave-one-source-out it also refits everything without each source group (the rows' source_group)
and reports the error of that group's rows. It does not edit compute.py: the printed constants are
copied there by hand, rounded.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import (  # noqa: E402
    compute,
    parse_workload_spec,
    size_workload,
    training_fit_errors,
    training_goodput,
)
from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402
from planner.engine.training_reference import (  # noqa: E402
    fit_dequant_bytes,
    load_rows,
    published_goodput,
    qlora_pairs,
    run_goodput,
    throughput_rows,
    whole_run_spec,
)

W_GRID = np.arange(100.0, 1001.0, 50.0)  # GEMM_HALF_WIDTH
K_GRID = np.arange(0.8, 2.41, 0.1)  # ATTENTION_COST
T_GRID = np.arange(0.0, 601.0, 50.0)  # TOKEN_HALF_WIDTH
C_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)  # TP_COMM_EXPOSED


def fit(rows, w_grid=W_GRID, k_grid=K_GRID, t_grid=T_GRID, c_grid=C_GRID):
    groups = defaultdict(list)
    for r in rows:
        groups[(r.generation, r.fmt)].append(r)
    best = None
    for w0, kappa, t0, ctp in ((w, k, t, c) for w in w_grid for k in k_grid for t in t_grid for c in c_grid):
        c = compute.EfficiencyConstants(gemm_half_width=float(w0), attention_cost=float(kappa),
                                        token_half_width=float(t0), tp_comm_exposed=float(ctp))
        bases, errs = {}, []
        for key, rs in groups.items():
            unit = np.array([r.predicted(constants=c, base=1.0) for r in rs])
            obs = np.array([r.observed for r in rs])
            b = float(np.exp(np.mean(np.log(obs / unit))))
            bases[key] = b
            errs.extend(np.log(b * unit / obs))
        rms = float(np.sqrt(np.mean(np.square(errs))))
        if best is None or rms < best[0]:
            best = (rms, c, bases)
    return best


SIBLING = {"cdna3": "cdna4", "cdna4": "cdna3", "hopper": "blackwell", "blackwell": "hopper"}


def base_for(bases, gen, fmt):
    """A fitted base for (generation, format); when a leave-one-source-out refit has no row of that group
    left: the same generation's other format, then the same vendor's sibling generation; else None."""
    for key in ((gen, fmt), (gen, "8" if fmt != "8" else "16"), (SIBLING.get(gen), fmt)):
        if key in bases:
            return bases[key]
    return None


def group_of(r) -> str:
    """Vendor and generation of a row for the error summary (AMD CDNA 3 / CDNA 4 apart)."""
    return f"{r.vendor} {r.generation}"


def summary_table(rows, c, bases, title):
    """Median and max |error| per vendor/generation (and overall) of the rows, constants c and bases."""
    errs = defaultdict(list)
    for r in rows:
        b = base_for(bases, r.generation, r.fmt)
        e = r.predicted(constants=c, base=b, capped=True) / r.observed - 1
        errs[group_of(r)].append(e)
        errs["all"].append(e)
    lines = [f"{title}:\n", "| vendor / generation | rows | median abs. | max abs. | beyond 30% |", "| --- | ---: | ---: | ---: | ---: |"]
    for g in sorted(errs, key=lambda k: (k == "all", k)):
        a = np.abs(errs[g])
        lines.append(f"| {g} | {len(a)} | {np.median(a):.1%} | {a.max():.1%} | {int(np.sum(a > 0.3))} |")
    return lines


def leave_one_source_out(fit_rows, all_rows):
    """Refit everything without each source group; error of that group's rows (fit and held_out) under the
    refit. Returns per-group (n, median abs, max abs, rows without a base) and all the errors."""
    out, every = {}, []
    for g in sorted({r.source_group for r in fit_rows}):
        train = [r for r in fit_rows if r.source_group != g]
        test = [r for r in all_rows if r.source_group == g]
        _, c, bases = fit(train, np.arange(100.0, 1001.0, 100.0), np.arange(0.8, 2.41, 0.2), np.arange(0.0, 601.0, 100.0),
                          (0.0, 1.0, 2.0))
        es, missing = [], 0
        for r in test:
            b = base_for(bases, r.generation, r.fmt)
            if b is None:
                missing += 1
                continue
            es.append(r.predicted(constants=c, base=b, capped=True) / r.observed - 1)
        a = np.abs(es)
        out[g] = (len(a), float(np.median(a)) if len(a) else float("nan"), float(a.max()) if len(a) else float("nan"),
                  missing, c)
        every.extend(a)
    return out, np.array(every)


def report(rows, c, bases):
    lines = ["| row | role | observed | predicted | error |", "| --- | --- | ---: | ---: | ---: |"]
    errs = defaultdict(list)
    for r in rows:
        b = bases.get((r.generation, r.fmt))
        if b is None:
            b = compute.base_efficiency(r.generation, r.compute_precision)[0]
        p = r.predicted(constants=c, base=b, capped=True)  # as the engine predicts (8-bit step <= 16-bit E)
        e = p / r.observed - 1
        errs[r.role].append(e)
        lines.append(f"| {r.id} | {r.role} | {r.observed:.3f} | {p:.3f} | {e:+.1%} |")
    summary = []
    for role, es in errs.items():
        a = np.abs(es)
        summary.append(f"- {role}: {len(es)} rows, median |error| {np.median(a):.1%}, max {a.max():.1%}, "
                       f"within 20%: {np.mean(a <= 0.2):.0%}")
    return lines, summary


def whole_runs(accs):
    """Per whole-run row: published GPU-hours, the engine's step GPU-hours (goodput 1) and its GPU count."""
    out = []
    for r in load_rows():
        if r["kind"] != "whole_run":
            continue
        res = size_workload(spec=parse_workload_spec(whole_run_spec(r, goodput=1.0)), accelerators=accs).to_dict()
        count = res["recommendation"]["count"]
        out.append((r, res["compute"]["gpu_hours"]["value"], count))
    return out


def implied_goodput(r, step, n):
    """Whole-run goodput: from the published steady-state throughput where there is one, else from the
    engine's step GPU-hours (goodput 1) for the same run."""
    g = published_goodput(r)
    return g if g is not None else step / r["observed"]["gpu_hours"]


def fit_goodput(runs):
    """GOODPUT_BASE: geometric mean over fit rows of implied goodput / interruption term."""
    logs = [np.log(implied_goodput(r, step, n) / float(training_goodput.interruption_goodput(n)))
            for r, step, n in runs if r["role"] == "fit"]
    return float(np.exp(np.mean(logs)))


def main():
    accs = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
    all_rows = throughput_rows(accs)
    if "--write-moe-errors" in sys.argv:  # what MoE training plans quote (no fit: seconds)
        training_fit_errors.write_moe_errors(training_fit_errors.held_out_moe_errors(all_rows))
        print(f"wrote {training_fit_errors.ERRORS_JSON.relative_to(ROOT)}")
        return
    rows = [r for r in all_rows if r.use == "efficiency"]
    fit_rows = [r for r in rows if r.role == "fit"]
    rms, c, bases = fit(fit_rows)
    print(f"GEMM_HALF_WIDTH = {c.gemm_half_width:g}\nTOKEN_HALF_WIDTH = {c.token_half_width:g}\n"
          f"ATTENTION_COST = {c.attention_cost:.2f}\nTP_COMM_EXPOSED = {c.tp_comm_exposed:g}")
    for (gen, fmt), b in sorted(bases.items()):
        print(f"BASE[({gen!r}, {fmt!r})] = {b:.3f}")
    print(f"fit RMS log error {rms:.3f}\n")
    print(f"QLORA_DEQUANT_BYTES_PER_PARAM = {fit_dequant_bytes(all_rows):.1f}\n")
    print("QLoRA / LoRA efficiency ratio of the same run (constants as rounded in compute.py):\n")
    print("| QLoRA row | observed ratio | predicted ratio | error |\n| --- | ---: | ---: | ---: |")
    for q, obs, pred in qlora_pairs(all_rows):
        print(f"| {q.id} | {obs:.3f} | {pred:.3f} | {pred / obs - 1:+.1%} |")
    print()
    runs = whole_runs(accs)
    print(f"GOODPUT_BASE = {fit_goodput(runs):.3f}\n")
    print("Whole runs with the constants as rounded in compute.py (GPU-hours incl. goodput):\n")
    print("| row | role | GPUs | implied goodput | goodput used | published GPU-h | estimate | error |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r, step, n in runs:
        # the run's published effective training time where it has one (once, not x the default), else the default
        good = run_goodput(r) or float(training_goodput.default_goodput(n))
        est = step / good
        print(f"| {r['id']} | {r['role']} | {n} | {implied_goodput(r, step, n):.3f} | {good:.3f} | "
              f"{r['observed']['gpu_hours']:,.0f} | {est:,.0f} | {est / r['observed']['gpu_hours'] - 1:+.1%} |")
    print()
    print("Throughput rows with the constants as rounded in compute.py:\n")
    const = compute.DEFAULT_CONSTANTS
    cur = {k: v[0] for k, v in compute.BASE.items()}
    lines, summary = report(rows, const, cur)
    print("\n".join(summary))
    print()
    print("\n".join(summary_table(fit_rows, const, cur, "Fit rows by vendor and generation (constants as rounded)")))
    print()
    print("\n".join(summary_table([r for r in rows if r.role != "fit"], const, cur,
                                   "Held-out rows of the file by vendor and generation (constants as rounded)")))
    print()
    print("\n".join(lines))
    if "--leave-one-source-out" in sys.argv:
        per, every = leave_one_source_out(fit_rows, rows)
        print(f"\nLeave-one-source-out (refit of all constants without the source; that source's rows predicted): "
              f"median abs. {np.median(every):.1%}, max {every.max():.1%}, {len(every)} rows\n")
        print("| source left out | rows | median abs. | max abs. | rows without a base | refit half widths (hidden, token), attention cost, TP exposed |\n"
              "| --- | ---: | ---: | ---: | ---: | --- |")
        for g, (n, med, mx, missing, c) in per.items():
            print(f"| {g} | {n} | {med:.1%} | {mx:.1%} | {missing} | {c.gemm_half_width:g}, {c.token_half_width:g}, {c.attention_cost:.2f}, {c.tp_comm_exposed:g} |")


if __name__ == "__main__":
    main()
