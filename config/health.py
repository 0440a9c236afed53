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


def readyz(request):
    """Readiness: the database and (when configured) the broker answer."""
    checks = {"database": _check_database(), "broker": _check_broker()}
    ok = all(v is None for v in checks.values())
    body = {"status": "ok" if ok else "unavailable", "checks": {k: v or "ok" for k, v in checks.items()}}
    return JsonResponse(body, status=200 if ok else 503)
