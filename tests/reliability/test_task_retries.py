"""compute_plan_version retries transient failures only, and gives the queue bounded waits."""

import pytest
from django.db import OperationalError

from config.celery import app
from planner import tasks


class _Flaky:
    """plan_version_compute stand-in: raises `exc` for the first `failures` calls."""

    def __init__(self, exc, failures):
        self.exc, self.failures, self.calls = exc, failures, 0

    def __call__(self, *, version_id):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc
        return None


def test_a_database_blip_is_retried_until_it_passes(monkeypatch):
    flaky = _Flaky(OperationalError("server closed the connection unexpectedly"), failures=2)
    monkeypatch.setattr(tasks, "plan_version_compute", flaky)
    result = tasks.compute_plan_version.apply(args=[1])
    assert (flaky.calls, result.state) == (3, "SUCCESS")


def test_a_bug_is_not_retried(monkeypatch):
    flaky = _Flaky(ValueError("engine bug"), failures=1)
    monkeypatch.setattr(tasks, "plan_version_compute", flaky)
    result = tasks.compute_plan_version.apply(args=[1])
    assert (flaky.calls, result.state) == (1, "FAILURE")


def test_retries_stop_after_the_limit(monkeypatch):
    flaky = _Flaky(OperationalError("database is down"), failures=100)
    monkeypatch.setattr(tasks, "plan_version_compute", flaky)
    result = tasks.compute_plan_version.apply(args=[1])
    assert result.state == "FAILURE"
    assert flaky.calls == tasks.compute_plan_version.max_retries + 1


@pytest.mark.parametrize("option", ["acks_late", "reject_on_worker_lost"])
def test_a_message_is_acknowledged_only_after_the_task_ran(option):
    assert getattr(tasks.compute_plan_version, option) is True


def test_publishing_gives_up_within_seconds_so_a_submit_never_hangs():
    policy = app.conf.task_publish_retry_policy
    worst_wait_s = sum(min(policy["interval_start"] + i * policy["interval_step"], policy["interval_max"])
                       for i in range(policy["max_retries"]))
    assert worst_wait_s + (policy["max_retries"] + 1) * app.conf.broker_connection_timeout <= 10
