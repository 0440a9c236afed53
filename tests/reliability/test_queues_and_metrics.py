"""Queues split by work type, the plan metrics at /metrics, and the worker heartbeat in /readyz."""

import os
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery import HEARTBEAT_PREFIX, app, queue_for
from planner.choices import VersionStatus
from tests.planner_factories import PlanVersionFactory


@pytest.fixture
def split_queues():
    old = app.conf.task_default_queue
    app.conf.task_default_queue = "default"
    yield
    app.conf.task_default_queue = old


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("planner.compute_plan_version", "compute"),
        ("planner.sweep_plan_versions", "periodic"),
        ("costs.export_plan_version_xlsx", "exports"),
        ("catalog.run_catalog_import", "exports"),
    ],
)
def test_tasks_are_routed_by_work_type(split_queues, task, queue):
    assert queue_for(task) == queue


def test_a_named_single_queue_takes_every_task():
    old = app.conf.task_default_queue
    app.conf.task_default_queue = "only-one"
    try:
        assert {queue_for(t) for t in ("planner.compute_plan_version", "planner.sweep_plan_versions")} == {
            "only-one"
        }
    finally:
        app.conf.task_default_queue = old


def _sample(body: str, name: str, labels: str = "") -> float:
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)} (\S+)$", body, re.M)
    assert match, f"{name}{labels} missing from /metrics"
    return float(match.group(1))


@pytest.mark.django_db
def test_metrics_count_plan_versions_by_status(client):
    PlanVersionFactory()
    PlanVersionFactory(status=VersionStatus.FAILED, error="bad input")
    body = client.get("/metrics").content.decode()
    assert _sample(body, "gpu_planner_plan_versions", '{status="pending"}') == 1
    assert _sample(body, "gpu_planner_plan_failures_total") == 1


@pytest.mark.django_db
def test_metrics_histogram_buckets_computation_durations_from_the_rows(client):
    started = timezone.now() - timedelta(minutes=1)
    PlanVersionFactory(status=VersionStatus.DONE, result={}, started_at=started,
                       finished_at=started + timedelta(seconds=0.3))
    body = client.get("/metrics").content.decode()
    name = "gpu_planner_plan_computation_duration_seconds_bucket"
    assert _sample(body, name, '{le="0.25"}') == 0
    assert _sample(body, name, '{le="0.5"}') == 1
    assert _sample(body, "gpu_planner_plan_computation_duration_seconds_count") == 1


@pytest.mark.django_db
def test_metrics_survive_an_unreachable_broker(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    body = client.get("/metrics").content.decode()
    assert _sample(body, "gpu_planner_metrics_source_up", '{source="broker"}') == 0


def _redis():
    import redis

    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("needs Redis (REDIS_URL)")
    return redis.Redis.from_url(url)


@pytest.mark.django_db
def test_readyz_is_not_ready_without_a_recent_worker_heartbeat(client, settings):
    client_redis = _redis()
    settings.REDIS_URL = os.environ["REDIS_URL"]
    saved = {k: client_redis.get(k) for k in client_redis.scan_iter(match=HEARTBEAT_PREFIX + "*")}
    client_redis.delete(*saved) if saved else None
    try:
        response = client.get("/readyz")
    finally:
        for k, v in saved.items():
            client_redis.set(k, v, ex=60)
    # Nothing would be computed: the orchestrator must see it (docs/RELIABILITY.md).
    assert response.status_code == 503
    assert (response.json()["status"], response.json()["checks"]["worker"]) == ("unavailable", "no worker heartbeat")


@pytest.mark.django_db
def test_readyz_sees_a_worker_heartbeat(client, settings):
    client_redis = _redis()
    settings.REDIS_URL = os.environ["REDIS_URL"]
    key = HEARTBEAT_PREFIX + "test-node@here"
    client_redis.set(key, "alive", ex=30)
    try:
        body = client.get("/readyz").json()
    finally:
        client_redis.delete(key)
    assert (body["status"], body["checks"]["worker"]) == ("ok", "ok")
