"""Fault tests with real processes: PostgreSQL, Redis, gunicorn and Celery worker subprocesses.

Run by scripts/fault_tests.sh (RUN_FAULT_TESTS=1, as root, serially). Each test counts
plans submitted vs completed; docs/RELIABILITY.md records the figures.
"""

import socket
import subprocess
import sys

import pytest

from planner.models import PlanVersion

from .conftest import (
    ROOT,
    WorkerProcess,
    all_finished,
    pg_ctl,
    pg_ensure_started,
    wait_until,
    worker_database_url,
)
from .helpers import expected_outcome, submit_plans

pytestmark = [pytest.mark.fault, pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("catalog_loaded")]

# Worker kills and Redis outages at production shape: test_production_faults.py.


def _finish_transitions(version_id: int) -> int:
    """How many times the audit log saw this version become done or failed."""
    from auditlog.models import LogEntry

    entries = LogEntry.objects.filter(content_type__model="planversion", object_id=version_id)
    return sum(1 for e in entries if (e.changes_dict.get("status") or [None, None])[1] in ("done", "failed"))


def _assert_each_completed_once(version_ids: list[int], report: dict) -> None:
    rows = {v.id: v for v in PlanVersion.objects.filter(id__in=version_ids)}
    report.update(submitted=len(version_ids), rows=len(rows),
                  completed=sum(v.status in ("done", "failed") for v in rows.values()),
                  done=sum(v.status == "done" for v in rows.values()))
    print("FAULT-REPORT", report)  # collected by scripts/fault_tests.sh into the log
    assert len(rows) == len(version_ids)
    assert report["done"] == len(version_ids), "every plan must end done (the catalog is loaded)"
    for vid in version_ids:
        status, result = expected_outcome(vid)
        assert (rows[vid].status, rows[vid].full_result) == (status, result), f"version {vid}: {rows[vid].error}"
        assert _finish_transitions(vid) == 1, f"version {vid} finished more than once"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:  # not listening yet
        return 0, ""


def test_the_app_answers_again_after_postgresql_restarts_without_restarting_it(worker_queue, fault_services):
    import os

    from django.db import connection

    queue, workers = worker_queue
    workers.append(WorkerProcess(queue=queue, node=f"{queue}-w").start().wait_ready())
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": worker_database_url(), "DJANGO_DEBUG": "False",
           "DATABASE_CONN_MAX_AGE": "60", "CELERY_QUEUE": queue}
    log = open(ROOT / "test-artifacts" / f"gunicorn-{queue}.log", "w")  # noqa: SIM115
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--timeout", "30"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _http(base + "/healthz")[0] == 200 if web.poll() is None else None,
                   timeout_s=30, what="gunicorn")
        # A page and an API view that both query the database (an unknown share token -> 404).
        assert _http(base + "/s/no-such-token/")[0] == 404
        assert _http(base + "/api/v1/shared/no-such-token/")[0] == 404
        before = submit_plans(2)

        pg_ctl("stop")
        try:
            page_status, page = _http(base + "/s/no-such-token/")
            api_status, api = _http(base + "/api/v1/shared/no-such-token/")
            assert (page_status, api_status) == (503, 503)
            assert "Traceback" not in page and "urn:gpu-planner:error:unavailable" in api
            assert _http(base + "/healthz")[0] == 200
            assert _http(base + "/readyz")[0] == 503
        finally:
            pg_ensure_started()

        wait_until(lambda: _http(base + "/s/no-such-token/")[0] == 404, timeout_s=30,
                   what="the app to answer again")
        assert _http(base + "/readyz")[0] in (200,)
        assert web.poll() is None, "gunicorn must not have been restarted"
        connection.close()  # this test process's own connection died with the server
        after = submit_plans(2)
        version_ids = before + after
        wait_until(lambda: all_finished(version_ids), timeout_s=120, what="every plan to finish")
        _assert_each_completed_once(version_ids, {"fault": "postgresql restart"})
    finally:
        web.terminate()
        web.wait(timeout=15)
        log.close()
