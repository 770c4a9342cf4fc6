"""The shared run-stream follower against a real redis-server: batches after a cursor, idle
batches, bursts coalesced, a Redis outage waited out from the same cursor."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid

import pytest
import redis

from bayes_app.redis_client import new_async_redis
from bayes_app.runs import events
from bayes_app.runs.follower import RunFollower


@pytest.fixture
def r(redis_server):
    client = redis.Redis.from_url(redis_server.url_db(12), decode_responses=True)
    yield client
    client.flushdb()


def _run(coro):
    return asyncio.run(coro)


def test_batches_after_the_cursor_then_idle_then_done(redis_server, r):
    op = uuid.uuid4().hex
    first = events.append(r, op, "text", {"delta": "a"})
    events.append(r, op, "text", {"delta": "b"})

    async def main():
        f = RunFollower(new_async_redis(redis_server.url_db(12)), op, first, block_ms=50)
        try:
            got = [ev.data["delta"] for ev in await f.next()]
            idle = await f.next()  # nothing new within block_ms
            events.append(r, op, "done", {})
            rest = [ev.type for batch in [b async for b in f.until_done()] for ev in batch]
            return got, idle, rest, f.cursor
        finally:
            await f.aclose()

    got, idle, rest, cursor = _run(main())
    assert got == ["b"]
    assert idle == []
    assert rest == ["done"]
    assert cursor == events.read_range(r, op, first)[-1].id


def test_a_burst_is_delivered_in_fewer_batches(redis_server, r):
    op = uuid.uuid4().hex

    def writer():
        for i in range(40):
            events.append(r, op, "text", {"delta": str(i)})
            time.sleep(0.005)
        events.append(r, op, "done", {})

    async def main(gap: float) -> tuple[int, list[str]]:
        f = RunFollower(new_async_redis(redis_server.url_db(12)), op, None, block_ms=200, min_gap_s=gap)
        t = threading.Thread(target=writer)
        t.start()
        try:
            batches = [b async for b in f.until_done() if b]
            return len(batches), [ev.data.get("delta", "") for b in batches for ev in b]
        finally:
            t.join()
            await f.aclose()

    n_plain, seen_plain = _run(main(0.0))
    r.delete(events.stream_key(op))
    n_gap, seen_gap = _run(main(0.1))
    assert seen_plain == seen_gap == [str(i) for i in range(40)] + [""]  # nothing lost or doubled
    assert n_gap < n_plain
    assert n_gap <= 6


def test_an_outage_gives_empty_batches_and_resumes_from_the_cursor(redis_server, r):
    op = uuid.uuid4().hex
    cursor = events.append(r, op, "text", {"delta": "seen"})
    events.append(r, op, "text", {"delta": "next"})
    with socket.socket() as s:  # a port nothing listens on: Redis "restarting"
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]

    async def main():
        down = RunFollower(new_async_redis(f"redis://127.0.0.1:{dead_port}/0"), op, cursor, retry_s=0.05)
        try:
            empty = await down.next()
            failures, kept = down.failures, down.cursor
        finally:
            await down.aclose()
        up = RunFollower(new_async_redis(redis_server.url_db(12)), op, kept)
        try:
            return empty, failures, [ev.data["delta"] for ev in await up.next()], up.failures
        finally:
            await up.aclose()

    empty, failures, resumed, after = _run(main())
    assert empty == []
    assert failures == 1
    assert resumed == ["next"]
    assert after == 0
