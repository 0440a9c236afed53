"""Held-out check of the training estimates on published runs the planner was not fitted on.

    cd <checkout> && /work/main/.venv/bin/python <this repo>/bench/bench_training_oos.py

Replays every row of tests/reference/training_published_holdout.json (found next to this
script, so the planner code under test is the one of the current directory) through the public
sizing entry `planner.engine.size_workload`, with the published layout pinned where the
WorkloadSpec allows, and prints predicted against published with the error per row and the
median absolute percentage error per mechanism (Markdown, for docs/BENCHMARKS.md).

Training fields the checked-out code does not know yet (e.g. `context_parallel` before issue 11
lands) are dropped and listed per row, so the same file runs on main for a before/after.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
from pathlib import Path

CODE = Path.cwd()
sys.path.insert(0, str(CODE))

from planner.engine import parse_workload_spec, size_workload  # noqa: E402
from planner.engine.catalog_csv import load_accelerators_csv  # noqa: E402
from planner.engine.spec import TrainingSpec  # noqa: E402

HOLDOUT = Path(__file__).resolve().parents[1] / "tests" / "reference" / "training_published_holdout.json"
KNOWN_TRAINING_FIELDS = {f.name for f in dataclasses.fields(TrainingSpec)}
MECHANISMS = ("dense", "fp8", "moe", "lora", "long_context", "peft_memory", "long_context_memory", "whole_run")


def load_rows() -> list[dict]:
    return json.loads(HOLDOUT.read_text())["rows"]


UNPIN = set()  # training fields removed from every row (command-line --unpin FIELD), for diagnosis


def spec_for_code(spec: dict) -> tuple[dict, list[str]]:
    """The row's spec with the training fields this code does not know removed (and their names)."""
    t = dict(spec.get("training", {}))
    for k in UNPIN:
        t.pop(k, None)
    dropped = sorted(k for k in t if k not in KNOWN_TRAINING_FIELDS)
    for k in dropped:
        t.pop(k)
    return {**spec, "training": t}, dropped


def _value(d: dict | None):
    return d.get("value") if isinstance(d, dict) else None


def predict(row: dict, accs) -> dict:
    """Planner's figure for the row's metric, plus what is needed for the physical checks."""
    spec, dropped = spec_for_code(row["spec"])
    res = size_workload(spec=parse_workload_spec(spec), accelerators=accs).to_dict()
    comp, memory = res.get("compute") or {}, res.get("memory") or {}
    rec = res.get("recommendation") or {}
    count = rec.get("count") or spec["hardware"].get("count")
    ranked = (res.get("candidates") or {}).get("ranked") or []
    acc = next((a for a in accs if a.id == spec["hardware"]["accelerator"]), None)
    gpu_mem = ranked[0].get("gpu_memory_bytes") if ranked else (acc.memory_gib * 1024**3 if acc else None)
    per_gpu = _value(memory.get("per_gpu_bytes"))
    mfu = _value(comp.get("mfu"))
    peak = _value(comp.get("peak_tflops_per_gpu"))
    tps = _value(comp.get("tokens_per_second_per_gpu"))
    if tps is None and comp.get("gpu_hours") and count:
        # code without the per-GPU throughput field (and without goodput): tokens / GPU-seconds
        tps = _value(comp.get("tokens")) / (_value(comp["gpu_hours"]) * 3600.0)
    metric = row["published"]["metric"]
    pred = {
        "tokens_per_s_per_gpu": tps,
        "tflops_per_gpu": mfu * peak if mfu is not None and peak else None,
        "gpu_hours": _value(comp.get("gpu_hours")),
        "peak_memory_gb": per_gpu / 1e9 if per_gpu else None,
        "memory_at_max_context_gb": per_gpu / 1e9 if per_gpu else None,
        "does_not_fit": per_gpu / gpu_mem if per_gpu and gpu_mem else None,  # ratio to GPU memory
    }[metric]
    return {"predicted": pred, "dropped": dropped, "count": count, "mfu": mfu, "per_gpu_bytes": per_gpu,
            "gpu_memory_bytes": gpu_mem, "fits": bool(ranked) and bool(ranked[0].get("fits"))}


def evaluate(accs=None) -> list[dict]:
    accs = accs or load_accelerators_csv(CODE / "catalog" / "data" / "accelerators.csv")
    out = []
    for row in load_rows():
        try:
            p = predict(row, accs)
            err = None
        except Exception as e:  # a row the code cannot replay is reported, not hidden
            p, err = {"predicted": None, "dropped": [], "count": None, "mfu": None, "fits": None}, f"{type(e).__name__}: {e}"
        pub = row["published"].get("value")
        ape = None
        if p["predicted"] is not None and pub:
            ape = p["predicted"] / pub - 1
        out.append({"row": row, **p, "published": pub, "error": ape, "failure": err})
    return out


def code_version() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=CODE, capture_output=True, text=True).stdout.strip()
        br = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=CODE, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=CODE,
                               capture_output=True, text=True).stdout.strip()
        return f"{br} {rev}{' + uncommitted changes' if dirty else ''}"
    except OSError:
        return "unknown"


def _fmt(v, metric):
    if v is None:
        return "–"
    if metric == "does_not_fit":
        return f"{v:.2f}x GPU mem"
    if metric == "gpu_hours":
        return f"{v:,.0f}"
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def main(argv: list[str]):
    """`--unpin FIELD` (repeatable) removes a pinned training field from every row, e.g.
    `--unpin activation_checkpointing` to see what the planner's own choice gives."""
    while "--unpin" in argv:
        i = argv.index("--unpin")
        UNPIN.add(argv[i + 1])
        del argv[i:i + 2]
    results = evaluate()
    unpinned = f"; unpinned: {', '.join(sorted(UNPIN))}" if UNPIN else ""
    print(f"Code: {code_version()} ({CODE}); rows: {HOLDOUT.name} ({len(results)}){unpinned}\n")
    print("| row | mechanism | metric | published | predicted | error | note |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    by_mech: dict[str, list[float]] = {}
    for r in results:
        row, metric = r["row"], r["row"]["published"]["metric"]
        if r["failure"]:
            note = f"not replayed: {r['failure'][:90]}"
        elif metric == "does_not_fit":
            note = "OOM published; planner " + ("agrees" if r["predicted"] and r["predicted"] > 1 else "says it fits")
        else:
            note = ""
        if r["dropped"]:
            note += (" " if note else "") + "dropped: " + ",".join(r["dropped"])
        pub = "OOM" if metric == "does_not_fit" else _fmt(r["published"], metric)
        err = "–" if r["error"] is None else f"{r['error']:+.1%}"
        print(f"| {row['id']} | {row['mechanism']} | {metric} | {pub} | {_fmt(r['predicted'], metric)} | {err} | {note} |")
        if r["error"] is not None:
            by_mech.setdefault(row["mechanism"], []).append(r["error"])
    print("\n| mechanism | rows | median abs. error | median signed error | max abs. error |")
    print("| --- | ---: | ---: | ---: | ---: |")
    allv = []
    for m in MECHANISMS:
        es = by_mech.get(m)
        if not es:
            continue
        allv += es
        a = [abs(e) for e in es]
        print(f"| {m} | {len(es)} | {statistics.median(a):.1%} | {statistics.median(es):+.1%} | {max(a):.1%} |")
    if allv:
        a = [abs(e) for e in allv]
        print(f"| all | {len(allv)} | {statistics.median(a):.1%} | {statistics.median(allv):+.1%} | {max(a):.1%} |")
    ooms = [r for r in results if r["row"]["published"]["metric"] == "does_not_fit"]
    agree = sum(1 for r in ooms if r["predicted"] and r["predicted"] > 1)
    print(f"\nOut-of-memory rows: planner agrees on {agree} of {len(ooms)}.")


if __name__ == "__main__":
    main(sys.argv[1:])
