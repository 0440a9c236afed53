"""Faults at production shape: one run, ten Redis outages, three worker kills, a PostgreSQL restart.

What runs (issue 16): gunicorn with 2 workers; a prefork Celery worker with the production
concurrency (2) under a supervisor that restarts it when it exits (what compose `restart:`
and the systemd unit in docs/SCALING.md do); a separate beat; the real sweeper, grace and
visibility settings (config/settings.py defaults, nothing shortened). Plans are submitted
over HTTP (`POST /api/v1/plans/` with an API token and an Idempotency-Key, retried with the
same key until accepted, like a careful client) by a thread that keeps submitting through
every fault. Each computation sleeps 1 s inside its row lock (the only test-only setting),
so faults hit computations in flight.

After each fault the test waits for every plan accepted so far and records the recovery
time (latest finished_at minus the moment the fault ended); each must be <= 30 s. At the end:
submitted (accepted) = plans = done, each finished exactly once (audit log), each result equal
to a direct computation, and the worker never exited except when the test killed it.
Run by scripts/fault_tests.sh; figures go to docs/RELIABILITY.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest
from django.utils import timezone

from planner.models import Plan, PlanVersion

from .conftest import (
    ROOT,
    WorkerProcess,
    pg_ctl,
    pg_ensure_started,
    redis_start,
    redis_stop,
    wait_until,
    worker_database_url,
)
from .helpers import expected_outcome
from .test_faults import _finish_transitions, _free_port, _http

pytestmark = [pytest.mark.fault, pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("catalog_loaded")]

REDIS_OUTAGES_S = (5, 8, 5, 12, 6, 30, 5, 10, 7, 5)  # ten outages of 5-30 s
RECOVERY_LIMIT_S = 30.0
CONCURRENCY = 2  # docker-compose.yml's worker
SUBMIT_INTERVAL_S = 2.0


class Supervised:
    """A worker restarted 1 s after it exits, like compose `restart: unless-stopped`."""

    def __init__(self, make):
        self.make, self.proc, self.expected_exits, self.unexpected_exits = make, None, 0, []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.start()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def start(self):
        self.worker = self.make().start()

    def _watch(self):
        while not self._stop.wait(0.5):
            with self._lock:
                code = self.worker.proc.poll()
                if code is None:
                    continue
                if self.expected_exits:
                    self.expected_exits -= 1
                else:
                    self.unexpected_exits.append(code)
                time.sleep(1)
                self.start()

    def kill_children(self) -> list[int]:
        """kill -9 the pool processes (what the OOM killer does); the main process stays."""
        out = subprocess.run(["pgrep", "-P", str(self.worker.proc.pid)], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return pids

    def kill_all(self):
        with self._lock:
            self.expected_exits += 1
            os.killpg(self.worker.proc.pid, signal.SIGKILL)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=5)
        self.worker.stop()


class Submitter(threading.Thread):
    """POST /api/v1/plans/ every ~2 s (about 1/3 of what the 2 processes compute, so a 30 s
    outage leaves a backlog they clear in seconds); retries each with its Idempotency-Key
    until accepted."""

    def __init__(self, base: str, key: str, workload_id: int):
        super().__init__(daemon=True)
        self.base, self.key, self.workload_id = base, key, workload_id
        self.accepted: dict[str, int] = {}  # idempotency key -> plan id
        self.attempts = self.rejected = 0
        self.stop_event = threading.Event()

    def _post(self, idem: str, body: dict) -> int | None:
        req = urllib.request.Request(self.base + "/api/v1/plans/", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Token {self.key}", "Content-Type": "application/json",
                                              "Idempotency-Key": idem})
        self.attempts += 1
        try:
            with urllib.request.urlopen(req, timeout=15) as r:
                if r.status in (201, 202):
                    return json.loads(r.read())["plan"]["id"]
        except (urllib.error.HTTPError, OSError):
            self.rejected += 1
        return None

    def run(self):
        n = 0
        while not self.stop_event.is_set():
            idem, body = uuid.uuid4().hex, {"workload": self.workload_id, "name": f"fault run {n}"}
            while not self.stop_event.is_set() or idem not in self.accepted:
                plan_id = self._post(idem, body)
                if plan_id is not None:
                    self.accepted[idem] = plan_id
                    break
                time.sleep(0.5)
            n += 1
            time.sleep(SUBMIT_INTERVAL_S)


def _version_ids(plan_ids) -> list[int]:
    return list(PlanVersion.objects.filter(plan_id__in=plan_ids).values_list("id", flat=True))


def _recover(fault: str, ended_at, submitter: Submitter, report: list) -> None:
    """Wait until every plan accepted so far is done; record how long after the fault."""
    plan_ids = list(submitter.accepted.values())

    def all_done():
        versions = PlanVersion.objects.filter(plan_id__in=plan_ids)
        return versions.count() == len(plan_ids) and not versions.exclude(status="done").exists()

    wait_until(all_done, timeout_s=RECOVERY_LIMIT_S + 30, interval_s=0.5, what=f"plans to finish after {fault}")
    last = max(PlanVersion.objects.filter(plan_id__in=plan_ids).values_list("finished_at", flat=True))
    recovery_s = max((last - ended_at).total_seconds(), 0.0)
    report.append({"fault": fault, "plans": len(plan_ids), "recovery_s": round(recovery_s, 1)})
    print("FAULT-STEP", report[-1], flush=True)


def test_production_shape_survives_ten_redis_outages_three_worker_kills_and_a_postgresql_restart(
    worker_queue, fault_services
):
    from planner.api.tokens import api_token_create
    from tests.planner_factories import MembershipFactory, WorkloadFactory

    queue, _workers = worker_queue
    membership = MembershipFactory()
    workload = WorkloadFactory(team=membership.team)
    _token, key = api_token_create(user=membership.user, name="fault run")

    env = {**os.environ, "DATABASE_URL": worker_database_url(), "DJANGO_DEBUG": "False", "CELERY_QUEUE": queue,
           "DATABASE_CONN_MAX_AGE": "60", "API_THROTTLE_RATE": "100000/min", "LOG_LEVEL": "WARNING"}
    port = _free_port()
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    web_log = open(artifacts / "fault-run-gunicorn.log", "w")  # noqa: SIM115
    web = subprocess.Popen([sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
                            "--workers", "2", "--timeout", "30"], cwd=ROOT, env=env, stdout=web_log,
                           stderr=subprocess.STDOUT)
    beat_log = open(artifacts / "fault-run-beat.log", "w")  # noqa: SIM115
    beat = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "beat", "-l", "INFO",
                             "-s", str(artifacts / "fault-run-beat-schedule")], cwd=ROOT, env=env, stdout=beat_log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    worker_env = {"FAULT_INJECTION_COMPUTE_DELAY_SECONDS": "1", "LOG_LEVEL": "INFO"}
    supervised = Supervised(lambda: WorkerProcess(queue=queue, node=f"{queue}-prod", extra_env=worker_env,
                                                  concurrency=CONCURRENCY))
    base = f"http://127.0.0.1:{port}"
    submitter = Submitter(base, key, workload.id)
    report: list[dict] = []
    started = time.monotonic()
    try:
        wait_until(lambda: _http(base + "/healthz")[0] == 200, timeout_s=60, what="gunicorn")
        supervised.worker.wait_ready(timeout_s=60)
        submitter.start()
        wait_until(lambda: len(submitter.accepted) >= 3, timeout_s=60, what="the first submissions")

        def running_now():
            return PlanVersion.objects.filter(plan__team=membership.team, status="running").exists()

        for i, outage_s in enumerate(REDIS_OUTAGES_S):
            wait_until(running_now, timeout_s=30, interval_s=0.1, what="a computation in flight")
            redis_stop()
            time.sleep(outage_s)
            redis_start()
            _recover(f"redis outage {i + 1} ({outage_s} s)", timezone.now(), submitter, report)

        for i in range(3):
            wait_until(running_now, timeout_s=30, interval_s=0.1, what="a computation in flight")
            if i == 0:
                killed = supervised.kill_children()
                assert killed, "the prefork worker has pool processes"
                fault = "kill -9 of the worker's pool processes"
            else:
                supervised.kill_all()
                fault = "kill -9 of the whole worker (main process and pool)"
            _recover(f"{fault} ({i + 1})", timezone.now(), submitter, report)

        wait_until(running_now, timeout_s=30, interval_s=0.1, what="a computation in flight")
        pg_ctl("stop")
        time.sleep(5)
        pg_ensure_started()
        ended = timezone.now()
        from django.db import connection

        connection.close()  # this process's own connection died with the server
        _recover("postgresql restart (5 s down)", ended, submitter, report)

        submitter.stop_event.set()
        submitter.join(timeout=60)
        plan_ids = list(submitter.accepted.values())
        wait_until(lambda: not PlanVersion.objects.filter(plan_id__in=plan_ids).exclude(status="done").exists(),
                   timeout_s=60, what="the last plans")
        version_ids = _version_ids(plan_ids)
        plans_in_db = Plan.objects.filter(team=membership.team).count()
        done = PlanVersion.objects.filter(id__in=version_ids, status="done").count()
        summary = {
            "fault": "production shape: 10 redis outages, 3 worker kills, postgresql restart",
            "submitted": len(plan_ids), "plans_in_db": plans_in_db, "versions": len(version_ids), "done": done,
            "http_attempts": submitter.attempts, "http_rejected": submitter.rejected,
            "max_recovery_s": max(r["recovery_s"] for r in report),
            "unexpected_worker_exits": supervised.unexpected_exits,
            "run_s": round(time.monotonic() - started),
        }
        print("FAULT-REPORT", summary, flush=True)
        assert len(set(plan_ids)) == len(plan_ids) == plans_in_db, "one plan per accepted submission, no duplicates"
        assert len(version_ids) == len(plan_ids) == done, "every accepted plan computed"
        for vid in version_ids:
            assert _finish_transitions(vid) == 1, f"version {vid} finished more than once"
            row = PlanVersion.objects.get(pk=vid)
            assert (row.status, row.full_result) == expected_outcome(vid), f"version {vid}: {row.error}"
        slow = [r for r in report if r["recovery_s"] > RECOVERY_LIMIT_S]
        assert not slow, f"recovery slower than {RECOVERY_LIMIT_S} s: {slow}"
        assert supervised.unexpected_exits == [], "the worker must survive broker outages"
    finally:
        submitter.stop_event.set()
        pg_ensure_started()
        redis_start()
        supervised.stop()
        web.terminate()
        web.wait(timeout=15)
        os.killpg(beat.pid, signal.SIGKILL)
        beat.wait(timeout=15)
        web_log.close()
        beat_log.close()
