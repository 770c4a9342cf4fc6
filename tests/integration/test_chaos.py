"""Fault tolerance of durable runs, end to end, on SQLite and on PostgreSQL: real
`dramatiq jobs` worker processes, a real redis-server (append-only file, so it can be
restarted mid-run without losing its data), and the scripted OpenAI-compatible server in
its own process.

Faults: the finalizer's first attempts fail (a real database error injected through
BAYES_FAULTS), 429 then success, a stream cut without usage, a stream ending without usage,
Redis restarted mid-run (short, and longer than the lease), kill -9 of the workers
mid-stream, and a seeded randomized batch of ≥ 50 runs mixing them, checked with the
admin reconciliation (on PostgreSQL). Run with -s to see the seed and timings; BAYES_CHAOS_SEED replays a
batch."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import Session, func, select

from bayes_app.chat.start import start_ask_run
from bayes_app.credits import ledger, pricing
from bayes_app.credits.reconcile import reconcile
from bayes_app.db import get_engine, migrate
from bayes_app.llm.tokens import count_tokens
from bayes_app.models import MICRO, EntryType, LedgerEntry, Run, UsageEvent, User
from bayes_app.runs import control, events, service
from bayes_app.runs import lifecycle as lc
from tests.support.fake_openai import FakeOpenAIProcess, Script
from tests.support.procs import RedisServer, stack_env, start_worker, wait_for

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files

MODEL = "gpt-4o-mini"
PRICE = (150_000, 75_000, 600_000)  # micro-credits per million input / cached / output tokens
REAP_STALE_S = 5 + control.LEASE_MS / 1000  # reaper interval + its grace


def words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def marker(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


THINK_IN, THINK_OUT = 11, 3  # tokens of the scripted thinking call of every run


class Chaos:
    """One backend's world: DB, its own restartable Redis, the fake model server, workers."""

    def __init__(self, tmp: Path, db_url: str, redis_srv: RedisServer, fake: FakeOpenAIProcess):
        self.tmp, self.db_url, self.redis_srv, self.fake = tmp, db_url, redis_srv, fake
        self.r = redis.Redis.from_url(redis_srv.url, decode_responses=True)
        self.broker = RedisBroker(url=redis_srv.url, namespace="bayes-tasks")
        self.proc_env = stack_env(
            tmp,
            1,
            REDIS_URL=redis_srv.url,
            DATABASE_URL=db_url,
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="test-key",
            BAYES_MODEL_DEFAULT=MODEL,
        )
        self.workers: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    # ---- processes
    def start_workers(self, n: int = 2, **extra: str) -> None:
        for _ in range(n):
            log = self.tmp / f"worker-{len(self.logs)}.log"
            self.logs.append(log)
            self.workers.append(start_worker({**self.proc_env, **extra}, log))

    def kill_workers(self) -> None:
        """kill -9 every worker (the whole process group: dramatiq forks its workers)."""
        for w in self.workers:
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait(10)
        self.workers = []

    def stop_workers(self) -> None:
        for w in self.workers:
            if w.poll() is None:  # to Dramatiq's main process only: it forwards the signal to its
                w.terminate()  # worker process, which a second SIGTERM from the group would hang
        for w in self.workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait(10)
        self.workers = []

    def replace_workers(self, n: int = 2, **extra: str) -> None:
        self.stop_workers()
        self.start_workers(n, **extra)

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    # ---- runs
    def sessions(self) -> Session:
        return Session(get_engine(self.db_url), expire_on_commit=False)

    def send(self, actor: str, queue: str, op_id: str) -> None:
        def go() -> bool:
            self.broker.enqueue(
                dramatiq.Message(queue_name=queue, actor_name=actor, args=(op_id,), kwargs={}, options={})
            )
            return True

        wait_for(go, 10, 0.1, what="enqueue")  # the test's connection may be stale after a restart

    def new_user(self, credits: float = 20) -> str:
        with self.sessions() as db:
            user = User(email=f"u{uuid.uuid4().hex[:10]}@example.com", password_hash="x")
            db.add(user)
            db.commit()
            ledger.grant(db, user, int(credits * MICRO), f"grant:{user.id}", "test")
            db.commit()
            return user.id

    def start(self, uid: str, prompt: str, enqueue: bool = True) -> str:
        with self.sessions() as db:
            op_id = start_ask_run(db, uid, "ask", prompt, MODEL, 1000).id
        if enqueue:
            self.send("run_operation", "agent", op_id)
        return op_id

    def cancel(self, op_id: str) -> bool:
        """What POST /runs/{id}/cancel does; True when the run had already stopped."""
        already = service.cancel_run(self.sessions, self.r, op_id)
        if service.settle(self.sessions, self.r, op_id) == "wait":
            self.send("finalize_operation", "finalize", op_id)
        return already

    def op(self, op_id: str) -> Run:
        with self.sessions() as db:
            return db.get(Run, op_id)

    def events(self, op_id: str) -> list[events.RunEvent]:
        return events.read_range(self.r, op_id, None, count=100_000)

    def text(self, op_id: str) -> str:
        """What the model streamed (not the grounding line the system may add after it)."""
        return "".join(e.data["delta"] for e in self.events(op_id) if e.type == "text" and not e.data.get("by"))

    def n_text(self, op_id: str) -> int:
        return sum(1 for e in self.events(op_id) if e.type == "text")

    def usage(self, op_id: str) -> list[UsageEvent]:
        """The usage of the answer's model call (the Ask agent's `agent` step; its thinking
        call is scripted to succeed and checked by the settlement invariants only)."""
        with self.sessions() as db:
            return list(
                db.exec(select(UsageEvent).where(UsageEvent.operation_id == op_id, UsageEvent.step == "agent")).all()
            )

    def requests_with(self, mark: str) -> list[dict]:
        """Requests of the answer's model call (they offer tools; the thinking call does not)."""
        return [r for r in self.fake.chat_requests() if mark in str(r["body"]) and r["body"].get("tools")]

    def script(self, *scripts: Script) -> None:
        """Script one Ask run: its thinking call succeeds, then `scripts` answer."""
        self.fake.script(
            Script.thinking(scripts[0].match, prompt_tokens=THINK_IN, completion_tokens=THINK_OUT), *scripts
        )

    def wait_final(self, op_id: str, timeout: float = 30) -> Run:
        op = wait_for(
            lambda: (o := self.op(op_id)).finalized_at and o, timeout, 0.02, what=f"run {op_id} to be finalized"
        )
        wait_for(lambda: any(e.type == "done" for e in self.events(op_id)), 10, 0.02, what=f"run {op_id}'s done event")
        return op

    def assert_settled(self, op_id: str) -> Run:
        """Terminal; one spend row == −Σ usage cost == −charged; nothing held; one `done`."""
        with self.sessions() as db:
            op = db.get(Run, op_id)
            cost = db.exec(
                select(func.coalesce(func.sum(UsageEvent.cost_credits), 0)).where(UsageEvent.operation_id == op_id)
            ).one()
            rows = db.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op_id)).all()
        assert op.status in ("SUCCEEDED", "CANCELLED", "FAILED"), op.status
        assert [e.amount for e in rows if e.entry_type == EntryType.SPEND] == [-cost]
        assert op.charged_credits == cost
        assert sum(e.amount for e in rows if e.entry_type in EntryType.HOLD) == 0
        assert len([e for e in rows if e.entry_type == EntryType.RELEASE]) == 1
        assert [e.type for e in self.events(op_id)].count("done") == 1
        return op

    def cost(self, inp: int, out: int) -> int:
        with self.sessions() as db:
            return pricing.cost_micro(pricing.get_price(db, MODEL), inp, 0, out)

    def run_cost(self, inp: int, out: int) -> int:
        """A run's charge: the scripted thinking call plus an answer of `inp`/`out` tokens."""
        return self.cost(THINK_IN, THINK_OUT) + self.cost(inp, out)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def chaos(request, tmp_path_factory):
    tmp = Path(tmp_path_factory.mktemp(f"chaos-{request.param}"))
    if request.param == "sqlite":
        db_url = f"sqlite:///{tmp / 'chaos.db'}"
    else:
        db_url = request.getfixturevalue("pg_cluster").create_database(f"chaos_{uuid.uuid4().hex[:10]}")
    migrate(db_url)
    with Session(get_engine(db_url)) as db:
        pricing.set_price(db, MODEL, *PRICE)
        db.commit()
    redis_srv = RedisServer(tmp / "redis", persist=True).start()
    fake = FakeOpenAIProcess().start()
    env = Chaos(tmp, db_url, redis_srv, fake)
    try:
        yield env
    finally:
        env.stop_workers()
        fake.stop()
        redis_srv.stop()
        get_engine(db_url).dispose()


@pytest.fixture
def workers(chaos):
    """Two normal workers (started if the previous test left none)."""
    alive = [w for w in chaos.workers if w.poll() is None]
    if len(alive) < 2 or len(alive) != len(chaos.workers):
        chaos.replace_workers(2)
    return chaos


# ---- single faults ---------------------------------------------------------------------------
def test_finalizer_fails_first_then_dramatiq_retry_settles_once(chaos):
    """The worker's inline settle and the finalize actor's first attempt hit a real DB error
    after writing spend + release (rolled back); the actor's dramatiq retry settles it."""
    chaos.replace_workers(1, BAYES_FAULTS="finalize_settle:2")
    try:
        uid = chaos.new_user()
        m = marker("FIN")
        chaos.script(Script(text="settled after a retry", match=m, prompt_tokens=40, completion_tokens=4))
        op_id = chaos.start(uid, f"q {m}")
        op = chaos.wait_final(op_id, timeout=40)
        log = chaos.log_text()
        assert log.count("injected database fault at finalize_settle") == 2, log[-3000:]
        assert "inline finalize of" in log
        assert "Retrying message" in log
        assert op.status == "SUCCEEDED"
        op = chaos.assert_settled(op_id)
        assert op.charged_credits == chaos.run_cost(40, 4) > 0
        with chaos.sessions() as db:
            assert ledger.held(db, uid) == 0
            assert ledger.balance(db, uid) == 20 * MICRO - op.charged_credits
    finally:
        chaos.replace_workers(2)


def test_rate_limited_then_success_records_usage_once(workers):
    chaos = workers
    uid = chaos.new_user()
    m = marker("RL")
    chaos.script(
        Script.error(429, retry_after="0.3", message="slow down", match=m),
        Script(text="after the rate limit", match=m, prompt_tokens=123, completion_tokens=45),
    )
    op_id = chaos.start(uid, f"q {m}")
    op = chaos.wait_final(op_id)
    assert op.status == "SUCCEEDED", op.outcome_reason
    assert [r["status"] for r in chaos.requests_with(m)] == [429, 200]
    usage = chaos.usage(op_id)
    assert [(u.input_tokens, u.output_tokens, u.estimated) for u in usage] == [(123, 45, False)]
    assert chaos.assert_settled(op_id).charged_credits == chaos.run_cost(123, 45)
    assert chaos.text(op_id) == "after the rate limit"
    assert [e.data["step"] for e in chaos.events(op_id) if e.type == "usage"] == ["thinking", "agent"]


def test_stream_cut_or_ending_without_usage_is_estimated(workers):
    chaos = workers
    uid = chaos.new_user()
    cut, bare = marker("CUT"), marker("BARE")
    chaos.script(Script(text=words(40), cut_after=12, match=cut))
    chaos.script(Script(text=words(20), usage=False, match=bare))
    cut_id, bare_id = chaos.start(uid, f"q {cut}"), chaos.start(uid, f"q {bare}")
    cut_op, bare_op = chaos.wait_final(cut_id), chaos.wait_final(bare_id)

    assert cut_op.status == "FAILED"
    assert cut_op.outcome_reason.startswith("provider_error")
    assert "mid-stream" in cut_op.outcome_reason
    [u] = chaos.usage(cut_id)
    assert u.estimated
    assert u.input_tokens > 0
    assert u.output_tokens >= 12
    assert chaos.n_text(cut_id) == 12

    assert bare_op.status == "SUCCEEDED"
    [b] = chaos.usage(bare_id)
    assert b.estimated
    assert b.output_tokens >= 20
    assert b.input_tokens > 0
    for op_id in (cut_id, bare_id):
        op = chaos.assert_settled(op_id)
        assert op.charged_credits > 0
        [ev] = [e for e in chaos.events(op_id) if e.type == "usage" and e.data["step"] == "agent"]
        assert ev.data["estimated"] is True


# ---- Redis outages -----------------------------------------------------------------------------
def test_redis_restart_mid_run_is_survived(workers):
    """redis-server restarted (clean shutdown, same port and data) while a run streams:
    event appends and lease renewals are retried, the run succeeds with every event."""
    chaos = workers
    uid = chaos.new_user()
    m = marker("RR")
    text = words(150, "r")
    chaos.script(Script(text=text, tokens_per_s=30, match=m, prompt_tokens=60, completion_tokens=150))
    op_id = chaos.start(uid, f"q {m}")
    wait_for(lambda: chaos.n_text(op_id) >= 10, 30, 0.02, what="streaming")
    down = chaos.redis_srv.restart(down_s=1.5)
    print(f"\nredis-server was down {down:.2f} s")
    op = chaos.wait_final(op_id, timeout=40)
    assert op.status == "SUCCEEDED", op.outcome_reason
    assert op.attempt == 1
    assert chaos.text(op_id) == text  # nothing lost, nothing doubled
    [u] = chaos.usage(op_id)
    assert (u.input_tokens, u.output_tokens, u.estimated) == (60, 150, False)
    assert chaos.assert_settled(op_id).charged_credits == chaos.run_cost(60, 150)
    assert "append text failed, retrying" in chaos.log_text()


def test_redis_down_longer_than_the_lease_stops_and_settles(workers):
    """Redis away for longer than the lease: the worker stops the run when its lease is
    surely gone (it could be someone else's now) and it is settled once Redis is back."""
    chaos = workers
    uid = chaos.new_user()
    m = marker("RD")
    chaos.script(Script(text=words(400), tokens_per_s=30, match=m))
    op_id = chaos.start(uid, f"q {m}")
    wait_for(lambda: chaos.n_text(op_id) >= 5, 30, 0.02, what="streaming")
    chaos.redis_srv.stop()
    try:  # Redis back whatever happens here: the module's later tests share it
        t_down = time.monotonic()
        time.sleep(control.LEASE_MS / 1000 + 2)
        [rec] = chaos.requests_with(m)
    finally:
        chaos.redis_srv.start()
    assert rec["disconnected"]
    assert not rec["completed"]  # stopped while Redis was away
    assert rec["disconnected_at"] - t_down <= control.LEASE_MS / 1000 + 1
    op = chaos.wait_final(op_id, timeout=40)
    assert op.status == "FAILED"
    assert op.outcome_reason in ("lease_lost", "worker_lost")
    [u] = chaos.usage(op_id)
    assert u.estimated
    assert u.output_tokens >= 5
    assert chaos.assert_settled(op_id).charged_credits == u.cost_credits + chaos.cost(THINK_IN, THINK_OUT) > 0


# ---- crash ---------------------------------------------------------------------------------------
def test_kill_9_mid_stream_bills_the_running_estimate(workers):
    """Usage is persisted while streaming, so a run whose worker is killed is charged for
    the tokens it consumed (before: 0)."""
    chaos = workers
    uid = chaos.new_user()
    m = marker("K9")
    chaos.script(Script(text=words(400, "k"), tokens_per_s=30, match=m))
    op_id = chaos.start(uid, f"q {m}")
    wait_for(lambda: chaos.n_text(op_id) >= 45, 30, 0.02, what="1.5 s of streaming")
    chaos.kill_workers()
    seen = chaos.n_text(op_id)
    chaos.start_workers(2)
    op = chaos.wait_final(op_id, timeout=40)
    assert (op.status, op.outcome_reason) == ("FAILED", "worker_lost")
    [u] = chaos.usage(op_id)
    assert u.estimated
    assert u.input_tokens > 0
    assert u.output_tokens >= 10  # at least the checkpoint after 1 s (~30 words)
    assert u.output_tokens <= count_tokens(chaos.text(op_id))  # never more than it received
    assert seen <= chaos.n_text(op_id)
    assert chaos.assert_settled(op_id).charged_credits == u.cost_credits + chaos.cost(THINK_IN, THINK_OUT) > 0


# ---- the randomized batch ------------------------------------------------------------------------
SCENARIOS = {  # scenario → how many in the batch
    "success": 10,
    "cancel_queued": 5,
    "cancel_streaming": 6,
    "cancel_twice": 4,
    "cancel_after_finish": 4,
    "rate_limited": 6,
    "provider_failure": 4,
    "cut": 5,
    "no_usage": 4,
    "kill": 2,
}


@dataclass
class Case:
    scenario: str
    mark: str
    uid: str
    op_id: str = ""
    info: dict = field(default_factory=dict)


def _drive(chaos: Chaos, case: Case, rng: random.Random) -> Case:
    """Start one run and inflict its scenario (runs in a thread; several at once)."""
    m, s = case.mark, case.scenario
    prompt = f"question {rng.randint(1, 10**6)} {m}"
    if s == "cancel_queued":
        case.op_id = chaos.start(case.uid, prompt, enqueue=False)
        case.info["already"] = chaos.cancel(case.op_id)
        chaos.send("run_operation", "agent", case.op_id)  # a late delivery does nothing
        return case
    _script(chaos, case, rng)
    case.op_id = chaos.start(case.uid, prompt)
    _inflict(chaos, case, rng)
    return case


def _script(chaos: Chaos, case: Case, rng: random.Random) -> None:
    """The fake model's replies for the scenario."""
    m, s = case.mark, case.scenario
    if s == "success":
        n = rng.randint(3, 30)
        case.info.update(text=words(n, "s"), inp=rng.randint(10, 500), out=n)
        chaos.script(
            Script(
                text=case.info["text"],
                match=m,
                prompt_tokens=case.info["inp"],
                completion_tokens=n,
                tokens_per_s=rng.choice([None, 200]),
            )
        )
    elif s in ("cancel_streaming", "cancel_twice"):
        chaos.script(Script(text=words(300), tokens_per_s=rng.choice([30, 60]), match=m))
    elif s == "cancel_after_finish":
        chaos.script(Script(text="quick answer", match=m, prompt_tokens=20, completion_tokens=2))
    elif s == "rate_limited":
        case.info.update(inp=rng.randint(10, 500), out=rng.randint(1, 20))
        chaos.script(
            Script.error(429, retry_after=str(rng.choice([0, 0.2, 0.5])), match=m),
            Script(
                text=words(case.info["out"]),
                match=m,
                prompt_tokens=case.info["inp"],
                completion_tokens=case.info["out"],
            ),
        )
    elif s == "provider_failure":
        chaos.script(Script.error(rng.choice([500, 502, 503]), match=m, times=4))
    elif s == "cut":
        case.info["cut"] = rng.randint(1, 15)
        chaos.script(Script(text=words(40), cut_after=case.info["cut"], match=m))
    elif s == "no_usage":
        chaos.script(Script(text=words(rng.randint(5, 25)), usage=False, match=m))
    elif s == "kill":
        chaos.script(Script(text=words(400, "k"), tokens_per_s=30, match=m))


def _inflict(chaos: Chaos, case: Case, rng: random.Random) -> None:
    """What happens to the started run: cancelled (once, twice, after it ended), its workers killed."""
    s = case.scenario
    if s in ("cancel_streaming", "cancel_twice"):
        at = rng.randint(1, 8)
        wait_for(lambda: chaos.n_text(case.op_id) >= at, 60, 0.02, what=f"{s} streaming")
        case.info["already"] = chaos.cancel(case.op_id)
        if s == "cancel_twice":
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0, 0.3))
            case.info["again"] = chaos.cancel(case.op_id)
    elif s == "cancel_after_finish":
        chaos.wait_final(case.op_id, 60)
        case.info["already"] = chaos.cancel(case.op_id)
    elif s == "kill":
        wait_for(lambda: chaos.n_text(case.op_id) >= 45, 60, 0.02, what="kill streaming")
        chaos.kill_workers()
        chaos.start_workers(2)


def _check(chaos: Chaos, case: Case) -> None:
    """Deterministic expectations per scenario (on top of the ledger invariants)."""
    op = chaos.assert_settled(case.op_id)
    usage = chaos.usage(case.op_id)
    reqs = chaos.requests_with(case.mark)
    what = f"{case.scenario} {case.op_id}: {op.status} {op.outcome_reason}"
    if case.scenario.startswith("cancel_"):
        _check_cancelled(case, op, usage, reqs, what)
    else:
        _check_ran(chaos, case, op, usage, reqs, what)


def _check_cancelled(case: Case, op: Run, usage: list, reqs: list, what: str) -> None:
    s = case.scenario
    if s == "cancel_queued":
        assert (op.status, op.outcome_reason, op.attempt, op.charged_credits) == ("CANCELLED", "user_cancel", 0, 0), (
            what
        )
        assert case.info["already"] is False
        assert not usage
        assert not reqs
    elif s in ("cancel_streaming", "cancel_twice"):
        assert (op.status, op.outcome_reason) == ("CANCELLED", "user_cancel"), what
        assert case.info["already"] is False
        assert len(usage) == 1
        assert usage[0].estimated
        assert usage[0].output_tokens >= 1
        assert reqs[0]["disconnected"]
        assert not reqs[0]["completed"]
        if s == "cancel_twice":  # the second one changes nothing, whenever it lands
            assert op.cancel_reason == "user_cancel"
    elif s == "cancel_after_finish":
        assert op.status == "SUCCEEDED", what
        assert op.cancel_requested_at is None, what
        assert case.info["already"] is True
        assert [(u.input_tokens, u.output_tokens, u.estimated) for u in usage] == [(20, 2, False)]


def _check_ran(chaos: Chaos, case: Case, op: Run, usage: list, reqs: list, what: str) -> None:
    s = case.scenario
    if s == "success":
        assert op.status == "SUCCEEDED", what
        assert chaos.text(case.op_id) == case.info["text"]
        assert [(u.input_tokens, u.output_tokens, u.estimated) for u in usage] == [
            (case.info["inp"], case.info["out"], False)
        ]
    elif s == "rate_limited":
        assert op.status == "SUCCEEDED", what
        assert [r["status"] for r in reqs] == [429, 200]
        assert [(u.input_tokens, u.output_tokens, u.estimated) for u in usage] == [
            (case.info["inp"], case.info["out"], False)
        ]
    elif s == "provider_failure":
        assert op.status == "FAILED", what
        assert op.outcome_reason.startswith("provider_error"), what
        assert len(reqs) == 4  # RetryPolicy.max_attempts
        assert len(usage) == 1
        assert usage[0].estimated
        assert usage[0].output_tokens == 0
    elif s == "cut":
        assert op.status == "FAILED", what
        assert "mid-stream" in op.outcome_reason, what
        assert len(usage) == 1
        assert usage[0].estimated
        assert usage[0].output_tokens >= case.info["cut"]
    elif s == "no_usage":
        assert op.status == "SUCCEEDED", what
        assert len(usage) == 1
        assert usage[0].estimated
        assert usage[0].output_tokens > 0
    elif s == "kill":
        assert (op.status, op.outcome_reason) == ("FAILED", "worker_lost"), what
        assert len(usage) == 1
        assert usage[0].estimated
        assert usage[0].output_tokens >= 10
        assert op.charged_credits > 0


def _drive_all(chaos: Chaos, cases: list[Case], rng: random.Random) -> None:
    """Drive the cases in waves of eight at once; a kill alone, once every run before it settled."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        wave: list = []
        for case in cases:
            if case.scenario == "kill":  # alone: every worker is killed under it
                for f in wave:
                    f.result()
                wave = []
                for earlier in cases[: cases.index(case)]:
                    chaos.wait_final(earlier.op_id, timeout=60)
                _drive(chaos, case, random.Random(rng.random()))
                continue
            wave.append(pool.submit(_drive, chaos, case, random.Random(rng.random())))
            if len(wave) >= 8:
                for f in wave:
                    f.result()
                wave = []
        for f in wave:
            f.result()


# The randomized mix runs on PostgreSQL, the backend of several workers on several machines; each
# fault in it runs alone on both backends above.
@pytest.mark.parametrize("chaos", ["postgresql"], indirect=True)
def test_randomized_batch_reconciles(workers):
    chaos = workers
    seed = int(os.environ.get("BAYES_CHAOS_SEED") or random.randrange(10**9))
    print(f"\nchaos batch seed: {seed} (replay with BAYES_CHAOS_SEED={seed})")
    rng = random.Random(seed)
    users = [chaos.new_user(credits=50) for _ in range(4)]
    plan = [s for s, n in SCENARIOS.items() for _ in range(n)]
    rng.shuffle(plan)
    assert len(plan) >= 50
    cases = [Case(s, marker("B"), rng.choice(users)) for s in plan]
    t0 = time.monotonic()
    _drive_all(chaos, cases, rng)
    for case in cases:
        chaos.wait_final(case.op_id, timeout=60)
    took = time.monotonic() - t0
    print(f"{len(cases)} runs settled in {took:.1f} s")

    for case in cases:
        _check(chaos, case)
    with chaos.sessions() as db:
        report = reconcile(db, stale_after_s=REAP_STALE_S)
        assert report.ok, report
        assert report.runs_checked >= len(cases)
        ops = db.exec(select(Run).where(Run.id.in_([c.op_id for c in cases]))).all()  # type: ignore[attr-defined]
        assert {o.status for o in ops} == {"SUCCEEDED", "CANCELLED", "FAILED"}
        for uid in users:
            charged = sum(o.charged_credits for o in ops if o.owner_id == uid)
            assert ledger.held(db, uid) == 0
            assert ledger.balance(db, uid) == 50 * MICRO - charged
        active = db.exec(
            select(func.count()).select_from(Run).where(Run.status.in_(lc.RunStatus.ACTIVE + ("STOPPED",)))
        ).one()  # type: ignore[attr-defined]
        assert active == 0
    assert took < 150
