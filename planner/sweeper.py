"""The periodic sweeper (Celery beat, every PLAN_SWEEP_INTERVAL_SECONDS): nothing stays stuck.

- pending longer than PLAN_PENDING_REQUEUE_SECONDS: its message was never published (broker
  down at submit) or was lost -> queue it again (at most once per that interval);
- running, but no live worker holds its row lock (the worker was killed: its connection
  died and the lock with it) -> back to pending and queued again;
- either of them after PLAN_MAX_ATTEMPTS attempts -> failed, with the reason for the user.
Re-queuing is always safe: plan_version_compute skips a row that is locked or finished.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .choices import VersionStatus
from .models import PlanVersion
from .services import _give_up_reason, plan_version_enqueue

logger = logging.getLogger(__name__)

REQUEUE_MARK_PREFIX = "gpu_planner:requeued:"
BATCH = 500


@dataclass(frozen=True)
class SweepReport:
    requeued: tuple[int, ...]
    failed: tuple[int, ...]
    recovered: tuple[int, ...]  # running with no live worker, put back to pending


def _first_requeue_in_window(version_id: int, window_s: int) -> bool:
    """True once per window per version (Redis SET NX EX), so a long queue is not flooded
    with duplicates; without Redis (in-process tasks) always True."""
    if not settings.REDIS_URL:
        return True
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        return bool(client.set(f"{REQUEUE_MARK_PREFIX}{version_id}", "1", nx=True, ex=max(window_s, 1)))
    except Exception:
        return False  # broker down: enqueueing would fail anyway; the next sweep tries again


def _fail(version: PlanVersion, max_attempts: int, now: datetime) -> None:
    version.status = VersionStatus.FAILED
    version.error = _give_up_reason(version, max_attempts)
    version.finished_at = now
    version.save(update_fields=["status", "error", "finished_at"])


def plan_versions_sweep(*, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    max_attempts = settings.PLAN_MAX_ATTEMPTS
    window_s = settings.PLAN_PENDING_REQUEUE_SECONDS
    requeue, failed, recovered = [], [], []

    with transaction.atomic():
        # SKIP LOCKED: a row locked right now is being computed by a live worker.
        dead_running = list(
            PlanVersion.objects.select_for_update(skip_locked=True)
            .filter(status=VersionStatus.RUNNING, started_at__lt=now - timedelta(seconds=settings.PLAN_RUNNING_GRACE_SECONDS))
            .only("id", "status", "attempts", "error", "finished_at")[:BATCH]
        )
        for version in dead_running:
            if version.attempts >= max_attempts:
                _fail(version, max_attempts, now)
                failed.append(version.id)
            else:
                version.status = VersionStatus.PENDING
                version.save(update_fields=["status"])
                recovered.append(version.id)
                requeue.append(version.id)

        stale_pending = list(
            PlanVersion.objects.select_for_update(skip_locked=True)
            .filter(status=VersionStatus.PENDING, created_at__lt=now - timedelta(seconds=window_s))
            .exclude(id__in=recovered)
            .only("id", "status", "attempts", "error", "finished_at")[:BATCH]
        )
        for version in stale_pending:
            if version.attempts >= max_attempts:
                _fail(version, max_attempts, now)
                failed.append(version.id)
            elif _first_requeue_in_window(version.id, window_s):
                requeue.append(version.id)

    for version_id in requeue:
        plan_version_enqueue(version=PlanVersion(id=version_id))
    if requeue or failed:
        logger.info("sweeper: requeued %s, failed %s, recovered %s", requeue, failed, recovered)
    return SweepReport(requeued=tuple(requeue), failed=tuple(failed), recovered=tuple(recovered))
