"""Durable, cancellable runs end to end: real Redis, real `dramatiq jobs` worker processes,
a SQLite file, and the scripted OpenAI-compatible server in its own process (~30 tokens/s).

The HTTP API runs in-process (Starlette TestClient over `build_api()`); the worker runs the
actors. Cancel latencies are printed (run with -s to see them)."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from datetime import timedelta
from pathlib import Path

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import Session, func, select

from bayes_app.accounts import service as accounts
from bayes_app.chat.grounding import UNSUPPORTED_TEXT
from bayes_app.chat.start import start_ask_run
from bayes_app.credits import ledger, pricing
from bayes_app.db import get_engine, migrate
from bayes_app.models import MICRO, EntryType, LedgerEntry, Run, UsageEvent
from bayes_app.runs import events
from tests.support.fake_openai import FakeOpenAIProcess, Script
from tests.support.procs import restore_env, stack_env, start_worker, wait_for

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files

MODEL = "gpt-4o-mini"
LONG = " ".join(f"word{i}" for i in range(400))  # ~13 s at 30 tokens/s
ENV_KEYS = ("DATABASE_URL", "REDIS_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "BAYES_MODEL_DEFAULT", "BAYES_DATA_DIR")


class Env:
    def __init__(self, tmp: Path, redis_url: str, db_url: str, fake: FakeOpenAIProcess) -> None:
        self.tmp, self.redis_url, self.db_url, self.fake = tmp, redis_url, db_url, fake
        self.r = redis.Redis.from_url(redis_url, decode_responses=True)
        self.broker = RedisBroker(url=redis_url, namespace="bayes-tasks")
        self.proc_env = stack_env(
            tmp,
            1,
            REDIS_URL=redis_url,
            DATABASE_URL=db_url,
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="test-key",
            BAYES_MODEL_DEFAULT=MODEL,
        )
        self.workers: list = []

    def sessions(self) -> Session:
        return Session(get_engine(self.db_url), expire_on_commit=False)

    def start_worker(self, name: str = "worker"):
        w = start_worker(self.proc_env, self.tmp / f"{name}-{len(self.workers)}.log")
        self.workers.append(w)
        return w

    def send(self, actor: str, queue: str, op_id: str) -> None:
        self.broker.enqueue(dramatiq.Message(queue_name=queue, actor_name=actor, args=(op_id,), kwargs={}, options={}))

    def op(self, op_id: str) -> Run:
        with self.sessions() as db:
            return db.get(Run, op_id)

    def wait_final(self, op_id: str, timeout: float = 20) -> Run:
        """Finalized in the DB, then its `done` event (appended right after the commit)."""
        op = wait_for(
            lambda: (o := self.op(op_id)).finalized_at and o, timeout, 0.005, what=f"run {op_id} to be finalized"
        )
        wait_for(
            lambda: any(e.type == "done" for e in self.event_list(op_id)), 5, 0.005, what=f"run {op_id}'s done event"
        )
        return op

    def event_list(self, op_id: str) -> list[events.RunEvent]:
        return events.read_range(self.r, op_id, None, count=100_000)


@pytest.fixture(scope="module")
def env(tmp_path_factory, redis_server):
    tmp = Path(tmp_path_factory.mktemp("runs"))
    db_url = f"sqlite:///{tmp / 'runs.db'}"
    migrate(db_url)
    with Session(get_engine(db_url)) as db:
        pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
        db.commit()
    redis_url = redis_server.url_db(10)
    redis.Redis.from_url(redis_url).flushdb()
    saved = {k: os.environ.get(k) for k in ENV_KEYS}
    fake = FakeOpenAIProcess().start()
    e = Env(tmp, redis_url, db_url, fake)
    os.environ.update(
        DATABASE_URL=db_url,
        REDIS_URL=redis_url,
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="test-key",
        BAYES_MODEL_DEFAULT=MODEL,
        BAYES_DATA_DIR=str(tmp),
    )
    from bayes_app import settings

    settings.get_settings.cache_clear()
    import jobs.runs as jr

    orig = jr.enqueue_run, jr.enqueue_finalize
    jr.enqueue_run = lambda op_id: e.send("run_operation", "agent", op_id)
    jr.enqueue_finalize = lambda op_id: e.send("finalize_operation", "finalize", op_id)
    e.start_worker()
    try:
        yield e
    finally:
        jr.enqueue_run, jr.enqueue_finalize = orig
        for w in e.workers:
            if w.poll() is None:
                w.terminate()
                try:
                    w.wait(20)
                except Exception:  # noqa: BLE001
                    os.killpg(w.pid, signal.SIGKILL)
        fake.stop()
        restore_env(saved)
        settings.get_settings.cache_clear()


@pytest.fixture(scope="module")
def api(env):  # noqa: ARG001 - the module's settings are set for the app it builds
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    with TestClient(build_api()) as client:
        yield client


def new_user(env: Env, credits: float = 10, admin: bool = False) -> tuple[str, dict]:
    with env.sessions() as db:
        user = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex, is_admin=admin)
        db.commit()
        if credits:
            ledger.grant(db, user, int(credits * MICRO), f"grant:{user.id}", "test")
        _, token = accounts.create_api_token(db, user, timedelta(days=1))
        db.commit()
        return user.id, {"Authorization": f"Bearer {token}"}


def start(api, headers: dict, prompt: str) -> str:
    res = api.post("/api/v1/runs", json={"kind": "ask", "prompt": prompt}, headers=headers)
    assert res.status_code == 202, res.text
    assert res.json()["status"] == "QUEUED"
    return res.json()["id"]


def assert_settled(env: Env, op_id: str) -> Run:
    """One spend row == Σ usage cost, one release, nothing held for the run."""
    with env.sessions() as db:
        op = db.get(Run, op_id)
        usage = db.exec(
            select(func.coalesce(func.sum(UsageEvent.cost_credits), 0)).where(UsageEvent.operation_id == op_id)
        ).one()
        rows = db.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op_id)).all()
    spends = [e.amount for e in rows if e.entry_type == EntryType.SPEND]
    assert spends == [-usage]
    assert op.charged_credits == usage
    assert sum(e.amount for e in rows if e.entry_type in EntryType.HOLD) == 0
    assert [e.type for e in env.event_list(op_id)].count("done") == 1
    return op


def text_events(env: Env, op_id: str) -> int:
    return sum(1 for e in env.event_list(op_id) if e.type == "text")


# ---- tests -----------------------------------------------------------------------------------
def test_run_succeeds_with_citations_before_text(env, api):
    _uid, h = new_user(env)
    marker = f"OK{uuid.uuid4().hex[:8]}"
    env.fake.script(Script.thinking(marker), Script(text="The answer is forty two.", match=marker))
    op_id = start(api, h, f"What is it? {marker}")
    op = env.wait_final(op_id)
    assert op.status == "SUCCEEDED", op.outcome_reason
    types = [e.type for e in env.event_list(op_id)]
    assert types.index("thinking") < types.index("metadata") < types.index("text")
    assert types.index("text") < types.index("memory") < types[-1:].index("done") + len(types) - 1
    assert types[-1] == "done"
    thinking = "".join(e.data.get("delta", "") for e in env.event_list(op_id) if e.type == "thinking")
    assert thinking == "Let me look this up in the library."
    # the user's library is empty: an answer citing nothing gets the line that says so
    assert (
        "".join(e.data["delta"] for e in env.event_list(op_id) if e.type == "text")
        == "The answer is forty two.\n\n" + UNSUPPORTED_TEXT
    )
    settled = assert_settled(env, op_id)
    assert settled.charged_credits > 0
    body = api.get(f"/api/v1/runs/{op_id}", headers=h).json()
    assert body["status"] == "SUCCEEDED"
    assert body["usage"]["events"] == 2  # thinking + answer
    assert body["usage"]["estimated_events"] == 0
    assert body["charged_credits"] == settled.charged_credits
    credits = api.get("/api/v1/credits", headers=h).json()
    assert credits["held"] == 0
    assert credits["balance"] == 10 * MICRO - settled.charged_credits
    assert [r["id"] for r in credits["history"] if r["kind"] == "run"] == [op_id]


def test_insufficient_credits_refused_before_any_model_call(env, api):
    _uid, h = new_user(env, credits=0)
    before = len(env.fake.chat_requests())
    res = api.post("/api/v1/runs", json={"kind": "ask", "prompt": "hello"}, headers=h)
    assert res.status_code == 402
    assert res.json()["error"]["code"] == "insufficient_credits"
    assert "credits" in res.json()["error"]["message"]
    assert len(env.fake.chat_requests()) == before


def test_cancel_while_queued(env, api):
    uid, h = new_user(env)
    marker = f"Q{uuid.uuid4().hex[:8]}"
    # create the run without enqueueing it: it stays QUEUED
    with env.sessions() as db:
        op_id = start_ask_run(db, uid, "ask", f"q {marker}", MODEL, 1000).id
    res = api.post(f"/api/v1/runs/{op_id}/cancel", headers=h)
    assert res.status_code == 202, res.text
    assert res.json()["status"] == "CANCELLED"  # settled inline: nobody was working on it
    env.send("run_operation", "agent", op_id)  # a late delivery must do nothing
    time.sleep(1.0)
    op = assert_settled(env, op_id)
    assert (op.status, op.outcome_reason, op.charged_credits, op.attempt) == ("CANCELLED", "user_cancel", 0, 0)
    assert not [r for r in env.fake.chat_requests() if marker in json.dumps(r["body"])]


def _cancel_mid_stream(env: Env, api, h: dict) -> tuple[str, float, float]:
    marker = f"S{uuid.uuid4().hex[:8]}"
    env.fake.script(Script.thinking(marker), Script(text=LONG, tokens_per_s=30, match=marker))
    op_id = start(api, h, f"Tell me everything {marker}")
    wait_for(lambda: text_events(env, op_id) >= 5, 20, 0.01, what="streaming")
    t0 = time.monotonic()
    res = api.post(f"/api/v1/runs/{op_id}/cancel", headers=h)
    assert res.status_code == 202, res.text
    rec = env.fake.wait_for(lambda rs: any(marker in json.dumps(r["body"]) and r["disconnected"] for r in rs), 5)
    rec = next(r for r in rec if marker in json.dumps(r["body"]) and r["disconnected"])
    stop_s = rec["disconnected_at"] - t0
    env.wait_final(op_id)
    settle_s = time.monotonic() - t0
    return op_id, stop_s, settle_s


def test_cancel_while_streaming(env, api):
    _uid, h = new_user(env)
    stops, settles = [], []
    for _ in range(int(os.environ.get("BAYES_TEST_CANCEL_RUNS", "5"))):
        op_id, stop_s, settle_s = _cancel_mid_stream(env, api, h)
        stops.append(stop_s)
        settles.append(settle_s)
        op = assert_settled(env, op_id)
        assert (op.status, op.outcome_reason) == ("CANCELLED", "user_cancel")
        n_text = text_events(env, op_id)
        assert n_text < 100  # stopped long before the 400 words
        with env.sessions() as db:
            usage = db.exec(
                select(UsageEvent).where(UsageEvent.operation_id == op_id, UsageEvent.step == "agent")
            ).all()
        assert len(usage) == 1
        assert usage[0].estimated  # the stream was cut: no provider usage
        assert usage[0].output_tokens >= 5

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] * 1000

    print(
        f"\n{len(stops)} cancels: cancel -> server sees disconnect p50 {q(stops, 0.5):.1f} ms, "
        f"p99 {q(stops, 0.99):.1f} ms; cancel -> finalized p50 {q(settles, 0.5):.1f} ms, "
        f"p99 {q(settles, 0.99):.1f} ms"
    )
    assert max(stops) < 0.5
    assert max(settles) < 2.0
    credits = api.get("/api/v1/credits", headers=h).json()
    assert credits["held"] == 0


def test_cancel_twice_and_after_finish(env, api):
    _uid, h = new_user(env)
    op_id, _s, _t = _cancel_mid_stream(env, api, h)
    again = api.post(f"/api/v1/runs/{op_id}/cancel", headers=h)
    assert again.status_code == 202
    assert again.json()["status"] == "CANCELLED"
    assert_settled(env, op_id)
    marker = f"F{uuid.uuid4().hex[:8]}"
    env.fake.script(Script.thinking(marker), Script(text="done quickly", match=marker))
    done_id = start(api, h, f"quick {marker}")
    assert env.wait_final(done_id).status == "SUCCEEDED"
    late = api.post(f"/api/v1/runs/{done_id}/cancel", headers=h)
    assert late.status_code == 409
    op = assert_settled(env, done_id)
    assert op.status == "SUCCEEDED"
    assert op.cancel_requested_at is None


def _read_sse(resp, limit: int | None = None) -> list[tuple[str | None, dict]]:
    out: list[tuple[str | None, dict]] = []
    ev_id, data = None, None
    for line in resp.iter_lines():
        if line.startswith("id: "):
            ev_id = line[4:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and data is not None:
            out.append((ev_id, data))
            ev_id, data = None, None
            if limit and len(out) >= limit:
                break
    return out


def test_sse_resumes_with_last_event_id(env, api):
    _uid, h = new_user(env)
    marker = f"E{uuid.uuid4().hex[:8]}"
    words = " ".join(f"w{i}" for i in range(60))
    env.fake.script(Script.thinking(marker), Script(text=words, tokens_per_s=60, match=marker))
    op_id = start(api, h, f"stream {marker}")
    with api.stream("GET", f"/api/v1/runs/{op_id}/events", headers=h) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        first = _read_sse(resp, limit=8)  # then drop the connection mid-run
    assert env.op(op_id).finalized_at is None  # disconnect != cancel
    last_id = first[-1][0]
    with api.stream("GET", f"/api/v1/runs/{op_id}/events", headers={**h, "Last-Event-ID": last_id}) as resp:
        rest = _read_sse(resp)
    got = first + rest
    stream_ids = [e.id for e in env.event_list(op_id)]
    assert [i for i, _ in got] == stream_ids  # no gap, no duplicate, in order
    assert got[-1][1]["type"] == "done"
    assert got[-1][1]["data"]["status"] == "SUCCEEDED"
    text = "".join(d["data"]["delta"] for _, d in got if d["type"] == "text")
    assert text == words + "\n\n" + UNSUPPORTED_TEXT  # an empty library: nothing to cite
    # NDJSON from a cursor
    res = api.get(f"/api/v1/runs/{op_id}/events?format=ndjson&after={stream_ids[2]}", headers=h)
    lines = [json.loads(x) for x in res.text.splitlines()]
    assert [x["id"] for x in lines] == stream_ids[3:]


def test_events_of_a_settled_run_whose_stream_expired_end_with_done(env, api):
    _uid, h = new_user(env)
    env.fake.script(Script.thinking("EXPIRED1"), Script(text="short", match="EXPIRED1"))
    op_id = start(api, h, "old EXPIRED1")
    env.wait_final(op_id)
    env.r.delete(events.stream_key(op_id), f"op:{op_id}:done")
    t0 = time.monotonic()
    res = api.get(f"/api/v1/runs/{op_id}/events?format=ndjson", headers=h)
    lines = [json.loads(x) for x in res.text.splitlines()]
    assert [x["type"] for x in lines] == ["done"]
    assert lines[0]["data"]["status"] == "SUCCEEDED"
    assert time.monotonic() - t0 < 6


def test_other_users_runs_are_404(env, api):
    _a, ha = new_user(env)
    _b, hb = new_user(env)
    env.fake.script(Script.thinking("ISOLATED1"), Script(text="mine", match="ISOLATED1"))
    op_id = start(api, ha, "secret ISOLATED1")
    for method, path in [
        ("GET", f"/api/v1/runs/{op_id}"),
        ("GET", f"/api/v1/runs/{op_id}/events"),
        ("POST", f"/api/v1/runs/{op_id}/cancel"),
    ]:
        res = api.request(method, path, headers=hb)
        assert res.status_code == 404, (path, res.text)
    assert env.wait_final(op_id).status == "SUCCEEDED"


def test_admin_prices_grant_and_reconciliation(env, api):
    uid, h = new_user(env, credits=0)
    _admin, ha = new_user(env, credits=0, admin=True)
    assert api.get("/api/v1/admin/prices", headers=h).status_code == 403
    prices = api.get("/api/v1/admin/prices", headers=ha).json()["prices"]
    assert {p["model"] for p in prices} >= {"offline", MODEL}
    put = api.put(
        "/api/v1/admin/prices/test-model",
        headers=ha,
        json={"input_per_million": 1, "cached_per_million": 0, "output_per_million": 2},
    )
    assert put.status_code == 200
    assert put.json()["output_per_million"] == 2
    assert api.get("/api/v1/admin/prices/test-model", headers=ha).json()["input_per_million"] == 1
    g = api.post("/api/v1/admin/credits/grant", headers=ha, json={"user_id": uid, "credits": 2.5})
    assert g.status_code == 201
    assert g.json()["balance"] == 2_500_000
    rec = api.get("/api/v1/admin/credits/reconciliation", headers=ha).json()
    assert rec["runs_checked"] >= 1
    assert rec["spend_mismatches"] == []
    assert rec["held_after_finalize"] == []


def test_worker_killed_mid_run_is_finalized_worker_lost(env, api):
    """kill -9 of the worker (whole process group) mid-stream; a worker started afterwards
    (the surviving fleet) reaps the run: FAILED worker_lost within 15 s of the kill."""
    _uid, h = new_user(env)
    marker = f"K{uuid.uuid4().hex[:8]}"
    env.fake.script(Script.thinking(marker), Script(text=LONG, tokens_per_s=30, match=marker))
    op_id = start(api, h, f"crash {marker}")
    wait_for(lambda: text_events(env, op_id) >= 3, 20, 0.01, what="streaming")
    for w in env.workers:
        if w.poll() is None:
            os.killpg(w.pid, signal.SIGKILL)
            w.wait(10)
    t0 = time.monotonic()
    env.start_worker("survivor")
    op = env.wait_final(op_id, timeout=25)
    took = time.monotonic() - t0
    print(f"\nkill -9 -> finalized FAILED worker_lost in {took:.1f} s")
    assert (op.status, op.outcome_reason) == ("FAILED", "worker_lost")
    assert took <= 15
    assert_settled(env, op_id)
    # usage recorded before the crash is still charged (nothing else: the stream was lost)
    assert op.attempt == 1


def test_role_models_are_priced_at_start_and_used_per_step(env, api, monkeypatch):
    from bayes_app import settings

    _uid, h = new_user(env)
    monkeypatch.setenv("BAYES_MODEL_THINKING", "thinker-unpriced")
    settings.get_settings.cache_clear()
    try:
        res = api.post("/api/v1/runs", json={"kind": "ask", "prompt": "hello"}, headers=h)
        assert res.status_code == 409
        assert "thinker-unpriced" in res.json()["error"]["message"]
        with env.sessions() as db:
            pricing.set_price(db, "thinker-priced", 100_000, 0, 400_000)
            db.commit()
        monkeypatch.setenv("BAYES_MODEL_THINKING", "thinker-priced")
        settings.get_settings.cache_clear()
        marker = f"R{uuid.uuid4().hex[:8]}"
        env.fake.script(Script.thinking(marker), Script(text="ok", match=marker))
        op_id = start(api, h, f"Roles {marker}")
        assert env.wait_final(op_id).status == "SUCCEEDED"
        with env.sessions() as db:
            steps = {u.step: u.model for u in db.exec(select(UsageEvent).where(UsageEvent.operation_id == op_id))}
        assert steps == {"thinking": "thinker-priced", "agent": MODEL}
        models = [r["body"]["model"] for r in env.fake.chat_requests() if marker in json.dumps(r["body"])]
        assert models == ["thinker-priced", MODEL]
    finally:
        monkeypatch.delenv("BAYES_MODEL_THINKING")
        settings.get_settings.cache_clear()
