"""The worker rewrites its heartbeat key as soon as the consumer reconnects to the broker,
so /readyz does not report "no worker heartbeat" for a live worker after Redis returns."""

from types import SimpleNamespace

import pytest

from config import celery as cc


class FakeRedis:
    def __init__(self, fail=False):
        self.keys, self.fail = {}, fail

    def set(self, key, value, ex=None):
        if self.fail:
            raise ConnectionError("redis is down")
        self.keys[key] = (value, ex)

    def delete(self, key):
        self.keys.pop(key, None)


@pytest.fixture
def worker(monkeypatch):
    redis = FakeRedis()
    monkeypatch.setattr(cc, "_heartbeat_client", lambda: redis)
    w = SimpleNamespace(hostname="w1@host", timer=None)
    step = cc.WorkerHeartbeat(w)
    return w, step, redis


def test_reconnect_rewrites_an_expired_heartbeat_at_once(worker):
    w, step, redis = worker
    step.beat(w)
    key = cc.HEARTBEAT_PREFIX + "w1@host"
    assert redis.keys[key] == ("alive", cc.HEARTBEAT_TTL_SECONDS)
    redis.keys.clear()  # Redis restarted empty, or the key expired while it was down
    cc.HeartbeatOnConnect(SimpleNamespace()).start(SimpleNamespace(controller=w))
    assert key in redis.keys


def test_reconnect_while_redis_still_fails_does_not_raise(worker):
    w, _step, redis = worker
    redis.fail = True
    cc.HeartbeatOnConnect(SimpleNamespace()).start(SimpleNamespace(controller=w))
    assert redis.keys == {}


def test_a_worker_without_the_heartbeat_step_is_left_alone():
    cc.HeartbeatOnConnect(SimpleNamespace()).start(SimpleNamespace(controller=SimpleNamespace()))


def test_the_step_runs_in_the_consumer_blueprint_right_after_the_connection():
    """The consumer blueprint (restarted on every reconnection) orders it after Connection."""
    from celery.worker.consumer import Consumer

    blueprint = Consumer.Blueprint(steps=cc.app.steps["consumer"])
    names = [s.name for s in blueprint._finalize_steps(blueprint.claim_steps())]
    assert names.index("config.celery.HeartbeatOnConnect") > names.index("celery.worker.consumer.connection.Connection")
