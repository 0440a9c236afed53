"""The periodic sweeper (Celery beat, every PLAN_SWEEP_INTERVAL_SECONDS = 5 s): nothing stays stuck.

- pending, older than PLAN_PENDING_MIN_AGE_SECONDS, with no queued marker in Redis: its
  message was never published (broker down at submit) or died with Redis -> queue it again
  (plan_version_enqueue writes the marker, so once per PLAN_PENDING_REQUEUE_SECONDS at most);
- running, started more than PLAN_RUNNING_GRACE_SECONDS ago, but no live worker holds its row
  lock (the worker was killed: its connection died and the lock with it) -> back to pending
  and queued again;
- either of them after PLAN_MAX_ATTEMPTS attempts -> failed, with the reason for the user.
Re-queuing is always safe: plan_version_compute skips a row that is locked or finished.
Workers also ask for a sweep each time they (re)connect to the broker (config.celery), so
what was accepted while Redis was down is queued as soon as it is back.
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
from .services import QUEUED_MARK_PREFIX, _give_up_reason, broker_client, plan_version_enqueue

logger = logging.getLogger(__name__)

BATCH = 500


@dataclass(frozen=True)
class SweepReport:
    requeued: tuple[int, ...]
    failed: tuple[int, ...]
    recovered: tuple[int, ...]  # running with no live worker, put back to pending


def _without_queued_marker(version_ids: list[int]) -> list[int]:
    """The versions with no queued marker in Redis: no message for them in this Redis.
    Redis down: none (publishing would fail anyway; the next sweep tries again)."""
    client = broker_client()
    if client is None or not version_ids:
        return list(version_ids)
    try:
        pipe = client.pipeline(transaction=False)
        for vid in version_ids:
            pipe.exists(f"{QUEUED_MARK_PREFIX}{vid}")
        marked = pipe.execute()
    except Exception:
        return []
    return [vid for vid, has_mark in zip(version_ids, marked, strict=True) if not has_mark]


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

        # With Redis, a pending version is stale when its queued marker is gone; with
        # in-process tasks (no markers), when it waited longer than the requeue window.
        min_age_s = settings.PLAN_PENDING_MIN_AGE_SECONDS if settings.REDIS_URL else window_s
        stale_pending = list(
            PlanVersion.objects.select_for_update(skip_locked=True)
            .filter(status=VersionStatus.PENDING, created_at__lt=now - timedelta(seconds=min_age_s))
            .exclude(id__in=recovered)
            .order_by("created_at")
            .only("id", "status", "attempts", "error", "finished_at")[:BATCH]
        )
        unmarked = set(_without_queued_marker([v.id for v in stale_pending]))
        for version in stale_pending:
            if version.attempts >= max_attempts:
                _fail(version, max_attempts, now)
                failed.append(version.id)
            elif version.id in unmarked:
                requeue.append(version.id)

    for version_id in requeue:
        plan_version_enqueue(version=PlanVersion(id=version_id))
    if requeue or failed:
        logger.info("sweeper: requeued %s, failed %s, recovered %s", requeue, failed, recovered)
    return SweepReport(requeued=tuple(requeue), failed=tuple(failed), recovered=tuple(recovered))
