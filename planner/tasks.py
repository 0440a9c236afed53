"""Celery tasks: thin, take ids, idempotent (the service checks status under a row lock)."""

import logging

from celery import shared_task
from celery.signals import task_received
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from .services import plan_version_compute, plan_version_received

logger = logging.getLogger(__name__)

# Transient failures only (database or broker briefly gone) are retried, with backoff;
# engine errors are final and stored on the version by the service.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, KombuOperationalError, RedisConnectionError)


@shared_task(
    name="planner.compute_plan_version", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=240, time_limit=300,
    autoretry_for=TRANSIENT_ERRORS, retry_backoff=2, retry_backoff_max=60, retry_jitter=True, max_retries=8,
)
def compute_plan_version(version_id: int) -> str | None:
    version = plan_version_compute(version_id=version_id)
    return version.status if version else None


@task_received.connect
def _plan_version_message_received(sender=None, request=None, **kwargs) -> None:
    """The worker took a computation's message off the queue: its queued marker follows it."""
    if request is None or request.name != compute_plan_version.name:
        return
    args, kw = request.args or (), request.kwargs or {}
    try:
        version_id = int(args[0] if args else kw["version_id"])
        plan_version_received(version_id=version_id, eta=request.eta)
    except Exception:  # never stop the consumer: the long marker only delays a recovery
        logger.warning("could not mark a received plan computation", exc_info=True)


@shared_task(name="planner.sweep_plan_versions", soft_time_limit=50, time_limit=60, ignore_result=True)
def sweep_plan_versions() -> dict:
    """Beat, every PLAN_SWEEP_INTERVAL_SECONDS: re-queue stuck versions, fail hopeless ones."""
    from .sweeper import plan_versions_sweep

    report = plan_versions_sweep()
    return {"requeued": len(report.requeued), "failed": len(report.failed), "recovered": len(report.recovered)}
