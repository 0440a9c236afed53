"""Helpers for the reliability tests: real worker processes and real service outages.

Tests marked `fault` stop PostgreSQL or Redis for the whole machine, so they run only when
RUN_FAULT_TESTS=1 (scripts/fault_tests.sh runs them serially, after the other tests) and
need root (the service commands of scripts/services.sh). Each restores the services in a
`finally`, whatever happened.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from urllib.parse import urlsplit

import pytest

from tests.conftest import ROOT, skip_or_fail

RUN_FAULT_TESTS = os.environ.get("RUN_FAULT_TESTS") == "1"
# The instances the tests use (DATABASE_URL / REDIS_URL) are the ones stopped and started:
# in CI the machine's own; a developer can point them at spare ones (docs/RELIABILITY.md).
_db, _redis = urlsplit(os.environ.get("DATABASE_URL", "")), urlsplit(os.environ.get("REDIS_URL", ""))
PG_HOST, PG_PORT = _db.hostname or "127.0.0.1", _db.port or 5432
REDIS_HOST, REDIS_PORT = _redis.hostname or "127.0.0.1", _redis.port or 6379


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="fault test: run by scripts/fault_tests.sh (RUN_FAULT_TESTS=1)")
    for item in items:
        if "fault" in item.keywords and not RUN_FAULT_TESTS:
            item.add_marker(skip)


def wait_until(predicate, *, timeout_s: float, interval_s: float = 0.25, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


# --- services ---------------------------------------------------------------------------


def _run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def redis_up() -> bool:
    return _run(["redis-cli", "-h", REDIS_HOST, "-p", str(REDIS_PORT), "ping"]).stdout.strip() == "PONG"


def redis_stop() -> None:
    _run(["redis-cli", "-h", REDIS_HOST, "-p", str(REDIS_PORT), "shutdown", "nosave"])
    wait_until(lambda: not redis_up(), timeout_s=15, what="Redis to stop")


def redis_start() -> None:
    if redis_up():
        return
    os.makedirs("/var/lib/redis", exist_ok=True)
    os.makedirs("/var/log/redis", exist_ok=True)
    logfile = "/var/log/redis/ci.log" if REDIS_PORT == 6379 else f"/var/log/redis/fault-{REDIS_PORT}.log"
    _run(["redis-server", "--daemonize", "yes", "--bind", REDIS_HOST, "--port", str(REDIS_PORT),
          "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", logfile])
    wait_until(redis_up, timeout_s=15, what="Redis to start")


def pg_up() -> bool:
    return _run(["pg_isready", "-q", "-h", PG_HOST, "-p", str(PG_PORT)]).returncode == 0


# scripts/fault_tests.sh runs a PostgreSQL instance of its own (initdb in a temporary
# folder): FAULT_PG_DATADIR names it, FAULT_PG_BIN its pg_ctl's folder. Without them, the
# local Debian cluster listening on PG_PORT (pg_lsclusters) is the one stopped and started.
FAULT_PG_DATADIR = os.environ.get("FAULT_PG_DATADIR", "")
FAULT_PG_BIN = os.environ.get("FAULT_PG_BIN", "")


def pg_cluster() -> tuple[str, str]:
    """(version, name) of the local cluster listening on PG_PORT (pg_lsclusters)."""
    for line in _run(["pg_lsclusters", "-h"]).stdout.splitlines():
        version, name, port = line.split()[:3]
        if int(port) == PG_PORT:
            return version, name
    raise AssertionError(f"no local PostgreSQL cluster on port {PG_PORT}")


def pg_ctl(action: str) -> None:
    if FAULT_PG_DATADIR:
        cmd = ["runuser", "-u", "postgres", "--", os.path.join(FAULT_PG_BIN, "pg_ctl"), "-D", FAULT_PG_DATADIR,
               "-w", "-l", os.path.join(os.path.dirname(FAULT_PG_DATADIR), "pg.log")]
        cmd += ["-m", "fast", "stop"] if action == "stop" else [action]
    else:
        version, name = pg_cluster()
        cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, action]
    result = _run(cmd, timeout=120)
    if result.returncode != 0 and action != "stop":
        raise AssertionError(f"pg_ctl {action} failed: {result.stderr}")


def pg_ensure_started() -> None:
    if not pg_up():
        pg_ctl("start")
    wait_until(pg_up, timeout_s=60, what="PostgreSQL to accept connections")


@pytest.fixture
def fault_services():
    """Root, PostgreSQL and Redis available; both are running again after the test."""
    if os.geteuid() != 0:
        skip_or_fail("fault tests stop and start services: they need root")
    if not (pg_up() and redis_up()):
        skip_or_fail("PostgreSQL and Redis must be running before a fault test")
    try:
        yield
    finally:
        pg_ensure_started()
        redis_start()


# --- workers ------------------------------------------------------------------------------


def worker_database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"] != "django.db.backends.postgresql":
        skip_or_fail("real workers need PostgreSQL (DATABASE_URL)")
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or PG_HOST}:{s['PORT'] or PG_PORT}/{s['NAME']}"


class WorkerProcess:
    """`celery worker` in its own process group (kill -9 takes the pool and beat too)."""

    def __init__(self, *, queue: str, node: str, extra_env: dict | None = None, beat: bool = False,
                 concurrency: int | None = None):
        self.queue, self.node, self.beat = queue, f"{node}@{os.uname().nodename}", beat
        self.concurrency = concurrency  # None: the solo pool; N: prefork with N processes (production)
        self.env = {
            **os.environ,
            "DATABASE_URL": worker_database_url(),
            "REDIS_URL": os.environ["REDIS_URL"],
            "CELERY_QUEUE": queue,
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self.env.pop("CELERY_BROKER_URL", None)
        self.env.pop("CELERY_RESULT_BACKEND", None)
        self.log_path = ROOT / "test-artifacts" / f"worker-{queue}-{node}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> "WorkerProcess":
        self.log_path.parent.mkdir(exist_ok=True)
        pool = ["--pool=solo"] if self.concurrency is None else ["--pool=prefork", f"--concurrency={self.concurrency}"]
        cmd = [sys.executable, "-m", "celery", "-A", "config", "worker", *pool, "-Q", self.queue,
               "-n", self.node, "--without-gossip", "--without-mingle", "-l", "INFO"]
        if self.beat:
            cmd += ["-B", "-s", str(self.log_path.with_suffix(".beat-schedule"))]
        log = open(self.log_path, "a")  # noqa: SIM115 - the child owns it
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        return self

    def wait_ready(self, timeout_s: float = 30) -> "WorkerProcess":
        from config.celery import app

        def answered():
            if self.proc.poll() is not None:
                raise AssertionError(f"worker {self.node} exited early, see {self.log_path}")
            return app.control.ping(destination=[self.node], timeout=0.5)

        wait_until(answered, timeout_s=timeout_s, interval_s=0.1, what=f"worker {self.node} to answer a ping")
        return self

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


@pytest.fixture
def worker_queue(django_db_setup, transactional_db):
    """A fresh queue name routed to by this test process; restored afterwards."""
    from config.celery import app

    if not os.environ.get("REDIS_URL"):
        skip_or_fail("REDIS_URL is not set")
    worker_database_url()
    queue = f"rel-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{uuid.uuid4().hex[:8]}"
    old = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    workers: list[WorkerProcess] = []
    try:
        yield queue, workers
    finally:
        for w in workers:
            w.stop()
        app.conf.task_default_queue = old


@pytest.fixture
def catalog_loaded(transactional_db):
    """The shipped catalog and rate card, so computations end "done" like in production."""
    from django.core.management import call_command

    call_command("load_catalog", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    call_command("load_rate_cards", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115


def statuses(version_ids) -> dict[int, str]:
    from planner.models import PlanVersion

    return dict(PlanVersion.objects.filter(id__in=version_ids).values_list("id", "status"))


def all_finished(version_ids) -> bool:
    return all(s in ("done", "failed") for s in statuses(version_ids).values())


