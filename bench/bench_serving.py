"""Serving model against measured engines: replay serving_measured.csv (552 rows) and time it.

Run:  .venv/bin/python bench/bench_serving.py [--csv out.csv]
Prints the Markdown tables of docs/BENCHMARKS.md ("Serving model vs measured engines"): median
absolute % error of TTFT and TPOT overall, per engine x GPU, per model x engine x precision; and
the time of one full replay. With --csv, writes the per-row predictions (id, measured, predicted),
the file the peer comparison (bench/bench_serving_peer.py) joins on `id`.
No assertions: tests/unit/test_serving_measured.py holds the accuracy targets.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine.serving_replay import error_table, format_table, load_rows, replay  # noqa: E402

PEER_CSV = ROOT / "bench" / "results" / "aiconfigurator_serving_measured.csv"


def _mdape(vals):
    return f"{statistics.median(vals):.1%}" if vals else "–"


def side_by_side(out: list[dict]) -> None:
    """GPU Planner next to AIConfigurator's recorded predictions (bench/bench_serving_peer.py), on
    the rows the peer predicts."""
    with PEER_CSV.open(encoding="utf-8") as f:
        peer = {r["id"]: r for r in csv.DictReader(f) if r["status"] == "ok"}
    groups: dict = {}
    for r in out:
        if r["id"] in peer:
            groups.setdefault((r["backend"], r["system"]), []).append(r)
    print(f"\nSide by side on the {sum(map(len, groups.values()))} rows AIConfigurator predicts "
          f"({PEER_CSV.relative_to(ROOT)}):\n")
    print("| backend | system | rows | GPU Planner TTFT | AIConfigurator TTFT | GPU Planner TPOT | AIConfigurator TPOT |")
    print("|---|---|---|---|---|---|---|")
    everything = [r for g in groups.values() for r in g]
    for key, rows in [*sorted(groups.items()), (("all", ""), everything)]:
        def err(rs, who, what):
            if who == "ours":
                return [abs(r[f"{what}_error"]) for r in rs]
            return [abs(float(peer[r["id"]][f"peer_{what}_ms"]) / r[f"measured_{what}_ms"] - 1) for r in rs]
        print(f"| {key[0]} | {key[1]} | {len(rows)} | {_mdape(err(rows, 'ours', 'ttft'))} | "
              f"{_mdape(err(rows, 'peer', 'ttft'))} | {_mdape(err(rows, 'ours', 'tpot'))} | "
              f"{_mdape(err(rows, 'peer', 'tpot'))} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = load_rows()
    out = replay(rows)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        replay(rows)
        times.append((time.perf_counter() - t) * 1000)
    print(f"Replay of {len(rows)} rows: median {statistics.median(times):.0f} ms (5 runs)\n")
    print(format_table(error_table(out)))
    print()
    print(format_table(error_table(out, by=("model", "backend", "precision"))))
    if PEER_CSV.exists():
        side_by_side(out)
    if args.csv:
        with args.csv.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
