"""What the result JSON of issue 20's 70B example weighs, section by section, as a version serves it
(planner.result_parts.split: the options the plan names in `result`, every priced and skipped option in the
option catalog served at .../options/), compact UTF-8 as the API sends it and gzip-compressed, beside the
engines' whole result. Issue 20 asks for <= 250 KB (docs/BENCHMARKS.md, "The whole plan in-process").

Run after `make setup` (database migrated, catalog, rate card and Russian prices loaded):
    .venv/bin/python bench/bench_result_size.py
No assertion: figures go to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from bench_pipeline import COSTS, SPEC  # noqa: E402
from django.core.serializers.json import DjangoJSONEncoder  # noqa: E402

from planner import services  # noqa: E402
from planner.result_parts import split  # noqa: E402


def kb(tree) -> float:
    return len(json.dumps(tree, cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False).encode()) / 1024


def main() -> None:
    prices, rates = services.plan_snapshots(as_of=dt.date.today())
    out = services.compute_from_inputs(inputs={"spec": SPEC, "costs": COSTS}, price_snapshot=prices,
                                       rate_snapshot=rates)
    assert out.status == "done", out.error
    whole = json.loads(json.dumps(out.result, cls=DjangoJSONEncoder))
    result, catalog = split(whole)
    body = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
    costs = result["costs"]
    options = costs["options"]
    full = [o for o in options if o.get("cash_flow")]
    summary = {
        "result_kb_compact": round(len(body) / 1024, 1),
        "result_kb_gzip": round(len(gzip.compress(body)) / 1024, 1),
        "option_catalog_kb": round(kb(catalog), 1) if catalog else 0.0,
        "whole_engine_result_kb": round(kb(whole), 1),
        "sizing_kb": round(kb(result["sizing"]), 1), "decision_kb": round(kb(result["decision"]), 1),
        "options_priced": len(whole["costs"]["options"]), "options_skipped": len(whole["costs"]["skipped"]),
        "options_in_result": len(options), "options_in_full": len(full),
        "options_in_full_kb": round(kb(full), 1),
        "options_summary_only_kb": round(kb(options) - kb(full), 1),
        **{f"costs.{k}_kb": round(kb(costs[k]), 1) for k in ("freshness", "inputs_used", "decision",
                                                              "monte_carlo", "sensitivity")},
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
