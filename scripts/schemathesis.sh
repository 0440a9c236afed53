#!/usr/bin/env bash
# Property-based API tests against the live OpenAPI schema (issue 6).
#
# Starts gunicorn on 127.0.0.1:$ST_PORT with a fresh database (a new PostgreSQL database when
# DATABASE_URL points at PostgreSQL, else a temporary SQLite file), loads the shipped catalog
# and rate card, creates a user with a team, a computed plan and an API token, then runs
# schemathesis with the checks not_a_server_error + response_schema_conformance.
# Prints how many test cases ran; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$PWD/.venv/bin/python}
ST=${SCHEMATHESIS:-$PWD/.venv/bin/schemathesis}
PORT=${ST_PORT:-8765}
MAX_EXAMPLES=${ST_MAX_EXAMPLES:-25}
WORK=$(mktemp -d)
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ -n "${ST_DROP_DB:-}" ]; then "$PY" - <<PYEOF || true
import psycopg
with psycopg.connect("$ST_ADMIN_URL", autocommit=True) as c:
    c.execute('DROP DATABASE IF EXISTS "$ST_DROP_DB"')
PYEOF
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Tasks run in-process in the server (no worker needed); rates high enough for fuzzing.
unset REDIS_URL CELERY_BROKER_URL CELERY_RESULT_BACKEND
export DJANGO_SETTINGS_MODULE=config.settings
export API_THROTTLE_RATE=100000/min API_ANON_THROTTLE_RATE=100000/min LOG_LEVEL=WARNING

if [[ "${DATABASE_URL:-}" == postgres* ]]; then
  base=${DATABASE_URL%/*}
  ST_DROP_DB="gpu_planner_schemathesis_$$"
  ST_ADMIN_URL="$base/postgres"
  "$PY" - <<PYEOF
import psycopg
with psycopg.connect("$ST_ADMIN_URL", autocommit=True) as c:
    c.execute('DROP DATABASE IF EXISTS "$ST_DROP_DB"')
    c.execute('CREATE DATABASE "$ST_DROP_DB"')
PYEOF
  export DATABASE_URL="$base/$ST_DROP_DB"
  WORKERS=2
else
  export DATABASE_URL="sqlite:///$WORK/schemathesis.sqlite3"
  WORKERS=1  # SQLite locks the whole file on writes: concurrent writers would see "database is locked"
fi

"$PY" manage.py migrate -v 0
"$PY" manage.py load_catalog > /dev/null
"$PY" manage.py load_rate_cards > /dev/null
KEY=$("$PY" - <<'PYEOF'
import django
django.setup()
from django.contrib.auth import get_user_model
from planner.api.models import ApiToken
from planner.api.schema import SPEC_EXAMPLES
from planner.api.tokens import api_token_create
from planner.choices import Role
from planner.models import Team
from planner.services import membership_set, plan_create, team_create, workload_create

user = get_user_model().objects.create_user("schemathesis")
team = team_create(name="Schemathesis", owner=user)
other = get_user_model().objects.create_user("schemathesis-viewer")
membership_set(team=team, user=other, role=Role.VIEWER)
workload = workload_create(team=team, name="Inference", spec=SPEC_EXAMPLES["inference"], user=user)
plan_create(team=team, workload=workload, options={}, user=user, name="Fuzzed plan")
token, key = api_token_create(user=user, name="schemathesis")
# A large id, so fuzzed DELETE /api/v1/tokens/{id}/ calls do not revoke the run's own token.
ApiToken.objects.filter(pk=token.pk).update(id=7340221985)
print(key)
PYEOF
)

"$PY" -m gunicorn config.wsgi:application --bind "127.0.0.1:$PORT" --workers "$WORKERS" --timeout 60 \
  --access-logfile /dev/null --error-logfile "$WORK/gunicorn.log" &
SERVER_PID=$!
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" > /dev/null 2>&1 && break
  sleep 0.5
done

set +e
# Run from the temporary folder: schemathesis keeps its example database in ./.schemathesis.
(cd "$WORK" && "$ST" run "http://127.0.0.1:$PORT/api/v1/schema/" \
  --checks not_a_server_error,response_schema_conformance \
  --header "Authorization: Token $KEY" \
  --max-examples "$MAX_EXAMPLES" --seed "${ST_SEED:-6}" --workers "$WORKERS" --request-timeout 30 \
  --report junit --report-junit-path "$WORK/junit.xml" --no-color) 2>&1 | tee "$WORK/out.txt"
status=${PIPESTATUS[0]}
set -e
cases=$(grep -Eo '[0-9]+ generated' "$WORK/out.txt" | tail -1 | grep -Eo '[0-9]+' || true)
echo "schemathesis: ${cases:-unknown number of} test cases ran; exit status $status"
if [ "$status" -ne 0 ]; then
  echo "--- server log (tail) ---"; tail -n 60 "$WORK/gunicorn.log" || true
fi
exit "$status"
