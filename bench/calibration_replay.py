"""How much a team's own measured runs improve the planner's serving latency (docs/CALIBRATION.md).

Every row of ../shared/reference/serving_measured.csv is treated as a run a team recorded (through
the same validator as an uploaded file), grouped by calibration key (GPU system, engine, precision),
and fitted with planner.calibration.fit exactly as the scoreboard fits a team's runs. Reported per
key: the median absolute percentage error (MdAPE) of mean TTFT and TPOT with the presets, and
calibrated, measured honestly on runs the fit did not see:
  - leave-one-out: each run predicted with the median scales of the other runs of its key;
  - 3 runs: fit on 3 random runs of the key, score the rest (median over 50 draws, seed 0).
Rows the validator refuses (e.g. nvfp4, which the planner has no precision for) are counted.

Run:  .venv/bin/python bench/calibration_replay.py      (prints Markdown for docs/CALIBRATION.md)
No timing assertions: this only reports.
"""

from __future__ import annotations

import csv
import os
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.calibration import fit  # noqa: E402
from planner.calibration.formats import Resolver, clean_serving  # noqa: E402
from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402

MEASURED = ROOT.parent / "shared" / "reference" / "serving_measured.csv"
if not MEASURED.exists():
    MEASURED = Path("/work/shared/reference/serving_measured.csv")
SYSTEMS = {"h100_sxm": "nvidia-h100-sxm5-80gb", "gb200": "nvidia-gb200-186gb"}
DRAWS = int(os.environ.get("CALIBRATION_DRAWS", "50"))  # 0: leave-one-out only (faster on slow engines)
K = 3


def runs_from_reference(resolver):
    runs, refused = [], defaultdict(int)
    with MEASURED.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            tp, pp = int(row["tensor_parallel"]), int(row["pipeline_parallel"])
            data = {"model": row["model"], "accelerator": SYSTEMS.get(row["system"], row["system"]),
                    "count": tp * pp, "tensor_parallel": tp, "pipeline_parallel": pp, "engine": row["backend"],
                    "engine_version": row["backend_version"], "precision": row["gemm_quant"],
                    "input_tokens": row["isl"], "output_tokens": row["osl"], "concurrency": row["concurrency"],
                    "ttft_mean_ms": row["measured_ttft_ms"], "tpot_mean_ms": row["measured_tpot_ms"]}
            errors = []
            run = clean_serving(data, line=None, resolver=resolver, errors=errors)
            if run is None:
                refused[f"{row['system']}/{row['backend']}/{row['gemm_quant']}: {errors[0].field}"] += 1
                continue
            run["key"] = (row["system"], row["backend"], run["precision"])
            runs.append(run)
    return runs, refused


def ape(pred, meas):
    return abs(pred - meas) / meas


def score(runs, accs):
    fits = [fit.fit_serving_run(r, accs[r["accelerator"]]) for r in runs]
    out = {"n": len(runs)}
    out["preset"] = {m: statistics.median(ape(getattr(f.preset, f"{m}_ms"), r[f"{m}_mean_ms"])
                                          for r, f in zip(runs, fits, strict=True)) for m in ("ttft", "tpot")}
    loo = {"ttft": [], "tpot": []}
    for i, r in enumerate(runs):
        others = [f for j, f in enumerate(fits) if j != i]
        if not others:
            continue
        p = fit.predict_serving(r, accs[r["accelerator"]],
                                prefill_scale=statistics.median(f.prefill_scale for f in others),
                                decode_scale=statistics.median(f.decode_scale for f in others))
        loo["ttft"].append(ape(p.ttft_ms, r["ttft_mean_ms"]))
        loo["tpot"].append(ape(p.tpot_ms, r["tpot_mean_ms"]))
    out["loo"] = {m: statistics.median(v) if v else None for m, v in loo.items()}
    draws = {"ttft": [], "tpot": []}
    rng = random.Random(0)
    if len(runs) > K and DRAWS:
        for _ in range(DRAWS):
            chosen = set(rng.sample(range(len(runs)), K))
            pre = statistics.median(fits[i].prefill_scale for i in chosen)
            dec = statistics.median(fits[i].decode_scale for i in chosen)
            errs = {"ttft": [], "tpot": []}
            for i, r in enumerate(runs):
                if i in chosen:
                    continue
                p = fit.predict_serving(r, accs[r["accelerator"]], prefill_scale=pre, decode_scale=dec)
                errs["ttft"].append(ape(p.ttft_ms, r["ttft_mean_ms"]))
                errs["tpot"].append(ape(p.tpot_ms, r["tpot_mean_ms"]))
            for m in draws:
                draws[m].append(statistics.median(errs[m]))
    out["k3"] = {m: statistics.median(v) if v else None for m, v in draws.items()}
    scales = {"prefill": fit.spread([f.prefill_scale for f in fits]), "decode": fit.spread([f.decode_scale for f in fits])}
    out["scales"] = scales
    out["bounded"] = sum(1 for f in fits if f.notes)
    return out


def pct(v):
    return "—" if v is None else f"{v:.0%}"


def main():
    accs = load_accelerators_csv(ROOT / "catalog" / "data" / "accelerators.csv")
    resolver = Resolver(accs)
    runs, refused = runs_from_reference(resolver)
    groups = defaultdict(list)
    for r in runs:
        groups[r["key"]].append(r)
    by_id = {a.id: a for a in accs}
    print("| system / engine / precision | runs | TTFT presets | TTFT LOO | TTFT from 3 runs | TPOT presets | "
          "TPOT LOO | TPOT from 3 runs | prefill scale (median, range) | decode scale (median, range) | at a bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    totals = []
    for key in sorted(groups):
        s = score(groups[key], by_id)
        totals.append((key, s))
        sp, sd = s["scales"]["prefill"], s["scales"]["decode"]
        print(f"| {' / '.join(key)} | {s['n']} | {pct(s['preset']['ttft'])} | {pct(s['loo']['ttft'])} | "
              f"{pct(s['k3']['ttft'])} | {pct(s['preset']['tpot'])} | {pct(s['loo']['tpot'])} | "
              f"{pct(s['k3']['tpot'])} | {sp['median']:.2f} ({sp['low']:.2f}–{sp['high']:.2f}) | "
              f"{sd['median']:.2f} ({sd['low']:.2f}–{sd['high']:.2f}) | {s['bounded']} |")
    print(f"\n{len(runs)} rows used; refused by the validator: "
          + (", ".join(f"{k} ({n})" for k, n in sorted(refused.items())) or "none"))


if __name__ == "__main__":
    main()
