"""Celery application.

The broker comes from settings (REDIS_URL), never from Celery's own
CELERY_BROKER_URL environment variable, which would silently override test apps.
With no REDIS_URL the tasks run in-process (eager), so the app works with no services.

Queues are split by work type (compute, exports, periodic; see route_task) so exports or a
flood of plans cannot starve the sweeper, and each kind can get its own workers/machines.
Every worker writes a heartbeat key to Redis that /readyz reads (WorkerHeartbeat).
"""

import logging
import os
import socket

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)

app = Celery("gpu_planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Tasks that belong on the periodic queue; bulk data jobs (names with "export" or "import")
# go to the exports queue; everything else (sizing and costing) to compute.
PERIODIC_TASKS = frozenset({"planner.sweep_plan_versions"})
SPLIT_QUEUES_DEFAULT = "default"

HEARTBEAT_PREFIX = "gpu_planner:worker-heartbeat:"
HEARTBEAT_INTERVAL_SECONDS = 10
HEARTBEAT_TTL_SECONDS = 60  # a long task blocks the solo pool's timer; keep the key alive through it


def queue_for(name: str) -> str:
    """The queue for a task name: compute, exports or periodic (or the single queue)."""
    from django.conf import settings

    # A worker/test that names one queue (CELERY_QUEUE) gets every task on it.
    if app.conf.task_default_queue != SPLIT_QUEUES_DEFAULT:
        return app.conf.task_default_queue
    queues = settings.CELERY_WORK_QUEUES
    if name in PERIODIC_TASKS:
        return queues["periodic"]
    if "export" in name or "import" in name:
        return queues["exports"]
    return queues["compute"]


def route_task(name, args, kwargs, options, task=None, **kw):
    return {"queue": queue_for(name)}


def _heartbeat_client():
    import redis
    from django.conf import settings

    if not settings.REDIS_URL:
        return None
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Refresh `gpu_planner:worker-heartbeat:<node>` (with a TTL) while the worker lives."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.tref = None
        self.client = None

    def _key(self, worker) -> str:
        return HEARTBEAT_PREFIX + (getattr(worker, "hostname", None) or socket.gethostname())

    def beat(self, worker):
        try:
            if self.client is None:
                self.client = _heartbeat_client()
            if self.client is not None:
                self.client.set(self._key(worker), "alive", ex=HEARTBEAT_TTL_SECONDS)
        except Exception:  # Redis down: the worker keeps going; readyz will say so
            logger.warning("worker heartbeat could not be written", exc_info=True)

    def start(self, worker):
        self.beat(worker)
        self.tref = worker.timer.call_repeatedly(HEARTBEAT_INTERVAL_SECONDS, self.beat, (worker,), priority=10)

    def stop(self, worker):
        if self.tref is not None:
            self.tref.cancel()
        try:
            if self.client is not None:
                self.client.delete(self._key(worker))
        except Exception:
            logger.warning("worker heartbeat could not be removed", exc_info=True)


app.steps["worker"].add(WorkerHeartbeat)
