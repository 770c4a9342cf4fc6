"""A real `dramatiq jobs` worker process executes an enqueued actor through real Redis."""

import os
import uuid

import dramatiq
from dramatiq.brokers.redis import RedisBroker

from tests.support.procs import stack_env, start_worker, wait_for


def test_enqueued_message_runs_in_worker_process(tmp_path, redis_server):
    import redis

    url = redis_server.url_db(3)  # own Redis db: no other worker competes for the message
    worker = start_worker(stack_env(tmp_path, 1, REDIS_URL=url), tmp_path / "worker.log")
    try:
        broker = RedisBroker(url=url, namespace="bayes-tasks")
        key = f"test:echo:{uuid.uuid4().hex}"
        broker.enqueue(
            dramatiq.Message(queue_name="default", actor_name="echo", args=(key, "hello"), kwargs={}, options={})
        )
        r = redis.Redis.from_url(url, decode_responses=True)
        value = wait_for(lambda: r.get(key), 30, 0.1, what="the worker to run the actor")
        assert value.startswith("hello|pid=")
        assert f"pid={os.getpid()}|" not in value  # ran in the worker, not here
        # and the worker announced itself for /api/v1/health
        assert any(k.startswith("bayes:worker:") for k in r.scan_iter("bayes:worker:*"))
    finally:
        worker.terminate()
        worker.wait(20)


def test_actors_declare_retries_time_limit_and_queue():
    import jobs  # noqa: F401

    broker = dramatiq.get_broker()
    assert broker.get_declared_actors(), "no actors registered"
    for name in broker.get_declared_actors():
        actor = broker.get_actor(name)
        assert "max_retries" in actor.options, name
        assert "time_limit" in actor.options, name
        assert actor.queue_name, name
