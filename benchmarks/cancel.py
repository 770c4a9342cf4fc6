"""Stop latency of a streaming run, next to the heartbeat-throttled design it replaces.

    .venv/bin/python benchmarks/cancel.py [--runs 50] [--baseline-runs 10]

Everything is real and started here (temp dir, free ports), then torn down:
a redis-server, a SQLite file, the scripted OpenAI-compatible server in its own process
streaming ~30 tokens/s (tests/support/fake_openai.py), and a real `dramatiq jobs` worker
process. Runs are started and stopped through the HTTP API in this process (Starlette
TestClient over `build_api()`: POST /api/v1/runs, POST /api/v1/runs/<id>/cancel).

Per run: wait until text is streaming (>= 5 `text` events, then a random 0-0.5 s more),
press Stop, and measure
  (a) Stop -> the model server sees the client disconnect (its `disconnected_at`, on the
      system-wide CLOCK_MONOTONIC, so comparable across processes): no more model work;
  (b) Stop -> the run is CANCELLED with its credits settled (`finalized_at` set in the DB;
      spend == sum of usage, nothing held — checked for every run).

Baseline: the same worker, the same run loop and finalizer, but the abort flag is only
checked every 5 s (the fallback poll thread at 5 s) and there is no pub/sub listener —
the heartbeat-throttled design. It is selected by BAYES_BENCH_CANCEL_BASELINE=1 in the
worker's environment: the worker imports this module (`dramatiq jobs benchmarks.cancel`),
which then installs a throttled AbortListener before the worker boots. The product worker
imports this module too, without the variable, so both run identical code otherwise.

Each baseline run first idles a random 0-5 s, so Stop lands at a uniformly random phase of
the 5 s check (otherwise back-to-back runs phase-lock to the check and all wait ~4 s).
Percentiles are nearest-rank on the measured runs (with 50 runs, p99 is the slowest run).
"""

from __future__ import annotations

import os
import threading

BASELINE_ENV = "BAYES_BENCH_CANCEL_BASELINE"
BASELINE_CHECK_S = 5.0


def _install_baseline() -> None:
    """Inside the worker process: abort checks only every 5 s, no pub/sub."""
    from bayes_app.redis_client import get_redis
    from bayes_app.runs import control

    class ThrottledListener(control.AbortListener):
        def start(self) -> None:  # the poll thread only; no pub/sub subscriber
            if self._started:
                return
            self._started = True
            threading.Thread(target=self._poll, name="bench-throttled-abort-poll", daemon=True).start()

    control._listener = ThrottledListener(get_redis, poll_s=BASELINE_CHECK_S)


if __name__ != "__main__" and os.environ.get(BASELINE_ENV) == "1":
    _install_baseline()


# ---- the benchmark (driver side) -------------------------------------------------------------
import argparse
import contextlib
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MODEL = "gpt-4o-mini"
LONG = " ".join(f"word{i}" for i in range(400))  # ~13 s at 30 tokens/s
TOKENS_PER_S = 30
VENV_BIN = Path(sys.executable).parent


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    s = sorted(xs)
    import math

    k = max(1, math.ceil(p / 100 * len(s)))
    return s[min(len(s), k) - 1]


class Stack:
    """redis-server + SQLite + fake model server (process) + worker processes + in-process API."""

    def __init__(self, name: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=f"bayes-bench-{name}-"))
        self.redis_srv = None
        self.fake = None
        self.client = None
        self.workers: list[subprocess.Popen] = []
        self._saved_env: dict[str, str | None] = {}

    # -- lifecycle
    def start(self) -> Stack:
        import redis as redis_lib
        from sqlmodel import Session

        from bayes_app.credits import pricing
        from bayes_app.db import get_engine, migrate
        from tests.support.fake_openai import FakeOpenAIProcess
        from tests.support.procs import RedisServer, stack_env

        self.redis_srv = RedisServer(self.tmp / "redis").start()
        self.redis_url = self.redis_srv.url_db(0)
        self.db_url = f"sqlite:///{self.tmp / 'bench.db'}"
        migrate(self.db_url)
        with Session(get_engine(self.db_url)) as db:
            pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
            db.commit()
        self.fake = FakeOpenAIProcess().start()
        self.r = redis_lib.Redis.from_url(self.redis_url, decode_responses=True)
        common = {
            "DATABASE_URL": self.db_url,
            "REDIS_URL": self.redis_url,
            "OPENAI_BASE_URL": self.fake.base_url,
            "OPENAI_API_KEY": "bench-key",
            "BAYES_MODEL_DEFAULT": MODEL,
            "BAYES_DATA_DIR": str(self.tmp),
        }
        self.proc_env = stack_env(self.tmp, 1, **common)
        for k, v in common.items():
            self._saved_env[k] = os.environ.get(k)
            os.environ[k] = v
        from bayes_app import settings

        settings.get_settings.cache_clear()
        from starlette.testclient import TestClient

        from bayes_app.api import build_api

        self.client = TestClient(build_api())
        self.client.__enter__()
        return self

    def stop(self) -> None:
        for w in self.workers:
            self.stop_worker(w)
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.__exit__(None, None, None)
        if self.fake is not None:
            self.fake.stop()
        if self.redis_srv is not None:
            with contextlib.suppress(Exception):
                self.redis_srv.stop()
        for k, v in self._saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- workers
    def start_worker(self, **extra_env: str) -> subprocess.Popen:
        env = {**self.proc_env, **extra_env}
        with open(self.tmp / f"worker-{len(self.workers)}.log", "w") as log:
            w = subprocess.Popen(
                [
                    str(VENV_BIN / "dramatiq"),
                    "jobs",
                    "benchmarks.cancel",
                    "--processes",
                    "1",
                    "--threads",
                    "2",
                    "--worker-shutdown-timeout",
                    "2000",
                ],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.workers.append(w)
        return w

    @staticmethod
    def kill_worker(w: subprocess.Popen) -> None:
        """kill -9 of the worker's whole process group (supervisor + worker processes)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(w.pid, signal.SIGKILL)
        w.wait(10)

    def stop_worker(self, w: subprocess.Popen) -> None:
        if w.poll() is not None:
            return
        w.terminate()
        try:
            w.wait(20)
        except subprocess.TimeoutExpired:
            self.kill_worker(w)

    def worker_log_tail(self, n: int = 30) -> str:
        out = []
        for p in sorted(self.tmp.glob("worker-*.log")):
            out.append(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-n:]))
        return "\n".join(out)

    # -- API / DB
    def sessions(self):
        from sqlmodel import Session

        from bayes_app.db import get_engine

        return Session(get_engine(self.db_url), expire_on_commit=False)

    def new_user(self, credits: int = 1_000) -> dict:
        from bayes_app.accounts import service as accounts
        from bayes_app.credits import ledger
        from bayes_app.models import MICRO

        with self.sessions() as db:
            user = accounts.register(db, f"bench{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
            db.commit()
            ledger.grant(db, user, credits * MICRO, f"grant:{user.id}", "bench")
            _, token = accounts.create_api_token(db, user, timedelta(days=1))
            db.commit()
        return {"Authorization": f"Bearer {token}"}

    def start_run(self, headers: dict, prompt: str) -> str:
        res = self.client.post("/api/v1/runs", json={"kind": "ask", "prompt": prompt}, headers=headers)
        assert res.status_code == 202, res.text
        return res.json()["id"]

    def cancel(self, headers: dict, op_id: str) -> None:
        res = self.client.post(f"/api/v1/runs/{op_id}/cancel", headers=headers)
        assert res.status_code == 202, res.text

    def op(self, op_id: str):
        from bayes_app.models import Run

        with self.sessions() as db:
            return db.get(Run, op_id)

    def text_events(self, op_id: str) -> int:
        from bayes_app.runs import events

        return sum(1 for e in events.read_range(self.r, op_id, None, count=100_000) if e.type == "text")

    def has_done(self, op_id: str) -> bool:
        from bayes_app.runs import events

        return any(e.type == "done" for e in events.read_range(self.r, op_id, None, count=100_000))

    def wait_finalized(self, op_id: str, timeout: float, interval: float = 0.002) -> float:
        """Poll the DB until finalized_at is set; returns time.monotonic() at that moment."""
        from tests.support.procs import wait_for

        wait_for(
            lambda: self.op(op_id).finalized_at is not None, timeout, interval, what=f"run {op_id} to be finalized"
        )
        return time.monotonic()

    def check_settled(self, op_id: str) -> tuple[int, int]:
        """Spend == Σ usage, one spend row, nothing held. Returns (charged, usage rows)."""
        from sqlmodel import func, select

        from bayes_app.models import EntryType, LedgerEntry, Run, UsageEvent

        with self.sessions() as db:
            op = db.get(Run, op_id)
            usage = db.exec(
                select(func.coalesce(func.sum(UsageEvent.cost_credits), 0)).where(UsageEvent.operation_id == op_id)
            ).one()
            n_usage = len(db.exec(select(UsageEvent.id).where(UsageEvent.operation_id == op_id)).all())
            rows = db.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op_id)).all()
        spends = [e.amount for e in rows if e.entry_type == EntryType.SPEND]
        assert spends == [-usage], (op_id, spends, usage)
        assert op.charged_credits == usage, (op_id, op.charged_credits, usage)
        assert sum(e.amount for e in rows if e.entry_type in EntryType.HOLD) == 0, op_id
        return usage, n_usage

    def warm_up(self, headers: dict) -> None:
        """One short run end to end: the worker is up and its imports/tokenizer are loaded."""
        from tests.support.fake_openai import Script

        marker = f"W{uuid.uuid4().hex[:8]}"
        self.fake.script(Script.thinking(marker), Script(text="warm up done", match=marker))
        op_id = self.start_run(headers, f"warm {marker}")
        self.wait_finalized(op_id, 120, 0.05)
        assert self.op(op_id).status == "SUCCEEDED", self.op(op_id).outcome_reason


def cancel_once(st: Stack, headers: dict, rng: random.Random, idle_s: float = 0.0) -> dict:
    from tests.support.fake_openai import Script
    from tests.support.procs import wait_for

    time.sleep(rng.uniform(0, idle_s))  # baseline: a random phase against the 5 s check

    marker = f"S{uuid.uuid4().hex[:8]}"
    st.fake.script(Script.thinking(marker), Script(text=LONG, tokens_per_s=TOKENS_PER_S, match=marker))
    op_id = st.start_run(headers, f"Tell me everything {marker}")
    wait_for(lambda: st.text_events(op_id) >= 5, 30, 0.01, what="text streaming")
    time.sleep(rng.uniform(0, 0.5))
    text_at_stop = st.text_events(op_id)
    t0 = time.monotonic()
    st.cancel(headers, op_id)  # POST /api/v1/runs/<id>/cancel
    t_fin = st.wait_finalized(op_id, 30)
    recs = st.fake.wait_for(lambda rs: any(marker in json.dumps(r["body"]) and r["disconnected"] for r in rs), 10)
    rec = next(r for r in recs if marker in json.dumps(r["body"]) and r["disconnected"])
    wait_for(lambda: st.has_done(op_id), 5, 0.01, what="done event")
    op = st.op(op_id)
    assert (op.status, op.outcome_reason) == ("CANCELLED", "user_cancel"), (op.status, op.outcome_reason)
    charged, _ = st.check_settled(op_id)
    st.fake.reset()  # keep the server's request log small
    return {
        "stop_s": rec["disconnected_at"] - t0,
        "settle_s": t_fin - t0,
        "text_after_stop": st.text_events(op_id) - text_at_stop,
        "charged": charged,
        "chunks_sent": rec["chunks_sent"],
    }


def run_phase(st: Stack, label: str, n: int, baseline: bool, rng: random.Random) -> list[dict]:
    w = st.start_worker(**({BASELINE_ENV: "1"} if baseline else {}))
    try:
        headers = st.new_user()
        st.warm_up(headers)
        out = []
        for i in range(n):
            res = cancel_once(st, headers, rng, BASELINE_CHECK_S if baseline else 0.0)
            out.append(res)
            print(
                f"  {label} {i + 1:3d}/{n}: stop->disconnect {res['stop_s'] * 1000:8.1f} ms, "
                f"stop->settled {res['settle_s'] * 1000:8.1f} ms, "
                f"text events after stop {res['text_after_stop']}",
                flush=True,
            )
        return out
    finally:
        st.stop_worker(w)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument(
        "--baseline-runs", type=int, default=10, help="baseline runs (each waits up to 5 s for its abort check)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    st = Stack("cancel")
    try:
        st.start()
        print(
            f"stack: redis {st.redis_url}, {st.db_url}, model server {st.fake.base_url} "
            f"(~{TOKENS_PER_S} tokens/s, separate process), 1 dramatiq worker process"
        )
        print(f"product: {args.runs} runs (pub/sub abort + async stream close)")
        prod = run_phase(st, "product ", args.runs, False, rng)
        print(f"baseline: {args.baseline_runs} runs (abort checked every {BASELINE_CHECK_S:.0f} s, no pub/sub)")
        base = run_phase(st, "baseline", args.baseline_runs, True, rng)
    except BaseException:
        print(st.worker_log_tail(), file=sys.stderr)
        raise
    finally:
        st.stop()

    def row(name: str, key: str, target_s: float) -> str:
        p = [x[key] * 1000 for x in prod]
        b = [x[key] * 1000 for x in base]
        p50, p99, b50, b99 = pct(p, 50), pct(p, 99), pct(b, 50), pct(b, 99)
        ok = "PASS" if p99 <= target_s * 1000 else "FAIL"
        return (
            f"{name:<34} {p50:>9.1f} {p99:>9.1f} {max(p):>9.1f} | {b50:>9.1f} {b99:>9.1f} "
            f"{max(b):>9.1f} | {b50 / p50:>7.0f}x {b99 / p99:>7.0f}x | p99<={target_s * 1000:.0f} ms {ok}"
        )

    print()
    print(
        f"runs: product {len(prod)}, baseline {len(base)} (baseline kept smaller: every run "
        f"waits up to {BASELINE_CHECK_S:.0f} s for its throttled abort check)"
    )
    print(f"{'':<34} {'product (ms)':^29} | {'baseline 5 s check (ms)':^29} | {'ratio base/prod':^17} |")
    print(
        f"{'metric':<34} {'p50':>9} {'p99':>9} {'max':>9} | {'p50':>9} {'p99':>9} {'max':>9} | "
        f"{'p50':>8} {'p99':>8} | target"
    )
    print(row("Stop -> server sees disconnect", "stop_s", 0.1))
    print(row("Stop -> CANCELLED + settled", "settle_s", 1.0))
    pt = [x["text_after_stop"] for x in prod]
    bt = [x["text_after_stop"] for x in base]
    print(
        f"{'text events after Stop (mean/max)':<34} {sum(pt) / len(pt):>9.1f} {max(pt):>9} "
        f"{'':>9} | {sum(bt) / len(bt):>9.1f} {max(bt):>9}"
    )
    print("every run: CANCELLED user_cancel, one spend row == Σ usage, no reserve held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
