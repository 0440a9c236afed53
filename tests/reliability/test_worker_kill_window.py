"""A whole worker killed after it took a message off the queue but before it claimed the row.

The message stays unacked in Redis until the visibility timeout (6 min) and the version is
still `pending`, so neither a redelivery nor the running-row rule brings it back. The queued
marker follows the message into the worker (cut to PLAN_RECEIVED_MARK_SECONDS on receipt,
planner.tasks), so the sweeper queues the version again within seconds. A CI fault run hit
this window once (a plan waited > 60 s after a kill). Here the window is widened on purpose
(FAULT_INJECTION_CLAIM_DELAY_SECONDS) so the kill lands in it every time.
"""

import os
import re
import time

import pytest
import redis
from django.conf import settings

from planner.models import PlanVersion
from planner.services import QUEUED_MARK_PREFIX, plan_version_received
from planner.sweeper import plan_versions_sweep
from tests.conftest import skip_or_fail

from .conftest import WorkerProcess, wait_until
from .helpers import expected_outcome, submit_plans

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("catalog_loaded")]


@pytest.fixture
def redis_client(settings):
    url = os.environ.get("REDIS_URL")
    if not url:
        skip_or_fail("needs Redis (REDIS_URL)")
    settings.REDIS_URL = url
    return redis.Redis.from_url(url)


def test_a_received_message_cuts_the_queued_marker_to_the_claim_window(redis_client):
    from datetime import timedelta

    from django.utils import timezone

    key = f"{QUEUED_MARK_PREFIX}987654321"
    redis_client.set(key, "1", ex=settings.PLAN_PENDING_REQUEUE_SECONDS)
    try:
        plan_version_received(version_id=987654321)
        assert 0 < redis_client.ttl(key) <= settings.PLAN_RECEIVED_MARK_SECONDS
        # A retry waiting for its countdown keeps the marker until then, plus the window.
        plan_version_received(version_id=987654321, eta=timezone.now() + timedelta(seconds=40))
        assert 40 < redis_client.ttl(key) <= 40 + settings.PLAN_RECEIVED_MARK_SECONDS + 1
    finally:
        redis_client.delete(key)


def _received(worker: WorkerProcess) -> bool:
    """Celery logs 'Task planner.compute_plan_version[<id>] received' as it takes a message."""
    return re.search(r"Task planner\.compute_plan_version\[[^]]+\] received", worker.log_path.read_text()) is not None


def test_a_worker_killed_between_receiving_and_claiming_loses_the_plan_for_seconds(worker_queue, redis_client):
    queue, workers = worker_queue
    slow_claim = WorkerProcess(queue=queue, node=f"{queue}-k", concurrency=2,
                               extra_env={"FAULT_INJECTION_CLAIM_DELAY_SECONDS": "60"})
    workers.append(slow_claim.start().wait_ready(timeout_s=60))
    [version_id] = submit_plans(1)

    wait_until(lambda: _received(slow_claim), timeout_s=30, what="the worker to receive the message")
    # The worker that takes over is up before the kill: what is timed is the recovery, not a boot.
    workers.append(WorkerProcess(queue=queue, node=f"{queue}-r", concurrency=2).start().wait_ready(timeout_s=60))
    slow_claim.kill9()
    killed_at = time.monotonic()

    def done():
        plan_versions_sweep()  # what beat asks for every PLAN_SWEEP_INTERVAL_SECONDS
        return PlanVersion.objects.get(pk=version_id).status == "done"

    # Without the cut the marker lives PLAN_PENDING_REQUEUE_SECONDS (120 s) from the submit.
    wait_until(done, timeout_s=settings.PLAN_PENDING_REQUEUE_SECONDS / 2, interval_s=1,
               what="the plan to be computed after the kill (the queued marker outlived the message)")
    recovery_s = time.monotonic() - killed_at
    print("KILL-WINDOW", {"recovery_s": round(recovery_s, 1)})
    row = PlanVersion.objects.get(pk=version_id)
    assert (row.status, row.full_result) == expected_outcome(version_id)
    assert row.attempts == 1, "the killed worker never claimed it"
