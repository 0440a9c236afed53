"""Liveness and readiness endpoints used by the compose healthchecks and load balancers."""

from django.conf import settings
from django.db import connection
from django.http import JsonResponse


def healthz(request):
    """Liveness: the process answers. Touches nothing else."""
    return JsonResponse({"status": "ok"})


def _check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means "not ready"
        return f"{type(exc).__name__}"
    return None


def _check_broker() -> str | None:
    if not settings.REDIS_URL:
        return None  # in-process tasks: there is no broker to be down
    import redis

    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1).ping()
    except Exception as exc:
        return f"{type(exc).__name__}"
    return None


def _check_worker_heartbeat() -> str | None:
    """At least one Celery worker refreshed its heartbeat key (config.celery.WorkerHeartbeat)."""
    if not settings.REDIS_URL:
        return None  # in-process tasks: the web process is the worker
    import redis

    from .celery import HEARTBEAT_PREFIX

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        alive = next(iter(client.scan_iter(match=HEARTBEAT_PREFIX + "*", count=100)), None)
    except Exception as exc:
        return f"{type(exc).__name__}"
    return None if alive else "no worker heartbeat"


def readyz(request):
    """Readiness: the database and (when configured) the broker answer -> 200, else 503.

    The worker heartbeat is reported but does not make the web process unready: with no
    worker, plans are still saved and queued, so the load balancer should keep sending
    traffic; status says "degraded" so operators and alerts see it.
    """
    checks = {"database": _check_database(), "broker": _check_broker()}
    ok = all(v is None for v in checks.values())
    worker = _check_worker_heartbeat() if checks["broker"] is None else "broker unavailable"
    status = "unavailable" if not ok else ("degraded" if worker else "ok")
    body = {"status": status, "checks": {k: v or "ok" for k, v in {**checks, "worker": worker}.items()}}
    return JsonResponse(body, status=200 if ok else 503)


def computation_service_status() -> str:
    """What a user with a queued plan should be told: "ok", "broker_unavailable" or "no_worker".

    The plan is saved either way; this only explains why it is not being computed yet.
    """
    if _check_broker() is not None:
        return "broker_unavailable"
    if _check_worker_heartbeat() is not None:
        return "no_worker"
    return "ok"
