"""The 202 + poll flow with a real Celery worker (runs in CI; skips locally without Redis/PostgreSQL)."""

import time

import pytest

from tests.functional.api_fixtures import *  # noqa: F403


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_created_plan_is_computed_by_the_worker_and_polled_to_done(celery_worker_process, catalog):
    world = World()  # noqa: F405
    client = client_for(world.users["editor"])  # noqa: F405
    created = client.post("/api/v1/plans/", {"workload": world.workload.id}, format="json")
    assert created.status_code == 202, created.json()
    deadline = time.monotonic() + 60
    while True:
        status = client.get(created.json()["status_url"]).json()
        if status["finished"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status["status"] == "done", status
    assert client.get(created.json()["version_url"]).json()["result"]["sizing"]
