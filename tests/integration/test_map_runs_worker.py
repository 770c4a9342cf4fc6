"""Map runs end to end on SQLite and PostgreSQL: the HTTP API in-process, a real `dramatiq
jobs` worker process, real Redis, a real index process, the scripted OpenAI-compatible server
in its own process. build_map to SUCCEEDED with node events on the run's stream; Stop
mid-run keeps every node written and settles CANCELLED with its charged credits; deleting
the map mid-run cancels the run (`resource_deleted`) and settles it; another user gets 404."""

from __future__ import annotations

import json
import os
import signal
import uuid
from datetime import timedelta

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.credits import ledger, pricing
from bayes_app.db import get_engine
from bayes_app.models import MICRO, MapNode, Run
from tests.integration.test_map_agents import ASPECT_QUERIES, Q1, Q2A, Q2B, claims_json
from tests.support import pdfs
from tests.support.fake_openai import FakeOpenAIProcess, Script
from tests.support.maplib import assert_provenance, ingest
from tests.support.procs import free_port, restore_env, stack_env, start_index, start_worker, wait_for

MODEL = "gpt-4o-mini"
ENV_KEYS = (
    "DATABASE_URL",
    "REDIS_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "BAYES_MODEL_DEFAULT",
    "BAYES_DATA_DIR",
    "QDRANT_URL",
)


@pytest.fixture
def stack(db_url, redis_server, tmp_path):
    from starlette.testclient import TestClient

    import jobs.runs as jr
    from bayes_app import settings
    from bayes_app.api import build_api
    from bayes_app.search import runtime

    port = free_port()
    index = start_index(tmp_path / "index", port, tmp_path / "index.log")
    redis_url = redis_server.url_db(11)
    redis.Redis.from_url(redis_url).flushdb()
    fake = FakeOpenAIProcess().start()
    env = {
        "DATABASE_URL": db_url,
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "test-key",
        "BAYES_MODEL_DEFAULT": MODEL,
        "BAYES_DATA_DIR": str(tmp_path),
        "QDRANT_URL": f"http://127.0.0.1:{port}",
    }
    saved = {k: os.environ.get(k) for k in ENV_KEYS}
    os.environ.update(env)
    settings.get_settings.cache_clear()
    runtime.reset()
    with Session(get_engine(db_url)) as db:
        pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
        db.commit()
    broker = RedisBroker(url=redis_url, namespace="bayes-tasks")

    def send(actor: str, queue: str, op_id: str) -> None:
        broker.enqueue(dramatiq.Message(queue_name=queue, actor_name=actor, args=(op_id,), kwargs={}, options={}))

    orig = jr.enqueue_run, jr.enqueue_finalize
    jr.enqueue_run = lambda op_id: send("run_operation", "agent", op_id)
    jr.enqueue_finalize = lambda op_id: send("finalize_operation", "finalize", op_id)
    worker = start_worker(stack_env(tmp_path, 1, **env), tmp_path / "worker.log")
    client = TestClient(build_api())
    client.__enter__()
    try:
        yield {"api": client, "fake": fake, "db_url": db_url, "tmp": tmp_path, "worker_log": tmp_path / "worker.log"}
    finally:
        client.__exit__(None, None, None)
        jr.enqueue_run, jr.enqueue_finalize = orig
        for proc in (worker, index):
            proc.terminate()
            try:
                proc.wait(20)
            except Exception:  # noqa: BLE001
                os.killpg(proc.pid, signal.SIGKILL)
        fake.stop()
        runtime.reset()
        restore_env(saved)
        settings.get_settings.cache_clear()


def sessions_for(url: str):
    return lambda: Session(get_engine(url), expire_on_commit=False)


def new_user(stack, credits: float = 10) -> tuple[str, dict]:
    with sessions_for(stack["db_url"])() as db:
        user = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        ledger.grant(db, user, int(credits * MICRO), f"grant:{user.id}", "test")
        _, token = accounts.create_api_token(db, user, timedelta(days=1))
        db.commit()
        return user.id, {"Authorization": f"Bearer {token}"}


def script_run(stack, uid: str, slow_second_aspect: bool) -> None:
    """Scripts for one build_map: aspect 1 answers at once, aspect 2 slowly when asked."""
    from bayes_app.agents.retrieval import _search
    from bayes_app.library.quotes import quote_in_text

    sessions = sessions_for(stack["db_url"])

    def number(query: str, quote: str, exclude: set[str]) -> tuple[int, set[str]]:
        hits = [
            (h, raw) for h, raw, *_ in _search(sessions, uid, query, 6 + len(exclude)) if h.chunk_id not in exclude
        ][:6]
        return next(i for i, (h, raw) in enumerate(hits, 1) if quote_in_text(raw, quote)), {h.chunk_id for h, _ in hits}

    n1, seen = number(ASPECT_QUERIES["Decision order"], Q1, set())
    n2a, _ = number(ASPECT_QUERIES["Recall against baselines"], Q2A, seen)
    n2b, _ = number(ASPECT_QUERIES["Recall against baselines"], Q2B, seen)
    plan = {"aspects": [{"title": t, "query": q} for t, q in ASPECT_QUERIES.items()]}
    slow = {"tokens_per_s": 15} if slow_second_aspect else {}
    stack["fake"].reset()
    stack["fake"].script(
        Script.reply(json.dumps(plan), match="ROLE: planner"),
        Script.reply(
            claims_json(("The Selector acts as a single-token reward model.", Q1, n1)), match="ASPECT: Decision order"
        ),
        Script.reply(
            claims_json(
                ("PaSa-7B achieves higher recall than Google with GPT-4o.", Q2A, n2a),
                ("PaSa-7B achieves lower recall than Google with GPT-4o.", Q2B, n2b),
            ),
            match="ASPECT: Recall against baselines",
            **slow,
        ),
    )


def wait_final(api, h, run_id: str, timeout: float = 60) -> dict:
    return wait_for(
        lambda: (r := api.get(f"/api/v1/runs/{run_id}", headers=h).json())["finalized_at"] and r,
        timeout,
        0.05,
        what=f"run {run_id} settled",
    )


def agent_nodes(stack, map_id: str) -> list[MapNode]:
    with sessions_for(stack["db_url"])() as db:
        return list(db.exec(select(MapNode).where(MapNode.map_id == map_id, MapNode.created_by == "agent")))


def test_map_runs_with_a_real_worker(stack):
    api = stack["api"]
    uid, h = new_user(stack)
    _, other = new_user(stack)
    ingest(sessions_for(stack["db_url"]), uid, stack["tmp"] / "files", [pdfs.PASA])

    # bad input gets clear messages
    r = api.post("/api/v1/runs", json={"kind": "build_map"}, headers=h)
    assert r.status_code == 400
    assert "mindmap_id" in r.json()["error"]["message"]
    m = api.post(
        "/api/v1/mindmaps", json={"title": "PaSa", "question": "How does PaSa search papers?"}, headers=h
    ).json()
    r = api.post("/api/v1/runs", json={"kind": "expand", "mindmap_id": m["id"]}, headers=h)
    assert r.status_code == 400
    assert "node_id" in r.json()["error"]["message"]

    # 1. a whole build_map
    script_run(stack, uid, slow_second_aspect=False)
    r = api.post("/api/v1/runs", json={"kind": "build_map", "mindmap_id": m["id"]}, headers=h)
    assert r.status_code == 202, r.text
    run_id = r.json()["id"]
    # open editors of the map are woken by the start (they follow the run without waiting a poll)
    from bayes_app.maps.runs import started_key
    from bayes_app.redis_client import get_redis

    assert [f["run"] for _i, f in get_redis().xrange(started_key(m["id"]))] == [run_id]
    run = wait_final(api, h, run_id)
    assert run["status"] == "SUCCEEDED", (run, stack["worker_log"].read_text()[-3000:])
    assert run["title"] == "Research · PaSa"
    assert run["kind"] == "build_map"
    with api.stream("GET", f"/api/v1/runs/{run_id}/events?format=ndjson", headers=h) as s:
        evs = [json.loads(x) for x in s.iter_lines() if x]
    node_ids = [e["data"]["id"] for e in evs if e["type"] == "node"]
    view = api.get(f"/api/v1/mindmaps/{m['id']}", headers=h).json()
    assert set(node_ids) <= {n["id"] for n in view["nodes"]}  # themes + claims
    assert len(node_ids) == 2 + 3
    # (the aspect that found nothing has no theme: a theme is written with its first claim)
    assert [r["kind"] for r in view["relations"]] == ["contradicts"]
    assert len(view["citations"]) == 3
    assert all(c["title"].startswith("PaSa") for c in view["citations"])
    with sessions_for(stack["db_url"])() as db:
        assert assert_provenance(db, m["id"]) == 3
    runs = api.get(f"/api/v1/mindmaps/{m['id']}/runs", headers=h).json()["runs"]
    assert [x["id"] for x in runs] == [run_id]
    md = api.get(f"/api/v1/mindmaps/{m['id']}/export.md", headers=h)
    assert md.status_code == 200
    assert "## References" in md.text
    assert api.get(f"/api/v1/mindmaps/{m['id']}/export.bib", headers=h).text.startswith("@misc{")

    _assert_isolated(api, h, other, m["id"], view["nodes"][1]["id"], run_id)
    _stop_mid_run(stack, api, h, uid)
    _delete_mid_run(stack, api, h, uid)


def _assert_isolated(api, h: dict, other: dict, map_id: str, nid: str, run_id: str) -> None:
    """Isolation: another user gets 404 for the map, its nodes, its runs and its exports."""
    for method, path, body in [
        ("GET", f"/mindmaps/{map_id}", None),
        ("PATCH", f"/mindmaps/{map_id}", {"title": "mine"}),
        ("DELETE", f"/mindmaps/{map_id}", None),
        ("GET", f"/mindmaps/{map_id}/revision", None),
        ("POST", f"/mindmaps/{map_id}/nodes", {"parent_id": nid, "title": "x"}),
        ("PATCH", f"/mindmaps/{map_id}/nodes/{nid}", {"title": "mine"}),
        ("DELETE", f"/mindmaps/{map_id}/nodes/{nid}", None),
        ("GET", f"/mindmaps/{map_id}/export.md", None),
        ("GET", f"/mindmaps/{map_id}/runs", None),
        ("POST", "/runs", {"kind": "deepen", "mindmap_id": map_id, "node_id": nid}),
        ("GET", f"/runs/{run_id}", None),
        ("GET", f"/runs/{run_id}/events", None),
        ("POST", f"/runs/{run_id}/cancel", None),
    ]:
        res = api.request(method, "/api/v1" + path, json=body, headers=other)
        assert res.status_code == 404, (method, path, res.text)
        assert res.json()["error"]["code"] == "not_found"
    assert api.get("/api/v1/mindmaps", headers=other).json()["mindmaps"] == []
    assert api.get(f"/api/v1/mindmaps/{map_id}", headers=h).json()["title"] == "PaSa"


def _stop_mid_run(stack, api, h: dict, uid: str) -> None:
    """Stop mid-run: nodes written so far stay, CANCELLED, charged credits shown."""
    m2 = api.post(
        "/api/v1/mindmaps", json={"title": "Stopped", "question": "How does PaSa search papers?"}, headers=h
    ).json()
    script_run(stack, uid, slow_second_aspect=True)
    run2 = api.post("/api/v1/runs", json={"kind": "build_map", "mindmap_id": m2["id"]}, headers=h).json()["id"]
    wait_for(
        lambda: any(n.kind == "claim" for n in agent_nodes(stack, m2["id"])), 60, 0.05, what="the first claim of run 2"
    )
    stack["fake"].wait_for(lambda rs: any("ASPECT: Recall" in json.dumps(x["body"]) for x in rs), 30)
    before = {n.id for n in agent_nodes(stack, m2["id"])}
    res = api.post(f"/api/v1/runs/{run2}/cancel", headers=h)
    assert res.status_code == 202
    done = wait_final(api, h, run2)
    assert done["status"] == "CANCELLED"
    assert done["charged_credits"] > 0
    after = {n.id for n in agent_nodes(stack, m2["id"])}
    assert before <= after  # nothing committed before the Stop was lost
    assert not any(n.title.startswith("PaSa-7B achieves") for n in agent_nodes(stack, m2["id"]))
    credits = api.get("/api/v1/credits", headers=h).json()
    assert credits["held"] == 0


def _delete_mid_run(stack, api, h: dict, uid: str) -> None:
    """Deleting the map mid-run cancels the run (resource_deleted) and settles it."""
    m3 = api.post(
        "/api/v1/mindmaps", json={"title": "Deleted", "question": "How does PaSa search papers?"}, headers=h
    ).json()
    script_run(stack, uid, slow_second_aspect=True)
    run3 = api.post("/api/v1/runs", json={"kind": "build_map", "mindmap_id": m3["id"]}, headers=h).json()["id"]
    wait_for(
        lambda: any(n.kind == "claim" for n in agent_nodes(stack, m3["id"])), 60, 0.05, what="the first claim of run 3"
    )
    res = api.delete(f"/api/v1/mindmaps/{m3['id']}", headers=h)
    assert res.status_code == 200
    assert res.json()["cancelled_runs"] == [run3]
    done = wait_final(api, h, run3)
    assert done["status"] == "CANCELLED"
    assert done["outcome_reason"] == "resource_deleted"
    assert api.get(f"/api/v1/mindmaps/{m3['id']}", headers=h).status_code == 404
    assert agent_nodes(stack, m3["id"]) == []
    with sessions_for(stack["db_url"])() as db:
        ops = db.exec(select(Run).where(Run.owner_id == uid)).all()
        assert all(o.finalized_at is not None for o in ops)
    assert api.get("/api/v1/credits", headers=h).json()["held"] == 0
