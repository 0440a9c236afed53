"""Benchmark: server time to render the plan page of a full plan (issue 5: <= 150 ms median),
and its query count with 1 and with 10 versions (must be equal).

Run after `make setup` (database migrated, catalog and rate card loaded):
    .venv/bin/python bench/bench_plan_page.py [--repeat 31]
Creates a throwaway team, user and plan, times GET /plans/<id>/ through Django's test client
(the whole request: middleware, queries, template rendering, no network), then deletes them.
Prints a JSON summary. No assertion: figures go to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from config.celery import app  # noqa: E402
from planner import services  # noqa: E402
from planner.models import Plan, Team  # noqa: E402

SPEC = {"kind": "inference", "model": {"preset": "llama-3.1-8b"},
        "serving": {"context_length": 8192, "concurrency": 16, "requests_per_second": 2}}
OPTIONS = {"horizon_months": 36, "currency": "USD", "include_vat": False, "utilisation": 0.6}


def timed_get(client: Client, url: str) -> tuple[float, int]:
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - start
    assert response.status_code == 200, response.status_code
    return elapsed, len(queries)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=31)
    args = ap.parse_args()
    app.conf.task_always_eager = True  # compute in-process, whatever the broker settings say
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    name = f"bench-{uuid.uuid4().hex[:8]}"
    user = get_user_model().objects.create_user(username=name, password=uuid.uuid4().hex)
    team = services.team_create(name=name, owner=user)
    try:
        workload = services.workload_create(team=team, name=name, spec=SPEC, user=user)
        plan = services.plan_create(team=team, workload=workload, options=OPTIONS, user=user)
        version = plan.versions.get()
        if version.status != "done":
            sys.exit(f"the plan did not compute ({version.status}: {version.error}); run `make setup` first")
        client = Client()
        client.force_login(user)
        url = f"/plans/{plan.id}/"
        timed_get(client, url)  # warm up templates and caches
        times, queries_1 = [], 0
        for _ in range(args.repeat):
            elapsed, queries_1 = timed_get(client, url)
            times.append(elapsed)
        for _ in range(9):
            services.plan_recompute(plan=plan, user=user)
        _, queries_10 = timed_get(client, url)
        result = version.result
        summary = {
            "median_ms": round(statistics.median(times) * 1000, 1),
            "min_ms": round(min(times) * 1000, 1),
            "max_ms": round(max(times) * 1000, 1),
            "repeat": args.repeat,
            "queries_with_1_version": queries_1,
            "queries_with_10_versions": queries_10,
            "options_in_result": len(result["costs"]["options"]),
            "candidates_in_result": len(result["sizing"]["candidates"].get("ranked", [])),
            "database": connection.vendor,
            "load_average_1m": round(os.getloadavg()[0], 1),
        }
        print(json.dumps(summary, indent=1))
    finally:
        Plan.objects.filter(team=team).delete()
        Team.objects.filter(pk=team.pk).delete()
        user.delete()


if __name__ == "__main__":
    main()
