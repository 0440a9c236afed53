"""Shared test fixtures.

Tests run against whatever DATABASE_URL / REDIS_URL say. Locally with neither set, they use
SQLite and in-process tasks, and tests needing a real worker or browser skip. In CI
(.ci/run sets REQUIRE_SERVICES=1) such a test fails instead of skipping.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def schemathesis_hooks():
    """scripts/schemathesis_hooks.py as a module (a script, not a package: loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("st_hooks", ROOT / "scripts" / "schemathesis_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def skip_or_fail(reason: str) -> None:
    if REQUIRE_SERVICES:
        pytest.fail(f"required service unavailable in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _eager_celery_unless_worker(request):
    """Every test runs Celery tasks in-process unless it asks for a real worker."""
    from config.celery import app

    eager = request.node.get_closest_marker("worker") is None
    old = app.conf.task_always_eager
    app.conf.task_always_eager = eager or old
    yield
    app.conf.task_always_eager = old


@pytest.fixture(autouse=True)
def _default_language_after_each_test():
    """A request in Russian leaves Russian active in the thread (LocaleMiddleware activates, nothing
    deactivates): each test starts from the default language, whatever ran before it."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _cold_process_caches():
    """Per-process caches keyed by row ids (a version's rendered API body, a PDF) or by the catalog's
    revision: rolled-back rows hand their ids to the next test on SQLite, so every test starts cold,
    whichever module it is in."""
    from catalog import revision
    from planner.api.exports import pdf_cache_clear
    from planner.api.views import done_bodies

    for clear in (revision.clear, done_bodies.clear, pdf_cache_clear):
        clear()
    yield
    for clear in (revision.clear, done_bodies.clear, pdf_cache_clear):
        clear()


def _redis_url() -> str:
    return os.environ.get("REDIS_URL", "")


@pytest.fixture
def celery_worker_process(django_db_setup, django_db_blocker, transactional_db):
    """A real `celery worker` subprocess on its own queue, pointed at the *test* database.

    Tests using it must be `django_db(transaction=True)`: the worker only sees committed rows.
    """
    from django.db import connection

    from config.celery import app

    redis_url = _redis_url()
    if not redis_url:
        skip_or_fail("REDIS_URL is not set")
    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"] != "django.db.backends.postgresql":
        skip_or_fail("a real worker needs PostgreSQL (DATABASE_URL)")

    queue = f"test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{uuid.uuid4().hex[:8]}"
    db_url = (
        f"postgres://{settings_dict['USER']}:{settings_dict['PASSWORD']}@"
        f"{settings_dict['HOST'] or '127.0.0.1'}:{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
    )
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": queue,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    env.pop("CELERY_RESULT_BACKEND", None)

    app.control.purge()
    old_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    log_path = ROOT / "test-artifacts" / f"worker-{queue}.log"
    log_path.parent.mkdir(exist_ok=True)
    log = open(log_path, "w")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-Q", queue,
         "-n", f"{queue}@%h", "--without-gossip", "--without-mingle", "-l", "INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"celery worker exited early, see {log_path}")
            replies = app.control.ping(destination=[f"{queue}@{os.uname().nodename}"], timeout=0.5)
            if replies:
                break
        else:
            pytest.fail(f"celery worker did not answer a ping within 30 s, see {log_path}")
        yield {"queue": queue, "process": proc, "log": log_path}
    finally:
        app.conf.task_default_queue = old_queue
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
