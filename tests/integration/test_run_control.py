"""Run control and event stream against a real redis-server: lease, abort signal, stream replay."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest
import redis

from bayes_app.runs import control, events
from bayes_app.runs.follower import RunFollower


@pytest.fixture
def r(redis_server):
    client = redis.Redis.from_url(redis_server.url_db(13), decode_responses=True)
    yield client
    client.flushdb()


def test_lease_acquire_renew_release(r):
    op = uuid.uuid4().hex
    a, b = control.Lease(r, op, ttl_ms=300), control.Lease(r, op, ttl_ms=300)
    assert a.acquire()
    assert not b.acquire()
    assert a.renew()
    assert not b.renew()
    assert not b.release()
    assert control.lease_alive(r, op)
    assert 0 < control.lease_left_ms(r, op) <= 300  # what the booting reaper waits for
    assert a.release()
    assert not control.lease_alive(r, op)
    assert control.lease_left_ms(r, op) == 0


def test_heartbeat_keeps_lease_and_expiry_frees_it(r):
    op = uuid.uuid4().hex
    lease = control.Lease(r, op, ttl_ms=300, every_s=0.1)
    assert lease.acquire()
    lease.start_heartbeat()
    time.sleep(0.8)
    assert control.lease_alive(r, op)
    lease._stop.set()  # the worker "dies": no more renewals
    time.sleep(0.5)
    assert not control.lease_alive(r, op)


def test_listener_sets_signal_within_milliseconds(r, redis_server):
    url = redis_server.url_db(13)
    listener = control.AbortListener(lambda: redis.Redis.from_url(url, decode_responses=True))
    listener.start()
    assert listener.subscribed.wait(5)
    op = uuid.uuid4().hex
    sig = listener.watch(op)
    t0 = time.monotonic()
    control.request_abort(r, op, "user_cancel")
    assert sig.event.wait(2)
    assert time.monotonic() - t0 < 0.1
    assert control.abort_requested(r, op) == "user_cancel"
    # a run that starts after the flag was set sees it at once
    assert listener.watch(uuid.uuid4().hex).is_set() is False
    late = uuid.uuid4().hex
    r.set(control.abort_key(late), "x")
    assert listener.watch(late).is_set()
    listener.stop()


def test_fallback_poll_sees_flag_without_publish(r, redis_server):
    url = redis_server.url_db(13)
    listener = control.AbortListener(lambda: redis.Redis.from_url(url, decode_responses=True), poll_s=0.1)
    listener.start()
    op = uuid.uuid4().hex
    sig = listener.watch(op)
    r.set(control.abort_key(op), "user_cancel")  # no PUBLISH
    assert sig.event.wait(2)
    listener.stop()


def test_async_event_is_set_from_another_thread():
    sig = control.AbortSignal("x")

    async def main() -> float:
        ev = sig.async_event()
        t0 = time.monotonic()
        threading.Timer(0.05, sig.set).start()
        await asyncio.wait_for(ev.wait(), 2)
        return time.monotonic() - t0

    assert asyncio.run(main()) < 0.5


def test_stream_replay_from_cursor_without_gaps_or_duplicates(r):
    op = uuid.uuid4().hex
    ids = [events.append(r, op, "text", {"delta": str(i)}) for i in range(50)]
    got = [e.data["delta"] for e in events.read_range(r, op, ids[9])]
    assert got == [str(i) for i in range(10, 50)]

    def writer() -> None:
        for i in range(50, 100):
            events.append(r, op, "text", {"delta": str(i)})
            time.sleep(0.002)
        events.append(r, op, "done", {"status": "SUCCEEDED"})

    threading.Thread(target=writer).start()
    seen = list(events.follow(r, op, ids[24], block_ms=200))
    assert [e.data.get("delta") for e in seen[:-1]] == [str(i) for i in range(25, 100)]
    assert seen[-1].type == "done"


def test_keyed_append_retried_after_a_lost_reply_lands_once(r):
    """The run's writer retries an append whose reply was lost (Redis restarted after applying
    it): with the event's key the retry returns the entry written, never a second copy."""
    op = uuid.uuid4().hex
    first = events.append(r, op, "text", {"delta": "a"}, key="1.1")
    events.append(r, op, "status", {"status": "stopping"})  # another writer in between
    r.script_flush()  # a restarted Redis has forgotten the script: it is loaded again
    assert events.append(r, op, "text", {"delta": "a"}, key="1.1") == first
    events.append(r, op, "text", {"delta": "b"}, key="1.2")
    events.append(r, op, "text", {"delta": "a"}, key="2.1")  # a new attempt's keys are its own
    assert [(e.type, e.data) for e in events.read_range(r, op)] == [
        ("text", {"delta": "a"}),
        ("status", {"status": "stopping"}),
        ("text", {"delta": "b"}),
        ("text", {"delta": "a"}),
    ]


def test_async_follow(redis_server, r):
    op = uuid.uuid4().hex
    for i in range(5):
        events.append(r, op, "text", {"delta": str(i)})
    events.append(r, op, "done", {})

    async def main() -> list[str]:
        from bayes_app.redis_client import new_async_redis

        ar = new_async_redis(redis_server.url_db(13))
        try:
            return [e.type async for batch in RunFollower(ar, op).until_done() for e in batch]
        finally:
            await ar.aclose()

    assert asyncio.run(main()) == ["text"] * 5 + ["done"]
    with pytest.raises(ValueError, match="unknown event type 'bogus'"):
        events.append(r, op, "bogus", {})
