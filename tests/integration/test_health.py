"""Health through the real API routes (in-process ASGI) against a Redis we stop and restart,
with a real worker process publishing heartbeats."""

import pytest
from starlette.testclient import TestClient

from tests.support.procs import RedisServer, free_port, stack_env, start_index, start_worker, wait_for

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


@pytest.fixture
def private_redis(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


def test_health_degrades_with_redis_down_and_workers_gone(tmp_path, private_redis, configure):
    from bayes_app import redis_client
    from bayes_app.api import build_api

    db_url = f"sqlite:///{tmp_path / 'h.db'}"
    from bayes_app import db

    db.migrate(db_url)
    index_url = f"http://127.0.0.1:{free_port()}"
    index = start_index(tmp_path / "index", int(index_url.rsplit(":", 1)[1]), tmp_path / "index.log")
    configure(BAYES_DATA_DIR=str(tmp_path), DATABASE_URL=db_url, REDIS_URL=private_redis.url, QDRANT_URL=index_url)
    redis_client._sync.clear()
    env = stack_env(tmp_path, 1, DATABASE_URL=db_url, REDIS_URL=private_redis.url, QDRANT_URL=index_url)
    worker = start_worker(env, tmp_path / "worker.log")
    client = TestClient(build_api(), headers=_token_headers(db_url, is_admin=True))
    try:

        def status():
            return client.get("/api/v1/health").json()["status"]

        wait_for(lambda: status() == "ok", 30, 0.3, what="health ok with a live worker")
        # issue 24.8: without credentials, or as a user, the status only; details for admins
        anonymous = TestClient(build_api()).get("/api/v1/health")
        assert anonymous.status_code == 200
        assert anonymous.json() == {"status": "ok"}
        user = TestClient(build_api()).get("/api/v1/health", headers=_token_headers(db_url))
        assert user.json() == {"status": "ok"}
        assert client.get("/api/v1/health").json()["components"]["workers"]["count"] == 1

        private_redis.stop()
        r = client.get("/api/v1/health")
        assert r.status_code == 503
        body = r.json()
        assert body["status"] == "degraded"
        assert "redis" in body["broken"]
        assert body["components"]["redis"]["status"] == "down"
        assert body["components"]["database"]["status"] == "ok"

        private_redis.start()  # same port: the worker's heartbeat resumes on its own
        wait_for(lambda: status() == "ok", 30, 0.3, what="health ok after Redis restart")

        worker.terminate()  # a clean shutdown removes the heartbeat at once
        worker.wait(20)
        r = client.get("/api/v1/health")
        assert r.status_code == 503
        assert r.json()["broken"] == ["workers"]
        # a worker that announced its recycle is being replaced: not an outage (36.10)
        from bayes_app.procs import planned

        assert planned.announce(tmp_path, "memory 900 MB over 800 MB", program="worker_0")
        workers = client.get("/api/v1/health").json()["components"]["workers"]
        assert workers == {"status": "ok", "count": 0, "restarting": ["worker_0"]}
        planned.announce(tmp_path, "a web restart", program="web")
        (planned._dir(tmp_path) / "worker_0").unlink()
        assert client.get("/api/v1/health").json()["broken"] == ["workers"]  # only workers' own count

        index.kill()
        index.wait(10)
        assert "index" in client.get("/api/v1/health").json()["broken"]
    finally:
        if worker.poll() is None:
            worker.kill()
        if index.poll() is None:
            index.kill()
        redis_client._sync.clear()


def _token_headers(db_url: str, is_admin: bool = False) -> dict[str, str]:
    import uuid
    from datetime import timedelta

    from bayes_app.accounts import service
    from bayes_app.db import session_scope

    with session_scope(db_url) as db:
        user = service.register(db, f"h{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42", is_admin=is_admin)
        db.flush()
        token = service.create_api_token(db, user, timedelta(hours=1))[1]
    return {"Authorization": f"Bearer {token}"}


def test_health_degrades_with_database_down(tmp_path, private_redis, configure):
    from bayes_app import redis_client
    from bayes_app.api import build_api

    configure(
        BAYES_DATA_DIR=str(tmp_path), REDIS_URL=private_redis.url, DATABASE_URL="postgresql://nobody@127.0.0.1:1/none"
    )
    redis_client._sync.clear()
    r = TestClient(build_api()).get("/api/v1/health")
    assert r.status_code == 503
    assert r.json() == {"status": "degraded"}  # no credentials: which part failed is not said
    from bayes_app.health import check_health

    assert "database" in check_health()["broken"]
    assert "password" not in r.text.lower()
