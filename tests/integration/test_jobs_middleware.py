"""The workers' middleware on a real Dramatiq broker (StubBroker) and a real Redis: sending an
ingestion message is remembered (the reaper re-sends only documents never sent); other
messages are not."""

from __future__ import annotations

import uuid

import dramatiq
from dramatiq.brokers.stub import StubBroker


def test_sent_ingestion_messages_are_remembered(redis_server, configure):
    from bayes_app.redis_client import get_redis
    from jobs.middleware import ENQUEUED_KEY, IngestEnqueued

    configure(REDIS_URL=redis_server.url_db(12))
    broker = StubBroker()
    broker.add_middleware(IngestEnqueued())
    ingest = dramatiq.Actor(
        lambda _d, _g: None,
        actor_name="ingest_document",
        queue_name="ingest",
        priority=0,
        broker=broker,
        options={"ingestion": True},
    )
    other = dramatiq.Actor(
        lambda _d, _g: None, actor_name="purge_document", queue_name="ingest", priority=0, broker=broker, options={}
    )
    doc, gone = uuid.uuid4().hex, uuid.uuid4().hex
    ingest.send(doc, 3)
    other.send(gone, 1)
    r = get_redis()
    assert r.exists(ENQUEUED_KEY.format(doc, 3))
    assert 0 < r.ttl(ENQUEUED_KEY.format(doc, 3)) <= 7 * 24 * 3600
    assert not r.exists(ENQUEUED_KEY.format(doc, 4))
    assert not r.exists(ENQUEUED_KEY.format(gone, 1))


def test_the_broker_is_built_with_its_middleware_in_one_function(configure):
    from jobs.broker import build_broker

    configure(BAYES_STUB_BROKER="0")
    before = dramatiq.get_broker()
    try:
        names = [type(m).__name__ for m in build_broker().middleware]
    finally:
        dramatiq.set_broker(before)
    assert names[-8:] == [
        "IngestEnqueued",
        "WorkerHeartbeat",
        "MemoryGuard",
        "Periodic",
        "RunControl",
        "AsyncIO",
        "FairShare",
        "IngestCrashGuard",
    ]


def test_runs_are_async_actors_on_the_one_loop_of_the_asyncio_middleware() -> None:
    """No `asyncio.run` per message: the run actor is a coroutine function, and the AsyncIO
    middleware the broker is built with runs every message of a worker on one loop."""
    import asyncio
    import inspect

    from dramatiq import Worker
    from dramatiq.brokers.stub import StubBroker
    from dramatiq.middleware.asyncio import AsyncIO

    from jobs import runs as jr

    assert inspect.iscoroutinefunction(inspect.unwrap(jr.run_operation.fn))
    broker = StubBroker()
    broker.emit_after("process_boot")
    broker.add_middleware(AsyncIO())
    loops: list[asyncio.AbstractEventLoop] = []

    @dramatiq.actor(broker=broker)
    async def probe() -> None:
        loops.append(asyncio.get_running_loop())

    worker = Worker(broker, worker_threads=2)
    worker.start()
    try:
        for _ in range(3):
            probe.send()
        broker.join(probe.queue_name)
        worker.join()
    finally:
        worker.stop()
    assert len(loops) == 3
    assert len(set(map(id, loops))) == 1


def test_the_crash_guard_runs_an_attempt_clears_it_and_gives_up_after_dead_ones(redis_server, configure):
    """Attempts of processes that are gone count as crashes: below the limit the message runs
    (and its attempt is cleared however it ended); at the limit it is skipped and handed over."""
    from dramatiq import Worker

    from bayes_app.library import crash_guard
    from bayes_app.redis_client import get_redis
    from jobs.middleware import IngestCrashGuard

    configure(REDIS_URL=redis_server.url_db(13))
    r = get_redis()
    ran, crashed = [], []
    broker = StubBroker()
    broker.add_middleware(IngestCrashGuard(2, lambda d, g, n: crashed.append((d, g, n))))
    broker.emit_after("process_boot")

    def ingest(document_id: str, generation: int) -> None:
        ran.append(document_id)
        assert len(r.smembers(crash_guard.KEY.format(document_id, generation))) >= 1  # registered while running

    dramatiq.Actor(
        ingest,
        actor_name="ingest_document",
        queue_name="ingest",
        priority=0,
        broker=broker,
        options={"max_retries": 0, "ingestion": True},
    )
    fine, doomed = uuid.uuid4().hex, uuid.uuid4().hex
    dead = f"{__import__('socket').gethostname()}|999999|1.00|dead"  # a process that no longer runs
    r.sadd(crash_guard.KEY.format(fine, 1), dead)
    r.sadd(crash_guard.KEY.format(doomed, 1), dead, dead + "2")
    worker = Worker(broker, worker_timeout=100)
    worker.start()
    try:
        broker.get_actor("ingest_document").send(fine, 1)
        broker.get_actor("ingest_document").send(doomed, 1)
        broker.join("ingest")
        worker.join()
    finally:
        worker.stop()
    assert ran == [fine]
    assert crashed == [(doomed, 1, 2)]
    assert set(r.smembers(crash_guard.KEY.format(fine, 1))) == {dead}  # our attempt cleared, the dead one kept
    assert not r.exists(crash_guard.KEY.format(doomed, 1))
