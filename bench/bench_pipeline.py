"""Benchmark: the whole plan in-process, as a worker computes a version (issue 20's speed target):
price and rate snapshots, sizing, pricing, the decision, and the result's JSON, for the 70B chat
example of issue 20 (Llama-3.1-70B for 300 employees: peak 5 requests/s in a 10-hour day, 6 000
requests a day, 2 000 tokens in / 400 out, TTFT p95 <= 2 s; 36 months, RUB with VAT).
Targets: <= 100 ms median for the whole, result JSON <= 250 KB.

Run after `make setup` (database migrated, catalog, rate card and Russian prices loaded):
    .venv/bin/python bench/bench_pipeline.py [--repeat 21]
Prints the stages' medians (wall clock, and the process's CPU time, steadier on a shared machine)
and the sizes of the result a version serves and of its option catalog (planner.result_parts). No assertion: figures go to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.serializers.json import DjangoJSONEncoder  # noqa: E402

from planner import services  # noqa: E402
from planner.result_parts import split  # noqa: E402

SPEC = {
    "kind": "inference", "name": "Chat for 300 employees", "model": {"preset": "llama-3.1-70b"},
    "serving": {"input_tokens": 2000, "output_tokens": 400, "requests_per_second": 5, "hours_per_day": 10,
                "ttft_p95_ms": 2000, "requests_per_day": 6000},
}
COSTS = {"currency": "RUB", "include_vat": True, "horizon_months": 36}
# as the API sends JSON (DRF's JSONRenderer: compact, UTF-8)
COMPACT = {"separators": (",", ":"), "ensure_ascii": False}


def once(as_of: dt.date) -> dict:
    c0 = time.process_time()
    t0 = time.perf_counter()
    prices, rates = services.plan_snapshots(as_of=as_of)
    t1 = time.perf_counter()
    outcome = services.compute_from_inputs(inputs={"spec": SPEC, "costs": COSTS}, price_snapshot=prices,
                                           rate_snapshot=rates)
    t2 = time.perf_counter()
    assert outcome.status == "done", outcome.error
    # as the worker stores it (planner.result_parts): the result a version serves and the option catalog
    result, catalog = split(outcome.result)
    body = json.dumps(result, cls=DjangoJSONEncoder, **COMPACT)
    catalog_body = json.dumps(catalog, cls=DjangoJSONEncoder, **COMPACT)
    t3 = time.perf_counter()
    c3 = time.process_time()
    return {"cpu_total_ms": (c3 - c0) * 1e3, "snapshots_ms": (t1 - t0) * 1e3, "compute_ms": (t2 - t1) * 1e3,
            "json_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3, "json_kb": len(body.encode()) / 1024,
            "option_catalog_kb": len(catalog_body.encode()) / 1024,
            "sizing_kb": len(json.dumps(result["sizing"], cls=DjangoJSONEncoder, **COMPACT).encode()) / 1024,
            "costs_kb": len(json.dumps(result["costs"], cls=DjangoJSONEncoder, **COMPACT).encode()) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--no-freeze", action="store_true",
                    help="skip the worker's start-up gc.freeze() (config.celery.freeze_startup_objects)")
    args = ap.parse_args()
    if not args.no_freeze:
        from config.celery import freeze_startup_objects

        freeze_startup_objects()  # as a worker does at start (worker_init / worker_process_init)
    as_of = dt.date.today()
    once(as_of)  # warm-up: imports, caches of the presets and catalog files
    runs = [once(as_of) for _ in range(args.repeat)]
    summary = {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}
    summary["min_total_ms"] = round(min(r["total_ms"] for r in runs), 1)
    summary["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
