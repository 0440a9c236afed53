#!/usr/bin/env bash
# Fault tests with real processes (tests/reliability/test_faults.py, test_production_faults.py):
# ten Redis outages, kill -9 of workers, a PostgreSQL restart, under gunicorn + a prefork
# worker + beat with the production settings. They stop and start PostgreSQL and Redis, so
# this script starts instances OF ITS OWN on free ports (initdb in a temporary folder, a
# redis-server without persistence) and removes them afterwards: the machine's shared
# services are never touched, and a machine without running services can run it (needs
# the PostgreSQL and Redis binaries: scripts/services.sh installs them). Root (runs
# PostgreSQL as the postgres user). Figures: test-artifacts/fault-report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$PWD/.venv/bin/python}

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PGBIN" ] || ! command -v redis-server >/dev/null; then
  echo "fault tests: PostgreSQL and Redis binaries are needed (bash scripts/services.sh installs them)" >&2
  exit 2
fi
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
WORK=$(mktemp -d /tmp/gpu-planner-faults.XXXXXX)
chmod 755 "$WORK"; chown postgres "$WORK"
PG_PORT=$(free_port); REDIS_PORT=$(free_port)
cleanup() {
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -m immediate stop >/dev/null 2>&1 || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg" -A trust -U postgres >/dev/null
cat >> "$WORK/pg/postgresql.conf" <<CONF
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK'
fsync = off
max_connections = 200
CONF
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg.log" -w start >/dev/null
runuser -u postgres -- "$PGBIN/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
  -c "CREATE ROLE gpu_planner LOGIN CREATEDB PASSWORD 'gpu_planner'" -c "CREATE DATABASE gpu_planner OWNER gpu_planner"
redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --dir "$WORK" \
  --logfile "$WORK/redis.log"
for _ in $(seq 1 30); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
echo "fault tests: own PostgreSQL on :$PG_PORT, own Redis on :$REDIS_PORT"

export DATABASE_URL=postgres://gpu_planner:gpu_planner@127.0.0.1:$PG_PORT/gpu_planner
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export FAULT_PG_DATADIR=$WORK/pg FAULT_PG_BIN=$PGBIN
export REQUIRE_SERVICES=1 RUN_FAULT_TESTS=1
unset CELERY_BROKER_URL CELERY_RESULT_BACKEND

mkdir -p test-artifacts
start=$(date +%s)
set +e
"$PY" -m pytest tests/reliability -m fault -p no:xdist -p no:cacheprovider -q -s \
  -o log_cli=false 2>&1 | tee test-artifacts/fault-tests.log | grep -E "FAULT-REPORT|FAULT-STEP|[0-9]+ (passed|failed)|^(FAILED|ERROR) "
rc=${PIPESTATUS[0]}
set -e
grep -E "FAULT-REPORT|FAULT-STEP" test-artifacts/fault-tests.log > test-artifacts/fault-report.txt || true
echo "fault tests: exit $rc in $(( $(date +%s) - start )) s (report: test-artifacts/fault-report.txt)"
exit "$rc"
