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
    ingest = dramatiq.Actor(lambda d, g: None, actor_name="ingest_document", queue_name="ingest",
                            priority=0, broker=broker, options={})
    other = dramatiq.Actor(lambda d, g: None, actor_name="purge_document", queue_name="ingest",
                           priority=0, broker=broker, options={})
    doc, gone = uuid.uuid4().hex, uuid.uuid4().hex
    ingest.send(doc, 3)
    other.send(gone, 1)
    r = get_redis()
    assert r.exists(ENQUEUED_KEY.format(doc, 3)) and 0 < r.ttl(ENQUEUED_KEY.format(doc, 3)) <= 7 * 24 * 3600
    assert not r.exists(ENQUEUED_KEY.format(doc, 4)) and not r.exists(ENQUEUED_KEY.format(gone, 1))


def test_the_broker_is_built_with_its_middleware_in_one_function(configure):
    from jobs.broker import build_broker

    configure(BAYES_STUB_BROKER="0")
    before = dramatiq.get_broker()
    try:
        names = [type(m).__name__ for m in build_broker().middleware]
    finally:
        dramatiq.set_broker(before)
    assert names[-5:] == ["IngestEnqueued", "WorkerHeartbeat", "MemoryGuard", "Periodic", "RunControl"]
