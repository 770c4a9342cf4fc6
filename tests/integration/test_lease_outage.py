"""The lease and Redis writes across a real redis-server outage (its own server, with an
append-only file so a restart keeps the data): retried within the lease, lost past it."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
import redis

from bayes_app.runs import control
from tests.support.procs import RedisServer

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


@pytest.fixture
def srv(tmp_path):
    server = RedisServer(tmp_path / "redis", persist=True).start()
    yield server
    server.stop()


def _client(srv: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(srv.url, decode_responses=True, socket_connect_timeout=1)


def test_short_restart_keeps_the_lease_and_retried_writes_land(srv):
    r = _client(srv)
    op = uuid.uuid4().hex
    lease = control.Lease(r, op, ttl_ms=3000, every_s=0.5)
    assert lease.acquire()
    lease.start_heartbeat()
    srv.stop()
    threading.Timer(0.8, srv.start).start()
    t0 = time.monotonic()
    # a write during the outage blocks, retrying, and lands once Redis is back
    control.retry_while_leased(lambda: r.rpush("k", "v"), lease, "push")
    assert 0.7 < time.monotonic() - t0 < 3
    time.sleep(1.2)  # a renewal after the restart
    assert not lease.lost.is_set()
    assert lease.remaining_s() > 2
    assert r.get(control.lease_key(op)) == lease.token
    assert r.lrange("k", 0, -1) == ["v"]
    assert lease.release()


def test_outage_longer_than_the_lease_declares_it_lost(srv):
    r = _client(srv)
    op = uuid.uuid4().hex
    lease = control.Lease(r, op, ttl_ms=1500, every_s=0.5)
    fired = threading.Event()
    lease.on_lost = fired.set
    assert lease.acquire()
    lease.start_heartbeat()
    srv.stop()
    t0 = time.monotonic()
    with pytest.raises(control.LeaseExpired):
        control.retry_while_leased(lambda: r.rpush("k", "v"), lease, "push")
    assert time.monotonic() - t0 < 1.6  # never past the TTL
    assert fired.wait(1)
    assert lease.lost.is_set()
    srv.start()
    assert not control.lease_alive(r, op)  # it expired inside Redis too
    with pytest.raises(control.LeaseExpired):  # a lost lease gives no more budget
        control.retry_while_leased(lambda: (_ for _ in ()).throw(redis.ConnectionError("x")), lease, "push")


def test_retry_for_gives_up_after_its_budget(srv):
    r = _client(srv)
    srv.stop()
    t0 = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        control.retry_for(lambda: r.ping(), 0.5, "ping")
    assert 0.45 < time.monotonic() - t0 < 1.5
    srv.start()
    assert control.retry_for(lambda: r.ping(), 0.5, "ping") is True
