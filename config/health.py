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
    """Readiness: the database, the broker (when configured) and a worker heartbeat seen in
    the last HEARTBEAT_TTL_SECONDS (60 s) -> 200, else 503 with the failing check named.

    Without a live worker nothing is computed: plans are saved and queued, but the
    deployment is not working, so the orchestrator and alerts must see it. Workers run under
    a supervisor (docs/SCALING.md) that restarts one that exited.
    """
    checks = {"database": _check_database(), "broker": _check_broker()}
    checks["worker"] = _check_worker_heartbeat() if checks["broker"] is None else "broker unavailable"
    ok = all(v is None for v in checks.values())
    body = {"status": "ok" if ok else "unavailable", "checks": {k: v or "ok" for k, v in checks.items()}}
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
