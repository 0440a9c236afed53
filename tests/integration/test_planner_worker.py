"""A real Celery worker process computes a queued plan version (PostgreSQL + Redis, CI)."""

import time

import pytest
from django.core.management import call_command

from planner import services
from planner.choices import VersionStatus
from planner.models import PlanVersion
from tests.planner_factories import PlanFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_worker_computes_a_queued_version(celery_worker_process):
    call_command("load_catalog", verbosity=0)
    call_command("load_rate_cards", verbosity=0)
    version = services.plan_version_create(plan=PlanFactory(), user=None)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        version = PlanVersion.objects.get(pk=version.pk)
        if version.is_finished:
            break
        time.sleep(0.5)
    assert version.status == VersionStatus.DONE, version.error or version.status
    assert version.attempts == 1
    assert version.result["costs"]["options"]
