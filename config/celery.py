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
from celery.signals import worker_init, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger(__name__)

def patch_kombu_redis_channel() -> None:
    """Work around a kombu Redis-transport crash after a broker outage (docs/RELIABILITY.md).

    On a lost connection Celery calls `Connection.collect()`, which closes the channels and
    then sets the transport's `client` (the kombu Connection) to None. A channel that is not
    closed by then (closing stops at the first channel whose restore fails because Redis is
    down) or that acks, rejects or restores a message later rebuilds its connection pool from
    `self.connection.client` in `Channel._connparams` and raises
    `AttributeError: 'NoneType' object has no attribute 'hostname'`; raised from the consumer's
    event loop, Celery reports it as an "Unrecoverable error" and the worker exits (kombu
    5.7.0; the same failure is reported against older versions as celery/kombu#582 and #970).
    The channel here remembers the Connection it was created for and uses it when the
    transport no longer has one, so the restore (or ack) reaches Redis once it is back.
    """
    from kombu.transport import redis as kombu_redis

    channel_cls = kombu_redis.Channel
    if getattr(channel_cls, "_gpu_planner_patched", False):
        return
    original_init, original_connparams = channel_cls.__init__, channel_cls._connparams

    def __init__(self, *args, **kwargs):
        transport = args[0] if args else kwargs.get("connection")
        self._gp_conninfo = getattr(transport, "client", None)
        self._gp_default_port = getattr(transport, "default_port", None)
        original_init(self, *args, **kwargs)

    def _connparams(self, asynchronous=False):
        transport = self.connection
        if (transport is not None and transport.client is not None) or self._gp_conninfo is None:
            return original_connparams(self, asynchronous=asynchronous)
        shim = type("DetachedTransport", (), {"client": self._gp_conninfo, "default_port": self._gp_default_port})
        self.connection = shim()
        try:
            return original_connparams(self, asynchronous=asynchronous)
        finally:
            self.connection = transport

    channel_cls.__init__, channel_cls._connparams = __init__, _connparams
    channel_cls._gpu_planner_patched = True


patch_kombu_redis_channel()

# kombu retries a lost broker connection after 2, 4, 6 ... up to 30 s: after a 30 s outage a
# worker could sit idle for another 30 s. The consumer below retries every 0.5-2 s instead
# (a refused connection costs nothing), forever (CELERY_BROKER_CONNECTION_MAX_RETRIES=None).
RECONNECT_INTERVAL_START_S, RECONNECT_INTERVAL_STEP_S, RECONNECT_INTERVAL_MAX_S = 0.5, 0.5, 2.0


def _consumer_class():
    from celery.worker.consumer import Consumer as CeleryConsumer

    class Consumer(CeleryConsumer):
        def ensure_connected(self, conn):
            original = conn.ensure_connection

            def ensure_connection(*args, **kwargs):
                kwargs.setdefault("interval_start", RECONNECT_INTERVAL_START_S)
                kwargs.setdefault("interval_step", RECONNECT_INTERVAL_STEP_S)
                kwargs.setdefault("interval_max", RECONNECT_INTERVAL_MAX_S)
                return original(*args, **kwargs)

            conn.ensure_connection = ensure_connection
            return super().ensure_connected(conn)

    return Consumer


Consumer = _consumer_class()

app = Celery("gpu_planner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The collector's first threshold in a worker: allocations net of frees between young collections
# (CPython's default, 700, ran ~25 young and 2 middle collections a plan, 4-6 ms of its ~100 ms;
# measured in bench/bench_pipeline.py). A plan's objects die young by reference counting; the few
# cycles wait a little longer, a few MB at most.
WORKER_GC_GEN0_THRESHOLD = 20_000


def freeze_startup_objects(**_kwargs) -> None:
    """Move the objects alive after start-up (Django, the apps, the catalogs) to the collector's
    permanent generation: a plan allocates ~10^5 short-lived objects, and every full collection
    would walk the start-up ones again (measured in bench/bench_pipeline.py, docs/BENCHMARKS.md).
    In a prefork parent it also keeps the children from touching (and copying) its pages. Then
    young collections run every WORKER_GC_GEN0_THRESHOLD allocations instead of every 700."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(WORKER_GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])


# the solo/threads pool computes in the worker process itself, prefork in its children
worker_init.connect(freeze_startup_objects, weak=False)
worker_process_init.connect(freeze_startup_objects, weak=False)

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
        worker.gpu_planner_heartbeat = self  # HeartbeatOnConnect beats through it on reconnect

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


class SweepOnConnect(bootsteps.StartStopStep):
    """Ask for a sweep each time the consumer (re)connects to the broker.

    The consumer blueprint starts its steps again after every reconnection, so as soon as
    Redis is back, plans accepted while it was down (pending, no queued marker) are queued,
    without waiting for the next beat tick.
    """

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, c):
        try:
            c.app.send_task("planner.sweep_plan_versions", queue=queue_for("planner.sweep_plan_versions"),
                            ignore_result=True, retry=False)
        except Exception:  # the broker went away again: the next connection asks again
            logger.warning("could not ask for a sweep after connecting", exc_info=True)


class HeartbeatOnConnect(bootsteps.StartStopStep):
    """Write the heartbeat key as soon as the consumer (re)connects to the broker.

    While Redis was down the key expired (or Redis came back empty), and the timer would
    only rewrite it at its next tick (up to HEARTBEAT_INTERVAL_SECONDS later), so /readyz
    said "no worker heartbeat" for a live worker. The consumer blueprint starts its steps
    again after every reconnection, so this beats at once when Redis returns.
    """

    requires = {"celery.worker.consumer.connection:Connection"}

    def start(self, c):
        heartbeat = getattr(c.controller, "gpu_planner_heartbeat", None)
        if heartbeat is not None:
            heartbeat.beat(c.controller)  # never raises: a failure is logged and retried by the timer


app.steps["worker"].add(WorkerHeartbeat)
app.steps["consumer"].add(SweepOnConnect)
app.steps["consumer"].add(HeartbeatOnConnect)
