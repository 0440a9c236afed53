#!/usr/bin/env bash
# Fault tests with real processes (tests/reliability/test_faults.py): kill -9 a worker
# mid-computation, stop Redis during submits, restart PostgreSQL under a running gunicorn.
# They stop and start the PostgreSQL cluster and Redis that DATABASE_URL / REDIS_URL point
# at, so they run serially, as root, after the rest of the suite (.ci/run calls this last).
# Every test restores the services in a `finally`. Figures: test-artifacts/fault-report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

export DATABASE_URL=${DATABASE_URL:-postgres://gpu_planner:gpu_planner@127.0.0.1:5432/gpu_planner}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/15}
export REQUIRE_SERVICES=1 RUN_FAULT_TESTS=1
unset CELERY_BROKER_URL CELERY_RESULT_BACKEND

mkdir -p test-artifacts
start=$(date +%s)
set +e
.venv/bin/python -m pytest tests/reliability -m fault -p no:xdist -p no:cacheprovider -q -s \
  -o log_cli=false 2>&1 | tee test-artifacts/fault-tests.log | grep -E "FAULT-REPORT|[0-9]+ (passed|failed)|^(FAILED|ERROR) "
rc=${PIPESTATUS[0]}
set -e
grep "FAULT-REPORT" test-artifacts/fault-tests.log > test-artifacts/fault-report.txt || true
echo "fault tests: exit $rc in $(( $(date +%s) - start )) s (report: test-artifacts/fault-report.txt)"
exit "$rc"
