#!/usr/bin/env bash
# Make sure PostgreSQL and Redis run on 127.0.0.1 (install and start them only if absent),
# and that the app's database role exists. Idempotent; safe to run on every CI run.
set -euo pipefail

PG_ROLE=${PG_ROLE:-gpu_planner}
PG_PASSWORD=${PG_PASSWORD:-gpu_planner}
PG_DB=${PG_DB:-gpu_planner}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "services: installing PostgreSQL"
  apt_install postgresql
fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "services: installing Redis"
  apt_install redis-server
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  ver=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "services: starting PostgreSQL $ver"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "services: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping

# The app role needs CREATEDB: pytest-django creates test_<name> (one per xdist worker).
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -d postgres <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${PG_ROLE}') THEN
    CREATE ROLE ${PG_ROLE} LOGIN CREATEDB PASSWORD '${PG_PASSWORD}';
  END IF;
END
\$\$;
SQL
if ! runuser -u postgres -- psql -tAc "SELECT 1 FROM pg_database WHERE datname='${PG_DB}'" -d postgres | grep -q 1; then
  runuser -u postgres -- createdb -O "$PG_ROLE" "$PG_DB"
fi
echo "services: PostgreSQL and Redis ready"
