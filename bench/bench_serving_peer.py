"""Serving latency side by side: NVIDIA AIConfigurator (benchmark-only peer) and GPU Planner's own
replay, each predicting every row of serving_measured.csv (mean TTFT and TPOT under closed-loop load).

Run:  .venv/bin/python bench/bench_serving_peer.py     (prints Markdown for docs/BENCHMARKS.md)
      --rows N   only the first N rows (a quick look; the recorded figures use all rows)

Writes bench/results/aiconfigurator_serving_measured.csv: one line per measured row with the peer's
prediction, or its status and why not. The peer (`aiconfigurator` from requirements-bench.txt, installed
by `make bench`) runs offline on CPU from the performance database bundled in `aiconfigurator-core`.
How each row is put to it, the same way its own sample file states the rows:
  mode "agg" (one aggregated in-flight-batching worker), batch_size = the run's concurrency, ctx_tokens
  left at its default (= isl), tp/pp from the row, gemm_quant_mode from the row's gemm_quant (bf16 ->
  bfloat16); KV-cache, attention and communication quantisation left to the peer to infer.
  backend_version: the peer only answers for its queryable database versions (per system and backend),
  none of which is the version the row was measured on; we take the newest one not newer than the
  measured version, or the oldest one when all are newer (every case here), and report which.
  model: only configs bundled with the peer are used (it would otherwise download config.json from
  HuggingFace); Llama-3.1-8B-Instruct is given the bundled meta-llama/Meta-Llama-3.1-8B config
  (same architecture: instruction tuning changes weights, not shapes).
Rows the peer cannot predict are counted and left out of its error, with the count shown.

GPU Planner's column comes from `planner.engine.serving_replay.replay(rows)` when that module exists
(issue 10, item 7): `rows` is the list of dicts below (the CSV's columns, numbers parsed), and the
result is one item per row, in order or carrying the row's `id`, each a mapping or object with
`ttft_ms` and `tpot_ms` (None, NaN or a missing item = not predicted). Without it the script says
"planner replay not available" and prints the peer's column only.

No timing assertions live in tests; this script only reports.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The shared reference copy (next to the checkout, or next to the worktrees), else a copy in the tests.
MEASURED_CANDIDATES = [ROOT.parent / "shared" / "reference" / "serving_measured.csv",
                       ROOT.parents[1] / "shared" / "reference" / "serving_measured.csv",
                       ROOT / "tests" / "unit" / "data" / "serving_measured.csv"]
RESULTS_CSV = ROOT / "bench" / "results" / "aiconfigurator_serving_measured.csv"

INT_COLUMNS = ("isl", "osl", "concurrency", "tensor_parallel", "pipeline_parallel")
FLOAT_COLUMNS = ("measured_ttft_ms", "measured_tpot_ms")

# Our model ids -> the peer's bundled HuggingFace config, where the id itself is not bundled.
PEER_MODEL_ALIASES = {"meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Meta-Llama-3.1-8B"}
# Our gemm_quant column -> the peer's GEMMQuantMode name.
PEER_GEMM_QUANT = {"bf16": "bfloat16", "fp16": "float16", "fp8": "fp8", "nvfp4": "nvfp4"}


def load_rows(path: Path) -> list[dict]:
    rows = []
    with path.open(newline="") as fh:
        for line_no, raw in enumerate(csv.DictReader(fh), start=2):
            row = dict(raw)
            try:
                for col in INT_COLUMNS:
                    row[col] = int(row[col])
                for col in FLOAT_COLUMNS:
                    row[col] = float(row[col])
            except (KeyError, ValueError) as exc:
                raise SystemExit(f"{path}:{line_no}: bad value ({exc})") from exc
            rows.append(row)
    return rows


def ape(pred, measured):
    """Absolute percentage error, or None when there is no usable prediction."""
    if pred is None or not math.isfinite(pred) or pred <= 0:
        return None
    return abs(pred - measured) / measured * 100


# ------------------------------------------------------------------------------------ the peer
class Peer:
    """AIConfigurator's single-configuration estimate (`aiconfigurator cli estimate`, mode agg)."""

    def __init__(self):
        from aiconfigurator.cli.api import cli_estimate  # noqa: PLC0415 (benchmark-only dependency)
        from aiconfigurator.sdk.perf_database import get_supported_databases  # noqa: PLC0415
        from aiconfigurator_core.sdk.common import DefaultHFModels  # noqa: PLC0415
        from packaging.version import Version  # noqa: PLC0415

        # Its database loader warns once per fallback table ("low-fidelity fallback rows"): keep the
        # report readable; the choice of version is printed below instead.
        for name in ("aiconfigurator", "aiconfigurator_core"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self.estimate = cli_estimate
        self.databases = get_supported_databases()
        self.bundled_models = set(DefaultHFModels)
        self.Version = Version
        self.version = metadata.version("aiconfigurator")
        self.core_version = metadata.version("aiconfigurator-core")

    def model_path(self, model: str) -> str | None:
        path = PEER_MODEL_ALIASES.get(model, model)
        return path if path in self.bundled_models else None

    def database_version(self, system: str, backend: str, measured_version: str) -> str | None:
        versions = sorted(self.databases.get(system, {}).get(backend, []), key=self.Version)
        if not versions:
            return None
        measured = self.Version(measured_version)
        older = [v for v in versions if self.Version(v) <= measured]
        return older[-1] if older else versions[0]

    def predict(self, row: dict) -> dict:
        out = {"peer_backend_version": "", "peer_ttft_ms": "", "peer_tpot_ms": "", "status": "", "note": ""}
        model_path = self.model_path(row["model"])
        if model_path is None:
            out.update(status="not_predicted", note=f"model {row['model']} is not bundled with the peer")
            return out
        version = self.database_version(row["system"], row["backend"], row["backend_version"])
        if version is None:
            out.update(status="not_predicted", note=f"no peer database for {row['system']}/{row['backend']}")
            return out
        quant = PEER_GEMM_QUANT.get(row["gemm_quant"])
        if quant is None:
            out.update(status="not_predicted", note=f"gemm_quant {row['gemm_quant']!r} has no peer equivalent")
            return out
        out["peer_backend_version"] = version
        try:
            result = self.estimate(
                model_path, row["system"], mode="agg", backend_name=row["backend"], backend_version=version,
                isl=row["isl"], osl=row["osl"], batch_size=row["concurrency"],
                tp_size=row["tensor_parallel"], pp_size=row["pipeline_parallel"], gemm_quant_mode=quant)
        except Exception as exc:  # noqa: BLE001 (the peer's own refusal is this row's finding)
            reason = " ".join(str(exc).split())[:200]
            out.update(status="not_predicted", note=f"peer raised {type(exc).__name__}: {reason}")
            return out
        ttft, tpot = float(result.ttft), float(result.tpot)
        if ape(ttft, 1.0) is None or ape(tpot, 1.0) is None:
            out.update(status="not_predicted", note=f"peer returned ttft={ttft}, tpot={tpot}")
            return out
        note = " ".join(str(result.kv_cache_warning).split())[:200] if result.kv_cache_warning else ""
        out.update(peer_ttft_ms=f"{ttft:.3f}", peer_tpot_ms=f"{tpot:.4f}", status="ok", note=note)
        return out


def run_peer(rows):
    try:
        peer = Peer()
    except ImportError as exc:
        print(f"AIConfigurator not available ({exc}); install it with `make bench` (requirements-bench.txt).\n")
        return None, None, 0.0
    t = time.perf_counter()
    preds = [peer.predict(row) for row in rows]
    return peer, preds, time.perf_counter() - t


# ---------------------------------------------------------------------------- GPU Planner's replay
def _field(item, name):
    value = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
    return float(value) if isinstance(value, int | float) else None


def run_ours(rows):
    """{row id: (ttft_ms, tpot_ms)} from planner.engine.serving_replay.replay, or None and why not."""
    try:
        from planner.engine.serving_replay import replay  # noqa: PLC0415 (issue 10, item 7)
    except ImportError as exc:
        return None, f"planner replay not available ({exc})", 0.0
    t = time.perf_counter()
    results = list(replay(rows))
    elapsed = time.perf_counter() - t
    by_id = {}
    if results and all(_id(item) is not None for item in results if item is not None):
        pairs = ((_id(item), item) for item in results if item is not None)
    elif len(results) == len(rows):
        pairs = ((row["id"], item) for row, item in zip(rows, results, strict=True))
    else:
        return None, f"planner replay returned {len(results)} results for {len(rows)} rows, without ids", elapsed
    for row_id, item in pairs:
        if item is not None:
            by_id[row_id] = (_field(item, "ttft_ms"), _field(item, "tpot_ms"))
    return by_id, "", elapsed


def _id(item):
    if item is None:
        return None
    return item.get("id") if isinstance(item, dict) else getattr(item, "id", None)


# ------------------------------------------------------------------------------------- report
def write_results(rows, preds):
    RESULTS_CSV.parent.mkdir(parents=True, exist_ok=True)
    cols = ["id", "backend", "system", "backend_version", "peer_backend_version", "measured_ttft_ms",
            "peer_ttft_ms", "measured_tpot_ms", "peer_tpot_ms", "status", "note"]
    tmp = RESULTS_CSV.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for row, pred in zip(rows, preds, strict=True):
            w.writerow({**{c: row[c] for c in cols[:4]}, "measured_ttft_ms": row["measured_ttft_ms"],
                        "measured_tpot_ms": row["measured_tpot_ms"], **pred})
    tmp.replace(RESULTS_CSV)


def _mdape(errors):
    return f"{statistics.median(errors):.1f}%" if errors else "–"


def error_table(rows, columns):
    """columns: [(label, {row id: (ttft_ms, tpot_ms)})]. One line per backend x system, then all."""
    groups = defaultdict(list)
    for row in rows:
        groups[(row["backend"], row["system"])].append(row)
    head = "| backend | system | rows |"
    rule = "|---|---|---|"
    for label, _ in columns:
        head += f" {label}: predicted | TTFT MdAPE | TPOT MdAPE |"
        rule += "---|---|---|"
    lines = [head, rule]
    for key, members in [*sorted(groups.items()), (("all", ""), rows)]:
        line = f"| {key[0]} | {key[1]} | {len(members)} |"
        for _, preds in columns:
            ttft_err, tpot_err = [], []
            covered = 0
            for row in members:
                ttft, tpot = preds.get(row["id"], (None, None))
                e_ttft, e_tpot = ape(ttft, row["measured_ttft_ms"]), ape(tpot, row["measured_tpot_ms"])
                covered += e_ttft is not None or e_tpot is not None
                ttft_err += [e_ttft] if e_ttft is not None else []
                tpot_err += [e_tpot] if e_tpot is not None else []
            line += f" {covered}/{len(members)} | {_mdape(ttft_err)} | {_mdape(tpot_err)} |"
        lines.append(line)
    return lines


CONCURRENCY_BANDS = ((1, 4), (5, 16), (17, 64), (65, 100_000))


def bias_table(rows, columns):
    """Median predicted/measured (1.0 = unbiased, <1 = optimistic) by concurrency band."""
    head, rule = "| concurrency | rows |", "|---|---|"
    for label, _ in columns:
        head += f" {label}: TTFT pred/meas | TPOT pred/meas |"
        rule += "---|---|"
    lines = [head, rule]
    for lo, hi in CONCURRENCY_BANDS:
        members = [r for r in rows if lo <= r["concurrency"] <= hi]
        line = f"| {lo}-{hi if hi < 100_000 else ''} | {len(members)} |"
        for _, preds in columns:
            for k, col in ((0, "measured_ttft_ms"), (1, "measured_tpot_ms")):
                ratios = [preds[r["id"]][k] / r[col] for r in members
                          if r["id"] in preds and ape(preds[r["id"]][k], r[col]) is not None]
                line += f" {statistics.median(ratios):.2f} |" if ratios else " – |"
        lines.append(line)
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=0, help="only the first N rows (0 = all)")
    ap.add_argument("--csv", type=Path, help="serving_measured.csv (default: the shared reference copy)")
    args = ap.parse_args(argv)
    measured_csv = args.csv or next((p for p in MEASURED_CANDIDATES if p.exists()), None)
    if measured_csv is None or not measured_csv.exists():
        raise SystemExit(f"serving_measured.csv not found (looked in {', '.join(map(str, MEASURED_CANDIDATES))}); pass --csv")
    all_rows = load_rows(measured_csv)
    rows = all_rows[: args.rows] if args.rows else all_rows

    print(f"Date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{len(rows)} rows of {measured_csv}\n")

    peer, peer_preds, peer_s = run_peer(rows)
    ours, ours_why, ours_s = run_ours(rows)

    columns = []
    if ours is not None:
        columns.append(("GPU Planner", ours))
        print(f"GPU Planner replay: {len(rows)} rows in {ours_s:.1f} s\n")
    else:
        print(f"{ours_why}: GPU Planner's column is left out.\n")
    if peer is not None:
        if len(rows) == len(all_rows):
            write_results(rows, peer_preds)
            wrote = f"wrote {RESULTS_CSV.relative_to(ROOT)}"
        else:
            wrote = f"{RESULTS_CSV.relative_to(ROOT)} left as it was (--rows)"
        columns.append((f"AIConfigurator {peer.version}", {
            row["id"]: (float(p["peer_ttft_ms"]), float(p["peer_tpot_ms"]))
            for row, p in zip(rows, peer_preds, strict=True) if p["status"] == "ok"}))
        print(f"AIConfigurator {peer.version} (aiconfigurator-core {peer.core_version}), mode agg, database SILICON: "
              f"{len(rows)} rows in {peer_s:.1f} s ({peer_s / max(len(rows), 1) * 1000:.0f} ms per row); "
              f"{wrote}\n")
        print("Database version the peer was given, per measured version:\n")
        print("| system | backend | measured on | peer database |\n|---|---|---|---|")
        seen = sorted({(r["system"], r["backend"], r["backend_version"], p["peer_backend_version"] or "none")
                       for r, p in zip(rows, peer_preds, strict=True)})
        print("\n".join(f"| {s} | {b} | {m} | {v} |" for s, b, m, v in seen))
        reasons = defaultdict(int)
        for p in peer_preds:
            if p["status"] != "ok":
                reasons[p["note"]] += 1
        kv_warned = sum(1 for p in peer_preds if p["status"] == "ok" and p["note"])
        print(f"\nPeer coverage: {len(rows) - sum(reasons.values())}/{len(rows)} rows predicted; "
              f"{kv_warned} of them carry the peer's KV-cache capacity warning.")
        for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print(f"- not predicted, {n} rows: {why}")
        print()
    if not columns:
        raise SystemExit("nothing to compare: neither the peer nor the planner replay is available")

    print("### Median absolute percentage error against the measured means, per backend x system\n")
    print("\n".join(error_table(rows, columns)))
    print("\n### Bias: median predicted / measured, by concurrency\n")
    print("\n".join(bias_table(rows, columns)))
    if len(columns) == 2:
        both = {i for i in columns[0][1] if i in columns[1][1]}
        common = [r for r in rows if r["id"] in both]
        print(f"\nOn the {len(common)} rows both predict:\n")
        table = error_table(common, columns)
        print("\n".join(table[:2] + table[-1:]))
    print(f"\n1-min load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
