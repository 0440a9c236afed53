"""The kombu Redis-channel crash after a broker outage, and its workaround (docs/RELIABILITY.md).

After `Connection.collect()` the transport's `client` is None; a channel that still holds an
unacked message then rebuilds its pool from it and raises
`AttributeError: 'NoneType' object has no attribute 'hostname'` (what killed workers in the
hostile run). The patched channel (config.celery.patch_kombu_redis_channel) restores the
message instead.
"""

import os
import uuid

import pytest
from kombu import Connection, Queue

from tests.conftest import skip_or_fail

pytestmark = pytest.mark.worker


def _channel_left_behind_by_collect(url: str, queue: Queue):
    conn = Connection(url)
    conn.connect()
    conn.Producer().publish({"plan": 1}, routing_key=queue.name, declare=[queue])
    channel, got = conn.channel(), []
    conn.Consumer(queue, channel=channel, callbacks=[lambda body, message: got.append(message)]).consume()
    conn.drain_events(timeout=5)
    assert got, "the message was delivered (and is unacked)"
    # What collect() leaves when closing stopped before this channel: its pools dropped,
    # the transport detached from the Connection.
    channel._disconnect_pools()
    conn._do_close_transport()
    return conn, channel


def _queue_length(url: str, name: str) -> int:
    with Connection(url) as conn:
        return conn.default_channel.client.llen(name)


def test_a_channel_restores_its_unacked_message_after_the_transport_was_detached(monkeypatch):
    url = os.environ.get("REDIS_URL")
    if not url:
        skip_or_fail("needs Redis (REDIS_URL)")
    from kombu.transport import redis as kombu_redis

    import config.celery  # noqa: F401  (applies the patch)

    queue = Queue(f"outage-{uuid.uuid4().hex[:8]}")
    _conn, channel = _channel_left_behind_by_collect(url, queue)
    try:
        channel.qos.restore_unacked()
        assert _queue_length(url, queue.name) == 1, "the message is back in its queue"

        # Without the workaround: the exact error of the hostile run.
        monkeypatch.setattr(kombu_redis.Channel, "_connparams",
                            _unpatched_connparams())
        queue2 = Queue(f"outage-{uuid.uuid4().hex[:8]}")
        _conn2, channel2 = _channel_left_behind_by_collect(url, queue2)
        with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'hostname'"):
            channel2.qos.restore_unacked()
    finally:
        with Connection(url) as conn:
            conn.default_channel.client.delete(queue.name)


def _unpatched_connparams():
    """kombu's own Channel._connparams (the patch wraps it)."""
    from kombu.transport import redis as kombu_redis

    for cell in kombu_redis.Channel._connparams.__closure__ or ():
        if callable(cell.cell_contents) and cell.cell_contents.__name__ == "_connparams":
            return cell.cell_contents
    raise AssertionError("the patch keeps the original _connparams")
