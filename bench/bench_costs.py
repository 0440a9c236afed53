"""Benchmark: cost one full plan (every candidate configuration the adapter takes from the sizing:
the recommendation + the best per accelerator, x every matching offer and deployment option x
36 months + a 10 000-sample Monte Carlo, and its JSON). Target: <= 300 ms median; the JSON size
(target < 250 KB for the reference inference plan) is printed too.
Wall time and this process's CPU time are both reported: on a busy machine the CPU time is the
fairer figure.

Run after `make setup` (database migrated, catalog and rate card loaded):
    .venv/bin/python bench/bench_costs.py [--repeat 15]
Prints one line per workload and a JSON summary. No assertion: figures go to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from catalog.selectors import accelerator_specs  # noqa: E402
from catalog.snapshots import price_snapshot  # noqa: E402
from costs.adapters import build_cost_inputs  # noqa: E402
from costs.engine.plan import cost_plan  # noqa: E402
from costs.selectors import rate_card_snapshot  # noqa: E402
from planner.engine import size_workload  # noqa: E402
from planner.engine.spec import parse_workload_spec  # noqa: E402

WORKLOADS = {
    "inference llama-3.1-8b": {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
                               "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2}},
    "inference llama-3.1-70b (TTFT target)": {
        "kind": "inference", "model": {"preset": "llama-3.1-70b"},
        "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2, "ttft_p95_ms": 2000}},
    "lora finetune llama-3.1-70b": {"kind": "finetuning", "model": {"preset": "llama-3.1-70b"},
                                    "training": {"tokens": 2e9, "method": "lora"}},
    "pretraining llama-3.1-8b 1T tokens (one-off run)": {
        "kind": "pretraining", "model": {"preset": "llama-3.1-8b"}, "training": {"tokens": 1e12}},
}
API = [{"provider": "bench", "model": "m", "currency": "USD", "input_per_1m_tokens": "1",
        "output_per_1m_tokens": "3", "source": "benchmark input"}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    as_of = dt.date.today()
    prices = price_snapshot(as_of=as_of)
    accs = accelerator_specs(as_of=as_of)
    prices["accelerators"] = [asdict(a) for a in accs]
    rates = rate_card_snapshot(as_of=as_of)
    if not rates["rates"] or not prices["cloud_offers"]:
        sys.exit("load the catalog and the rate card first: make setup")
    summary = {}
    for name, spec in WORKLOADS.items():
        parsed = parse_workload_spec(spec)
        sizing = size_workload(spec=parsed, accelerators=accs).to_dict()
        options = {"horizon_months": 36, "monte_carlo_samples": 10_000, "api_prices": API}
        times, cpu, result = [], [], None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            inputs, _notes = build_cost_inputs(sizing=sizing, price_snapshot=prices, rate_snapshot=rates,
                                               options=options, spec=parsed)
            result = cost_plan(inputs=inputs)
            body = result.to_dict()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        compared = result.analysis["compared_candidates"]
        shortlisted = sum(len(result.shortlist[c]) for c in compared)
        row = {
            "candidates": len(inputs.workloads), "offers_priced": body["offers_priced"],
            "options_kept": len(result.options), "json_kb": round(len(json.dumps(body)) / 1024, 1),
            "options_in_monte_carlo": shortlisted, "months": 36, "samples": 10_000,
            "median_ms": round(statistics.median(times) * 1000, 1), "min_ms": round(min(times) * 1000, 1),
            "median_cpu_ms": round(statistics.median(cpu) * 1000, 1), "load_average_1m": os.getloadavg()[0],
        }
        summary[name] = row
        print(f"{name}: {row['candidates']} candidates, {row['offers_priced']} offers priced, "
              f"{row['options_kept']} options kept ({row['json_kb']} KB JSON), "
              f"{row['options_in_monte_carlo']} in Monte Carlo x 10k samples, 36 months: "
              f"median {row['median_ms']} ms wall (min {row['min_ms']} ms), {row['median_cpu_ms']} ms CPU; "
              f"load average {row['load_average_1m']:.1f}")
    print(json.dumps({"bench": "costs", "repeat": args.repeat, "results": summary}))


if __name__ == "__main__":
    main()
