"""Celery tasks: thin, take ids, idempotent (the service checks status under a row lock)."""

from celery import shared_task
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from .services import plan_version_compute

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


@shared_task(name="planner.sweep_plan_versions", soft_time_limit=50, time_limit=60, ignore_result=True)
def sweep_plan_versions() -> dict:
    """Beat, every PLAN_SWEEP_INTERVAL_SECONDS: re-queue stuck versions, fail hopeless ones."""
    from .sweeper import plan_versions_sweep

    report = plan_versions_sweep()
    return {"requeued": len(report.requeued), "failed": len(report.failed), "recovered": len(report.recovered)}
