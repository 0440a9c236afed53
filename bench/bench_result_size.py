"""What the result JSON of issue 20's 70B example weighs, section by section, as the API serves it
(compact JSON) and gzip-compressed, and what it would weigh if `costs.options` listed only the options the
decision names (the decided one, the compared alternatives kept in full, the ranked configurations' best
options) instead of every priced option. Issue 20 asks for <= 250 KB; this prints why the plan does not
meet that figure while it lists every priced option (docs/BENCHMARKS.md, "The whole plan in-process").

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

NAMED = ("recommended", "cheapest_onprem", "cheapest_cloud", "cheapest_dedicated", "cheapest_hybrid", "api")


def kb(tree) -> float:
    return len(json.dumps(tree, cls=DjangoJSONEncoder, separators=(",", ":")).encode()) / 1024


def main() -> None:
    prices, rates = services.plan_snapshots(as_of=dt.date.today())
    out = services.compute_from_inputs(inputs={"spec": SPEC, "costs": COSTS}, price_snapshot=prices,
                                       rate_snapshot=rates)
    assert out.status == "done", out.error
    result = json.loads(json.dumps(out.result, cls=DjangoJSONEncoder))
    body = json.dumps(result, separators=(",", ":")).encode()
    costs = result["costs"]
    options = costs["options"]
    full = [o for o in options if o.get("cash_flow")]
    summary = {
        "result_kb_compact": round(len(body) / 1024, 1),
        "result_kb_gzip": round(len(gzip.compress(body)) / 1024, 1),
        "sizing_kb": round(kb(result["sizing"]), 1), "decision_kb": round(kb(result["decision"]), 1),
        "options_listed": len(options), "options_in_full": len(full),
        "options_in_full_kb": round(kb(full), 1),
        "options_summary_only_kb": round(kb(options) - kb(full), 1),
        **{f"costs.{k}_kb": round(kb(costs[k]), 1) for k in ("freshness", "skipped", "inputs_used", "decision",
                                                              "monte_carlo", "sensitivity")},
    }
    dec = costs.get("decision") or {}
    named = {(dec.get(k) or {}).get("id") for k in NAMED if isinstance(dec.get(k), dict)}
    named |= {r.get("id") for r in dec.get("ranked") or []} | {o["id"] for o in full}
    presented = [o for o in options if o["id"] in named]
    summary["if_only_named_options"] = len(presented)
    summary["if_only_named_options_result_kb"] = round(kb({**result, "costs": {**costs, "options": presented}}), 1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
