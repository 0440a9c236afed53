"""API benchmark (issue 6): gunicorn + PostgreSQL, 32 concurrent connections, one run.

Measures, in this order and against the same server:
  floor     GET  /api/v1/me/                          (token auth + DRF, one indexed query)
  plan      GET  /api/v1/plans/<id>/versions/<n>/     (a done version with a real result)
  estimate  POST /api/v1/estimate/                    (sizing + costs, nothing saved)
and prints p50/p95/p99 latency and requests/s for each, the plan/floor throughput ratio
(goal >= 0.70) and the estimate p95 (goal <= 200 ms) at 1 connection, at one connection per
gunicorn worker and at 32.

The load generator is wrk (C, low overhead: a Python client on the same 2 cores would
measure itself). Install it with `apt-get install -y wrk`.

    DATABASE_URL=postgres://gpu_planner:gpu_planner@127.0.0.1:5432/gpu_planner \\
        .venv/bin/python bench/bench_api.py [--seconds 15] [--connections 32] [--workers 4]

A fresh database <name>_bench is created and dropped; REDIS_URL is ignored (the one plan
computed for the benchmark is computed in-process before the server starts).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LUA = r"""
wrk.method = "%(method)s"
wrk.headers["Authorization"] = "Token %(key)s"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.headers["Accept-Encoding"] = "gzip"  -- as requests and curl --compressed send it
%(body)s
%(extra)s
local errors = 0
response = function(status, headers, body)
  if status ~= %(expect)d then errors = errors + 1 end
end
done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format('RESULT {"requests": %%d, "seconds": %%.3f, "p50_ms": %%.2f, "p95_ms": %%.2f, ' ..
    '"p99_ms": %%.2f, "non_%(expect)d": %%d, "socket_errors": %%d}\n',
    summary.requests, s, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, errors,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


def _admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def _setup(env: dict) -> tuple[str, str, dict]:
    """Migrate, load the shipped catalog, create a user, team, computed plan and token."""
    py = sys.executable
    for cmd in (["migrate", "-v", "0"], ["load_catalog"], ["load_rate_cards"]):
        subprocess.run([py, "manage.py", *cmd], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    script = r"""
import django, json
django.setup()
from django.contrib.auth import get_user_model
from planner.api.schema import SPEC_EXAMPLES
from planner.api.tokens import api_token_create
from planner.services import plan_create, plan_version_compute, team_create, workload_create
user = get_user_model().objects.create_user("bench")
team = team_create(name="Bench", owner=user)
workload = workload_create(team=team, name="Inference", spec=SPEC_EXAMPLES["inference"], user=user)
plan = plan_create(team=team, workload=workload, options={}, user=user, name="Bench plan", compute=False)
from planner.services import plan_version_create
version = plan_version_create(plan=plan, user=user)
version = plan_version_compute(version_id=version.id)
assert version.status == "done", version.error
_t, key = api_token_create(user=user, name="bench")
print(json.dumps({"key": key, "url": f"/api/v1/plans/{plan.id}/versions/{version.number}/",
                  "estimate": {"spec": SPEC_EXAMPLES["inference"]}}))
"""
    out = subprocess.run([py, "-c", script], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["key"], data["url"], data["estimate"]


def _wrk(*, base: str, path: str, key: str, seconds: int, connections: int, method="GET", body=None,
         expect=200, headers=None) -> dict:
    lua_body = f"wrk.body = {json.dumps(json.dumps(body))}" if body is not None else ""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        extra = "\n".join(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in (headers or {}).items())
        fh.write(LUA % {"method": method, "key": key, "body": lua_body, "expect": expect, "extra": extra})
        script = fh.name
    try:
        out = subprocess.run(
            ["wrk", "-t", str(min(2, connections)), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "10s", "-s", script,
             f"{base}{path}"], check=True, capture_output=True, text=True,
        ).stdout
    finally:
        os.unlink(script)
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    result["rps"] = result["requests"] / result["seconds"]
    return result


def _pool(rounds: list[dict]) -> dict:
    """Requests/s over all rounds; latency percentiles as the median of the rounds'."""
    def median(key):
        values = sorted(r[key] for r in rounds)
        return values[len(values) // 2]

    seconds = sum(r["seconds"] for r in rounds)
    return {
        "requests": sum(r["requests"] for r in rounds), "seconds": seconds,
        "rps": sum(r["requests"] for r in rounds) / seconds,
        "p50_ms": median("p50_ms"), "p95_ms": median("p95_ms"), "p99_ms": median("p99_ms"),
        "non_expected": sum(next(v for k, v in r.items() if k.startswith("non_")) for r in rounds),
        "socket_errors": sum(r["socket_errors"] for r in rounds),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="per endpoint per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()

    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 2
    url = os.environ.get("DATABASE_URL", "postgres://gpu_planner:gpu_planner@127.0.0.1:5432/gpu_planner")
    if not url.startswith("postgres"):
        print("the benchmark runs on PostgreSQL: set DATABASE_URL=postgres://...", file=sys.stderr)
        return 2
    base_url, name = url.rsplit("/", 1)
    bench_db = f"{name}_bench"
    admin = f"{base_url}/postgres"
    _admin(admin, f'DROP DATABASE IF EXISTS "{bench_db}"')
    _admin(admin, f'CREATE DATABASE "{bench_db}"')
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
    env.update({
        "DATABASE_URL": f"{base_url}/{bench_db}", "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "false", "DATABASE_CONN_MAX_AGE": "60", "LOG_LEVEL": "WARNING",
        "API_THROTTLE_RATE": "10000000/min", "API_ANON_THROTTLE_RATE": "10000000/min",
    })
    server = None
    try:
        key, version_path, estimate_body = _setup(env)
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{args.port}",
             "--workers", str(args.workers), "--timeout", "120", "--access-logfile", "/dev/null", "--log-level", "warning"],
            cwd=ROOT, env=env,
        )
        base = f"http://127.0.0.1:{args.port}"
        for _ in range(60):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        common = {"base": base, "key": key, "connections": args.connections}
        sizes = {}
        for label, path, data in (("version", version_path, None),
                                  ("estimate", "/api/v1/estimate/", json.dumps(estimate_body).encode())):
            req = urllib.request.Request(f"{base}{path}", data=data, headers={
                "Authorization": f"Token {key}", "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as answer:
                sizes[label] = len(answer.read())
                if label == "version":
                    etag = answer.headers["ETag"]
        # Warm every worker's imports and caches first.
        _wrk(path="/api/v1/me/", seconds=2, **common)
        _wrk(path=version_path, seconds=2, **common)
        _wrk(path="/api/v1/estimate/", seconds=3, method="POST", body=estimate_body, **{**common, "connections": 4})
        targets = {
            "floor GET /api/v1/me/": {"path": "/api/v1/me/"},
            f"plan GET {version_path}": {"path": version_path},
            "plan GET, revalidated (If-None-Match: 304)": {
                "path": version_path, "headers": {"If-None-Match": etag}, "expect": 304},
        }
        # Floor and plan in interleaved rounds, order rotating, so a burst of other load on the
        # machine does not land on one of them only.
        runs: dict[str, list[dict]] = {label: [] for label in targets}
        labels = list(targets)
        for r in range(args.rounds):
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                runs[label].append(_wrk(seconds=args.seconds, **targets[label], **common))
        results = {label: _pool(rs) for label, rs in runs.items()}
        # Estimates last: a backlog of slow estimates would otherwise spill into other rounds.
        estimate = {"path": "/api/v1/estimate/", "method": "POST", "body": estimate_body}
        for connections in (1, args.workers):  # alone, then one per worker
            results[f"estimate POST /api/v1/estimate/ ({connections} connection{'s' * (connections > 1)})"] = _wrk(
                seconds=args.seconds, **estimate, **{**common, "connections": connections})
        results["estimate POST /api/v1/estimate/"] = _wrk(seconds=args.seconds, **estimate, **common)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        _admin(admin, f'DROP DATABASE IF EXISTS "{bench_db}"')

    print(f"\nresponse bodies: done version {sizes['version'] / 1024:.0f} KiB, "
          f"estimate {sizes['estimate'] / 1024:.0f} KiB (uncompressed JSON)")
    load = os.getloadavg()[0]
    print(f"\n1-minute load average at the end: {load:.1f}")
    print(f"{args.connections} connections, {args.rounds} interleaved rounds of {args.seconds} s, gunicorn {args.workers} sync workers, "
          f"PostgreSQL, {os.cpu_count()} CPUs\n")
    print("| endpoint | requests/s | p50 ms | p95 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, r in results.items():
        errors = next(v for k, v in r.items() if k.startswith("non_")) + r["socket_errors"]
        print(f"| {label} | {r['rps']:.0f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} | {errors} |")
    floor, plan = (list(results.values())[i] for i in range(2))
    revalidated = results["plan GET, revalidated (If-None-Match: 304)"]
    est = results["estimate POST /api/v1/estimate/"]
    ratio = plan["rps"] / floor["rps"]
    print(f"\nplan GET throughput / floor throughput = {ratio:.2f} (goal >= 0.70); "
          f"revalidated with If-None-Match: {revalidated['rps'] / floor['rps']:.2f}")
    print(f"estimate p95 at {args.connections} connections = {est['p95_ms']:.0f} ms; "
          f"at 1 connection = {results['estimate POST /api/v1/estimate/ (1 connection)']['p95_ms']:.0f} ms; "
          f"at {args.workers} = {results[f'estimate POST /api/v1/estimate/ ({args.workers} connections)']['p95_ms']:.0f} ms "
          f"(goal <= 200 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
