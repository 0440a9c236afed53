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
        peer = {r["id"]: r for r in csv.DictReader(PEER_CSV.open(encoding="utf-8"))}
        both = [r for r in out if r["id"] in peer and peer[r["id"]].get("predicted_ttft_ms")]
        print(f"\nPeer file {PEER_CSV.relative_to(ROOT)}: {len(both)} rows in common")
    if args.csv:
        with args.csv.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
