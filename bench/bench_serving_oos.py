"""Out-of-sample check of the serving model on PUBLISHED results (tests/reference/serving_published.csv).

Nothing is fitted here and nothing may be fitted to these rows: they are the check that a model
calibrated on ../shared/reference/serving_measured.csv holds on other GPUs, engines, models and
harnesses. The CSV's README (tests/reference/serving_published.README.md) says how each row was read.

Run against the checkout the script lives in:
    .venv/bin/python bench/bench_serving_oos.py [--markdown] [--csv OUT]
Run against another branch's planner without merging (its `planner` package wins on sys.path):
    cd /work/wt/i10 && PYTHONPATH=/work/wt/i10 /work/main/.venv/bin/python /work/wt/oos/bench/bench_serving_oos.py

How a row is put to the planner: `planner.engine.serving_layout.evaluate_layout` (the exact-layout
what-if of issue 10) with the row's model preset, accelerator, tensor/pipeline parallel, runtime,
weights = compute = the row's precision, KV cache = the row's kv_cache (blank = the planner's default),
isl/osl and closed-loop concurrency = the row's concurrency (offline "all requests at once" runs:
the number of requests; static or offline batches: the batch size).
Compared per row, for what the source reports:
  TTFT (mean), TPOT (mean; NIM's ITL column is TPOT), output tokens/s (total over the GPUs; a per-GPU
  figure is multiplied by the row's GPU count; "unstated" = the source does not say output or total,
  compared as output) and end-to-end latency of one request (= TTFT + (osl - 1) x TPOT).
Harnesses without an HTTP server (offline_all_at_once, offline_batch, static_batch) are compared on
the engine-only time: the runtime's request_overhead_s (HTTP, tokenisation) is taken off predicted
TTFT and end-to-end latency, the same way the planner's own GPT-J reference case is compared.
Error = (predicted - published) / published; "APE" = its absolute value.

No timing or accuracy assertion lives here (tests/unit/test_serving_published.py holds a loose sanity
bound); this script only reports.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED_CSV = ROOT / "tests" / "reference" / "serving_published.csv"

INT_COLUMNS = ("gpus", "tensor_parallel", "pipeline_parallel", "isl", "osl", "concurrency")
FLOAT_COLUMNS = ("measured_ttft_ms", "measured_tpot_ms", "measured_output_tokens_s", "measured_e2e_latency_ms",
                 "tolerance_factor")
METRICS = (("ttft_ms", "measured_ttft_ms"), ("tpot_ms", "measured_tpot_ms"),
           ("output_tokens_s", "measured_output_tokens_s"), ("e2e_latency_ms", "measured_e2e_latency_ms"))
ENGINE_ONLY_HARNESSES = ("offline_all_at_once", "offline_batch", "static_batch")


def load_rows(path: Path = PUBLISHED_CSV) -> list[dict]:
    """The published rows, numbers parsed (blank = not reported -> None)."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in INT_COLUMNS:
            r[k] = int(r[k])
        for k in FLOAT_COLUMNS:
            r[k] = float(r[k]) if r[k].strip() else None
        if r["measured_output_tokens_s"] is not None and r["throughput_basis"] == "per_gpu":
            r["measured_output_tokens_s"] *= r["gpus"]
    return rows


def _import_planner():
    """The planner on sys.path (PYTHONPATH / cwd) wins; else the checkout this script lives in."""
    try:
        import planner  # noqa: F401
    except ImportError:
        sys.path.append(str(ROOT))
    import planner
    from planner.engine import serving_layout
    return planner, serving_layout


def planner_available() -> tuple[bool, str]:
    try:
        _, sl = _import_planner()
    except ImportError as e:
        return False, f"planner serving model not importable: {e}"
    if not hasattr(sl, "evaluate_layout"):
        return False, "planner.engine.serving_layout.evaluate_layout does not exist"
    return True, ""


def planner_version() -> str:
    planner, _ = _import_planner()
    repo = Path(planner.__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%h %cI (%D)"], capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = "unknown commit"
    return f"{repo} @ {out}"


def _accelerators() -> dict:
    planner, _ = _import_planner()
    from planner.engine.catalog_csv import load_accelerators_csv
    repo = Path(planner.__file__).resolve().parents[1]
    return {a.id: a for a in load_accelerators_csv(repo / "catalog" / "data" / "accelerators.csv")}


def _first(v, float_=True):
    import numpy as np

    x = np.asarray(v).reshape(-1)[0]
    return float(x) if float_ else x


def predict(rows: list[dict]) -> list[dict]:
    """Planner predictions for every row (same order): ttft_ms, tpot_ms, output_tokens_s, e2e_latency_ms,
    bottleneck, fits, request_overhead_ms and the roofline inputs the sanity test uses."""
    import numpy as np

    _, sl = _import_planner()
    from planner.engine.presets import preset_arch

    accs = _accelerators()
    out = []
    for r in rows:
        arch = preset_arch(r["model"])
        acc = accs[r["accelerator"]]
        one = lambda v: np.array([float(v)])  # noqa: E731  (1-element arrays: the replay's vectorised path)
        res = sl.evaluate_layout(
            arch=arch, accelerator=acc, tensor_parallel=one(r["tensor_parallel"]),
            pipeline_parallel=one(r["pipeline_parallel"]), runtime=r["engine"], weights=r["weights"],
            compute=r["weights"], kv_cache=r["kv_cache"] or None, input_tokens=one(r["isl"]),
            output_tokens=one(r["osl"]), concurrency=one(r["concurrency"]))
        g = lambda k, res=res: _first(res[k])  # noqa: E731
        eng = res.get("engine")
        overhead_s = _first(getattr(eng, "request_overhead_s", 0.0))
        engine_only = r["harness"] in ENGINE_ONLY_HARNESSES
        ttft = g("ttft_ms") - (overhead_s * 1e3 if engine_only else 0.0)
        tpot = g("tpot_ms")
        out.append({
            "ttft_ms": ttft, "tpot_ms": tpot,
            "output_tokens_s": g("output_tokens_per_s_per_gpu") * r["gpus"],
            "e2e_latency_ms": ttft + (r["osl"] - 1) * tpot,
            "bottleneck": str(_first(res["bottleneck"], float_=False)),
            "fits": bool(_first(res["fits"], float_=False)),
            "request_overhead_ms": overhead_s * 1e3 if engine_only else 0.0,
        })
    return out


def compare(rows: list[dict], preds: list[dict]) -> list[dict]:
    """One line per (row, reported metric): published, predicted, signed error."""
    lines = []
    for r, p in zip(rows, preds, strict=True):
        for key, col in METRICS:
            pub = r[col]
            if pub is None:
                continue
            pred = p[key]
            err = (pred - pub) / pub if pred == pred and abs(pred) != float("inf") else float("inf")
            lines.append({"id": r["id"], "source": r["source"], "model": r["model"], "accelerator": r["accelerator"],
                          "tp": r["tensor_parallel"], "engine": r["engine"], "weights": r["weights"],
                          "harness": r["harness"], "isl": r["isl"], "osl": r["osl"], "concurrency": r["concurrency"],
                          "metric": key, "published": pub, "predicted": pred, "error": err,
                          "bottleneck": p["bottleneck"], "fits": p["fits"],
                          "tolerance_factor": r["tolerance_factor"]})
    return lines


def _family(acc_id: str) -> str:
    for k, v in (("a100", "A100 (Ampere)"), ("l40s", "L40S (Ada)"), ("h100", "H100 (Hopper)"),
                 ("h200", "H200 (Hopper)"), ("b200", "B200 (Blackwell)"), ("mi300x", "MI300X (CDNA3)")):
        if k in acc_id:
            return v
    return acc_id


def groups(lines: list[dict]) -> dict[str, dict[str, list[dict]]]:
    g: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for x in lines:
        g["source"][x["source"]].append(x)
        g["metric"][x["metric"]].append(x)
        if x["metric"] in ("ttft_ms", "tpot_ms"):
            load = "unloaded (c=1)" if x["concurrency"] == 1 else "loaded (c>1)"
            g["metric x load"][f"{x['metric']} {load}"].append(x)
        g["accelerator"][_family(x["accelerator"])].append(x)
        g["engine"][x["engine"]].append(x)
        g["model"][x["model"]].append(x)
        g["input length"]["isl >= 5000" if x["isl"] >= 5000 else "isl < 5000"].append(x)
        g["harness"][x["harness"]].append(x)
    return g


def _mdape(xs: list[dict]) -> float:
    return statistics.median(abs(x["error"]) for x in xs)


def _msigned(xs: list[dict]) -> float:
    return statistics.median(x["error"] for x in xs)


def _fmt_err(e: float) -> str:
    return "inf" if e == float("inf") else f"{e:+.0%}"


def report(lines: list[dict], markdown: bool) -> str:
    out = []
    if markdown:
        out.append("| row | metric | published | predicted | error | bottleneck |")
        out.append("|---|---|---:|---:|---:|---|")
        for x in lines:
            out.append(f"| {x['id']} | {x['metric']} | {x['published']:.4g} | {x['predicted']:.4g} | "
                       f"{_fmt_err(x['error'])} | {x['bottleneck']} |")
    else:
        out.append(f"{'row':36s} {'metric':15s} {'published':>11s} {'predicted':>11s} {'error':>7s}  bottleneck")
        for x in lines:
            out.append(f"{x['id']:36s} {x['metric']:15s} {x['published']:11.4g} {x['predicted']:11.4g} "
                       f"{_fmt_err(x['error']):>7s}  {x['bottleneck']}")
    out.append("")
    out.append(f"All {len(lines)} comparisons: median APE {_mdape(lines):.0%}, median signed error "
               f"{_msigned(lines):+.0%}, within x2: {sum(1 for x in lines if _within(x, 2.0))}/{len(lines)}, "
               f"within x3: {sum(1 for x in lines if _within(x, 3.0))}/{len(lines)}")
    rest = [x for x in lines if x["model"] != "deepseek-v3"]
    out.append(f"Without the DeepSeek-V3/R1 rows ({len(rest)} comparisons): median APE {_mdape(rest):.0%}, "
               f"median signed error {_msigned(rest):+.0%}, within x2: {sum(1 for x in rest if _within(x, 2.0))}"
               f"/{len(rest)}")
    out.append("")
    for gname, gs in groups(lines).items():
        if markdown:
            out.append(f"| {gname} | comparisons | median APE | median signed error |")
            out.append("|---|---:|---:|---:|")
            for k in sorted(gs):
                out.append(f"| {k} | {len(gs[k])} | {_mdape(gs[k]):.0%} | {_msigned(gs[k]):+.0%} |")
        else:
            out.append(f"by {gname}:")
            for k in sorted(gs):
                out.append(f"  {k:32s} n={len(gs[k]):3d}  median APE {_mdape(gs[k]):5.0%}  "
                           f"median signed {_msigned(gs[k]):+5.0%}")
        out.append("")
    return "\n".join(out)


def _within(x: dict, factor: float) -> bool:
    p, m = x["predicted"], x["published"]
    return 0 < p < float("inf") and 1 / factor <= p / m <= factor


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", action="store_true", help="Markdown tables for docs/BENCHMARKS.md")
    ap.add_argument("--csv", type=Path, help="also write the per-comparison lines to this CSV")
    args = ap.parse_args(argv)
    ok, why = planner_available()
    if not ok:
        print(f"planner replay not available: {why}")
        return 1
    rows = load_rows()
    lines = compare(rows, predict(rows))
    print(f"# serving out-of-sample check, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"# planner: {planner_version()}")
    print(f"# rows: {len(rows)} published measurements from {PUBLISHED_CSV.relative_to(ROOT)}")
    print()
    print(report(lines, args.markdown))
    if args.csv:
        with args.csv.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(lines[0]))
            w.writeheader()
            w.writerows(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
