"""plan_version_compute: once per version, whatever the deliveries."""

import threading

import pytest
from django.db import connection, transaction

from planner.choices import VersionStatus
from planner.models import PlanVersion
from planner.services import plan_version_compute
from tests.planner_factories import PlanVersionFactory


@pytest.mark.django_db
def test_a_finished_version_is_not_computed_again():
    version = PlanVersionFactory(status=VersionStatus.DONE, result={"kept": True}, attempts=1)
    plan_version_compute(version_id=version.id)
    version.refresh_from_db()
    assert (version.status, version.result, version.attempts) == (VersionStatus.DONE, {"kept": True}, 1)


@pytest.mark.django_db
def test_a_version_out_of_attempts_fails_with_the_reason_instead_of_computing(settings):
    version = PlanVersionFactory(status=VersionStatus.RUNNING, attempts=settings.PLAN_MAX_ATTEMPTS)
    plan_version_compute(version_id=version.id)
    version.refresh_from_db()
    assert version.status == VersionStatus.FAILED
    assert version.attempts == settings.PLAN_MAX_ATTEMPTS
    assert "interrupted each time" in version.error


@pytest.mark.django_db
def test_an_unknown_version_id_is_ignored():
    assert plan_version_compute(version_id=987654321) is None


@pytest.mark.django_db(transaction=True)
def test_a_duplicate_delivery_skips_a_version_another_worker_is_computing():
    if connection.vendor != "postgresql":
        pytest.skip("row locks (SKIP LOCKED) need PostgreSQL; SQLite runs tasks in one process")
    version = PlanVersionFactory(status=VersionStatus.RUNNING, attempts=1)
    locked, release = threading.Event(), threading.Event()

    def other_worker():  # holds the row lock like a computation in progress
        try:
            with transaction.atomic():
                PlanVersion.objects.select_for_update().get(pk=version.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert locked.wait(10)
        plan_version_compute(version_id=version.id)
    finally:
        release.set()
        thread.join()
    version.refresh_from_db()
    assert (version.status, version.attempts) == (VersionStatus.RUNNING, 1)
