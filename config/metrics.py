"""Plan metrics for Prometheus, read at scrape time.

Workers and gunicorn are separate processes, so counters kept in a worker's memory would
never reach the web process that serves /metrics. Instead this collector reads the truth
when scraped: computation durations and failures from the PlanVersion table, and queue
depth from Redis (LLEN of each work queue). A scrape with the database or Redis down
reports `gpu_planner_metrics_source_up 0` for it instead of failing.
"""

import logging
from datetime import timedelta

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import REGISTRY

logger = logging.getLogger(__name__)

# Seconds; a plan is usually well under a second, the Celery hard limit is 300 s.
DURATION_BUCKETS_SECONDS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def _plan_metrics():
    from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum

    from planner.choices import VersionStatus
    from planner.models import PlanVersion

    by_status = dict(PlanVersion.objects.values_list("status").annotate(n=Count("id")).order_by())
    finished = PlanVersion.objects.filter(
        status__in=[VersionStatus.DONE, VersionStatus.FAILED], started_at__isnull=False, finished_at__isnull=False
    ).annotate(duration=ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField()))
    aggregates = {
        f"le_{i}": Count("id", filter=Q(duration__lte=timedelta(seconds=b)))
        for i, b in enumerate(DURATION_BUCKETS_SECONDS)
    }
    row = finished.aggregate(total=Count("id"), total_duration=Sum("duration"), **aggregates)
    buckets = [(str(float(b)), row[f"le_{i}"]) for i, b in enumerate(DURATION_BUCKETS_SECONDS)]
    buckets.append(("+Inf", row["total"]))
    total_seconds = row["total_duration"].total_seconds() if row["total_duration"] else 0.0
    attempts = PlanVersion.objects.aggregate(n=Sum("attempts"))["n"] or 0
    return by_status, buckets, total_seconds, attempts


def _queue_depths():
    from django.conf import settings

    if not settings.REDIS_URL:
        return {}
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    return {q: client.llen(q) for q in sorted(set(settings.CELERY_WORK_QUEUES.values()))}


class PlanCollector:
    def describe(self):
        """Names only, so registering does not query the database or Redis."""
        yield GaugeMetricFamily("gpu_planner_metrics_source_up", "", labels=["source"])
        yield GaugeMetricFamily("gpu_planner_plan_versions", "", labels=["status"])
        yield HistogramMetricFamily("gpu_planner_plan_computation_duration_seconds", "")
        yield CounterMetricFamily("gpu_planner_plan_failures", "")
        yield CounterMetricFamily("gpu_planner_plan_attempts", "")
        yield GaugeMetricFamily("gpu_planner_queue_depth", "", labels=["queue"])

    def collect(self):
        up = GaugeMetricFamily("gpu_planner_metrics_source_up", "1 if the source answered this scrape",
                               labels=["source"])
        try:
            by_status, buckets, total_seconds, attempts = _plan_metrics()
        except Exception as exc:
            logger.warning("plan metrics unavailable: %s", type(exc).__name__)
            up.add_metric(["database"], 0)
        else:
            up.add_metric(["database"], 1)
            versions = GaugeMetricFamily("gpu_planner_plan_versions", "Plan versions by status",
                                         labels=["status"])
            for status in ("pending", "running", "done", "failed"):
                versions.add_metric([status], by_status.get(status, 0))
            yield versions
            yield HistogramMetricFamily(
                "gpu_planner_plan_computation_duration_seconds",
                "Time from start to finish of finished plan computations (from PlanVersion rows)",
                buckets=buckets, sum_value=total_seconds,
            )
            yield CounterMetricFamily("gpu_planner_plan_failures", "Plan versions that ended failed",
                                      value=by_status.get("failed", 0))
            yield CounterMetricFamily("gpu_planner_plan_attempts", "Computation attempts (retries included)",
                                      value=attempts)
        try:
            depths = _queue_depths()
        except Exception as exc:
            logger.warning("queue depth unavailable: %s", type(exc).__name__)
            up.add_metric(["broker"], 0)
        else:
            up.add_metric(["broker"], 1)
            depth = GaugeMetricFamily("gpu_planner_queue_depth", "Messages waiting in each Celery queue",
                                      labels=["queue"])
            for queue, n in depths.items():
                depth.add_metric([queue], n)
            yield depth
        yield up


_collector = PlanCollector()


def register() -> None:
    """Idempotent: urls.py may be imported more than once (tests reload URLconfs)."""
    if _collector not in getattr(REGISTRY, "_collector_to_names", {}):
        REGISTRY.register(_collector)
