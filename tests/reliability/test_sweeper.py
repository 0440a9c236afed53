"""The periodic sweeper: stuck versions are queued again, hopeless ones fail with a reason."""

from datetime import timedelta

import pytest
from django.utils import timezone

from planner import sweeper
from planner.choices import VersionStatus
from planner.models import PlanVersion
from tests.planner_factories import PlanVersionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """Record what the sweeper queues instead of computing it in-process."""
    calls = []
    monkeypatch.setattr(sweeper, "plan_version_enqueue", lambda *, version: calls.append(version.id) or True)
    return calls


def _age(version, *, created_s=0, started_s=None):
    now = timezone.now()
    PlanVersion.objects.filter(pk=version.pk).update(
        created_at=now - timedelta(seconds=created_s),
        started_at=None if started_s is None else now - timedelta(seconds=started_s),
    )


def test_a_version_pending_too_long_is_queued_again(settings, enqueued):
    version = PlanVersionFactory()
    _age(version, created_s=settings.PLAN_PENDING_REQUEUE_SECONDS + 5)
    report = sweeper.plan_versions_sweep()
    assert report.requeued == (version.id,)
    assert enqueued == [version.id]


def test_a_freshly_pending_version_is_left_to_its_queue(enqueued):
    PlanVersionFactory()
    assert sweeper.plan_versions_sweep().requeued == ()
    assert enqueued == []


def test_a_running_version_whose_worker_died_goes_back_to_pending_and_the_queue(settings, enqueued):
    version = PlanVersionFactory(status=VersionStatus.RUNNING, attempts=1)
    _age(version, created_s=60, started_s=settings.PLAN_RUNNING_GRACE_SECONDS + 5)
    report = sweeper.plan_versions_sweep()
    version.refresh_from_db()
    assert (report.recovered, version.status, enqueued) == ((version.id,), VersionStatus.PENDING, [version.id])


def test_a_version_that_keeps_failing_is_marked_failed_with_the_reason(settings, enqueued):
    version = PlanVersionFactory(status=VersionStatus.RUNNING, attempts=settings.PLAN_MAX_ATTEMPTS)
    _age(version, created_s=600, started_s=settings.PLAN_RUNNING_GRACE_SECONDS + 5)
    report = sweeper.plan_versions_sweep()
    version.refresh_from_db()
    assert report.failed == (version.id,)
    assert version.status == VersionStatus.FAILED
    assert "gave up after 3 attempts" in version.error
    assert enqueued == []


def test_finished_versions_are_never_touched(settings, enqueued):
    done = PlanVersionFactory(status=VersionStatus.DONE, result={"x": 1})
    failed = PlanVersionFactory(status=VersionStatus.FAILED, error="bad input")
    for v in (done, failed):
        _age(v, created_s=3600, started_s=3600)
    assert sweeper.plan_versions_sweep() == sweeper.SweepReport(requeued=(), failed=(), recovered=())


def test_the_sweep_task_is_on_the_beat_schedule_every_interval(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-plan-versions"]
    assert entry == {"task": "planner.sweep_plan_versions", "schedule": settings.PLAN_SWEEP_INTERVAL_SECONDS}


def test_with_redis_a_pending_version_is_requeued_as_soon_as_its_queued_marker_is_gone(settings, enqueued):
    """The marker lives in the same Redis as the message: no marker, no message (Redis
    restarted empty, or the submit found it down) -> queued again at the next sweep."""
    import os

    import redis

    from planner.services import QUEUED_MARK_PREFIX
    from tests.conftest import skip_or_fail

    url = os.environ.get("REDIS_URL")
    if not url:
        skip_or_fail("needs Redis (REDIS_URL)")
    settings.REDIS_URL = url
    client = redis.Redis.from_url(url)
    marked, unmarked, fresh = PlanVersionFactory(), PlanVersionFactory(), PlanVersionFactory()
    for v in (marked, unmarked):
        _age(v, created_s=settings.PLAN_PENDING_MIN_AGE_SECONDS + 5)
    client.set(f"{QUEUED_MARK_PREFIX}{marked.id}", "1", ex=60)
    client.delete(f"{QUEUED_MARK_PREFIX}{unmarked.id}", f"{QUEUED_MARK_PREFIX}{fresh.id}")
    try:
        report = sweeper.plan_versions_sweep()
    finally:
        client.delete(f"{QUEUED_MARK_PREFIX}{marked.id}")
    assert report.requeued == (unmarked.id,)
    assert enqueued == [unmarked.id]
