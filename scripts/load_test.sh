#!/usr/bin/env bash
# Load test (issue 7): locust headless, $LOAD_USERS users for $LOAD_TIME against gunicorn +
# PostgreSQL + Redis + a real Celery worker (and beat), mixing page views, estimates and plan
# creation. Passes only with zero 5xx and every created plan done. Prints p50/p95/p99 and
# writes the figures to test-artifacts/load/ (docs/RELIABILITY.md records them).
#
#   DATABASE_URL=postgres://gpu_planner:gpu_planner@127.0.0.1:5432/gpu_planner \
#   REDIS_URL=redis://127.0.0.1:6379/14 scripts/load_test.sh
#
# It uses a fresh database (dropped afterwards) and its own Redis db number / queue names.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$PWD/.venv/bin/python}
USERS=${LOAD_USERS:-50}
SPAWN=${LOAD_SPAWN_RATE:-10}
RUN_TIME=${LOAD_TIME:-60s}
PORT=${LOAD_PORT:-8877}
WEB_WORKERS=${LOAD_WEB_WORKERS:-4}
CELERY_CONCURRENCY=${LOAD_CELERY_CONCURRENCY:-2}
ACCOUNTS_N=${LOAD_ACCOUNTS_N:-10}
DRAIN_S=${LOAD_DRAIN_SECONDS:-180}
OUT=test-artifacts/load
mkdir -p "$OUT"
: "${DATABASE_URL:?set DATABASE_URL to PostgreSQL}"
: "${REDIS_URL:?set REDIS_URL}"
[[ "$DATABASE_URL" == postgres* ]] || { echo "load test needs PostgreSQL"; exit 2; }

base=${DATABASE_URL%/*}
DB="gpu_planner_load_$$"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$PY" - <<PYEOF || true
import psycopg
with psycopg.connect("$base/postgres", autocommit=True) as c:
    c.execute('DROP DATABASE IF EXISTS "$DB" WITH (FORCE)')
PYEOF
}
trap cleanup EXIT

"$PY" - <<PYEOF
import psycopg
with psycopg.connect("$base/postgres", autocommit=True) as c:
    c.execute('DROP DATABASE IF EXISTS "$DB"')
    c.execute('CREATE DATABASE "$DB"')
PYEOF
export DATABASE_URL="$base/$DB" DJANGO_SETTINGS_MODULE=config.settings DJANGO_DEBUG=False LOG_LEVEL=WARNING
export DATABASE_CONN_MAX_AGE=60
# Many users share one IP and a few tokens here: lift the API rate limits for the run only.
export API_THROTTLE_RATE=100000/min API_ANON_THROTTLE_RATE=100000/min
unset CELERY_BROKER_URL CELERY_RESULT_BACKEND CELERY_QUEUE
"$PY" -c "import redis; redis.Redis.from_url('$REDIS_URL').flushdb()"

"$PY" manage.py migrate -v 0
"$PY" manage.py load_catalog > /dev/null
"$PY" manage.py load_rate_cards > /dev/null
"$PY" - "$ACCOUNTS_N" > "$OUT/accounts.json" <<'PYEOF'
import json, sys
import django
django.setup()
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from planner.api.schema import SPEC_EXAMPLES
from planner.api.tokens import api_token_create
from planner.services import plan_create, team_create, workload_create

out = []
for i in range(int(sys.argv[1])):
    user = get_user_model().objects.create_user(f"load{i}", password=f"load-pass-{i}-x9")
    team = team_create(name=f"Load team {i}", owner=user)
    workload = workload_create(team=team, name="Chat", spec=SPEC_EXAMPLES["inference"], user=user)
    plan = plan_create(team=team, workload=workload, options={}, user=user, name="Seed plan")
    _token, key = api_token_create(user=user, name="load")
    session = SessionStore()
    session.update({SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
                    HASH_SESSION_KEY: user.get_session_auth_hash()})
    session.create()
    out.append({"username": user.username, "token": key, "session": session.session_key,
                "workload": workload.id, "plans": [plan.id]})
print(json.dumps(out))
PYEOF

"$PY" -m gunicorn config.wsgi:application --bind "127.0.0.1:$PORT" --workers "$WEB_WORKERS" --timeout 60 \
  --access-logfile /dev/null --error-logfile "$OUT/gunicorn.log" &
PIDS+=($!)
"$PY" -m celery -A config worker -n "load-$$@%h" --concurrency "$CELERY_CONCURRENCY" -l WARNING \
  > "$OUT/worker.log" 2>&1 &
PIDS+=($!)
"$PY" -m celery -A config beat -s "$OUT/celerybeat-schedule" -l WARNING > "$OUT/beat.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -q '"status": "ok"' && break; sleep 1
done
curl -sS "http://127.0.0.1:$PORT/readyz"; echo

export LOAD_ACCOUNTS="$OUT/accounts.json" LOAD_STATS="$OUT/stats.json"
cut -d" " -f1-3 /proc/loadavg > "$OUT/loadavg_before"  # the machine may be busy with other work
"$PWD/.venv/bin/locust" -f bench/locustfile.py --headless -u "$USERS" -r "$SPAWN" -t "$RUN_TIME" \
  --host "http://127.0.0.1:$PORT" --csv "$OUT/locust" --only-summary > "$OUT/locust.log" 2>&1 || true

echo "load: locust finished; waiting up to ${DRAIN_S}s for the queued plans to be computed"
"$PY" - "$DRAIN_S" "$USERS" "$RUN_TIME" <<'PYEOF'
import csv, json, os, sys, time
import django
django.setup()
from planner.models import PlanVersion

drain_s, users, run_time = int(sys.argv[1]), sys.argv[2], sys.argv[3]
stats = json.load(open(os.environ["LOAD_STATS"]))
created = [p for p in stats["plans_created"] if p]
versions = PlanVersion.objects.filter(plan_id__in=created)
deadline = time.monotonic() + drain_s
started = time.monotonic()
while time.monotonic() < deadline and versions.exclude(status__in=["done", "failed"]).exists():
    time.sleep(1)
drain = time.monotonic() - started
by_status = {s: versions.filter(status=s).count() for s in ("pending", "running", "done", "failed")}
rows = list(csv.DictReader(open(os.environ["LOAD_STATS"].replace("stats.json", "locust_stats.csv"))))
agg = next(r for r in rows if r["Name"] == "Aggregated")
report = {
    "users": users, "run_time": run_time, "requests": int(agg["Request Count"]),
    "failures": int(agg["Failure Count"]), "server_errors_5xx": stats["server_errors"],
    "rps": round(float(agg["Requests/s"]), 1),
    "p50_ms": agg["50%"], "p95_ms": agg["95%"], "p99_ms": agg["99%"], "max_ms": round(float(agg["Max Response Time"])),
    "by_status": stats["by_status"], "plans_submitted": len(created), "plan_versions": by_status,
    "drain_s_after_run": round(drain, 1),
    "cores": os.cpu_count(),
    "loadavg_1_5_15_before": open(os.path.join(os.path.dirname(os.environ["LOAD_STATS"]), "loadavg_before")).read().split(),
    "loadavg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
    "per_endpoint": {r["Name"]: {"n": int(r["Request Count"]), "p50": r["50%"], "p95": r["95%"], "p99": r["99%"]}
                     for r in rows if r["Name"] != "Aggregated"},
}
open(os.environ["LOAD_STATS"].replace("stats.json", "report.json"), "w").write(json.dumps(report, indent=2))
print(json.dumps(report, indent=2))
ok = report["server_errors_5xx"] == 0 and by_status["done"] == len(created) == versions.count()
print("load: PASS" if ok else "load: FAIL (5xx seen or not every created plan is done)")
sys.exit(0 if ok else 1)
PYEOF
