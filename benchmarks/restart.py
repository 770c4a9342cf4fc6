"""kill -9 of one process → the service healthy again: `make run`'s supervisor vs before.

    .venv/bin/python benchmarks/restart.py [--kills 3]

Ours: the whole app started exactly as `make run` starts it (`python -m bayes_app.cli run`,
temp data dir, free ports, offline model), then, per target and repeat, kill -9 of
- the Dramatiq worker process (the child that does the work: what the OOM killer picks),
- the index process,
- the local redis-server,
and measure kill → the component works again (worker: an `echo` message round trip;
index: a count through the app's index client; Redis: PING) and kill → /api/v1/health says
"ok" again (which includes the few seconds health stays "degraded" after a crash).

Before (the honcho Procfile): the same `dramatiq jobs` command run unsupervised next to the
same Redis; kill -9 of its worker process makes Dramatiq shut itself down, and honcho then
stopped web, index and Redis: the service never came back without a manual restart. Measured
here: kill → Dramatiq exited, and whether any worker answered within the wait.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.procs import (
    AppStack,
    RedisServer,
    free_port,
    processes_of,
    stack_env,
    start_worker,
    wait_for,
)

WAIT_S = 60.0


def _echo(redis_url: str, timeout: float) -> bool:
    """An `echo` message through the broker, answered by a worker within `timeout`."""
    import dramatiq
    import redis
    from dramatiq.brokers.redis import RedisBroker

    broker = RedisBroker(url=redis_url, namespace="bayes-tasks")
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    key = f"bayes:bench:{uuid.uuid4().hex}"
    try:
        broker.enqueue(
            dramatiq.Message(queue_name="default", actor_name="echo", args=(key, "x"), kwargs={}, options={})
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if r.get(key):
                return True
            time.sleep(0.05)
        return False
    finally:
        broker.close()
        r.close()


def ours(kills: int) -> dict[str, list[tuple[float, float]]]:
    import httpx
    import redis

    tmp = Path(tempfile.mkdtemp(prefix="bayes-restart-"))
    port, redis_port = free_port(), free_port()
    env = stack_env(tmp / "data", port, BAYES_REDIS_PORT=str(redis_port), BAYES_DEMO="0")
    print("starting the app as `make run` does ...", file=sys.stderr)
    app = AppStack(data_dir=tmp / "data", env=env, port=port).start()
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    index_url = f"http://127.0.0.1:{env['BAYES_INDEX_PORT']}/collections"

    def healthy() -> bool:
        return app.health()["status"] == "ok"

    def works(target: str) -> bool:
        if target == "worker":
            return _echo(redis_url, 2.0)
        if target == "index":
            return httpx.get(index_url, timeout=2).status_code == 200
        return bool(r.ping())

    def pid_of(target: str) -> int:
        return app.worker_child() if target == "worker" else app.program_pid(target)

    out: dict[str, list[tuple[float, float]]] = {"worker": [], "index": [], "redis": []}
    try:
        assert _echo(redis_url, 30), "no worker answers"
        for _ in range(kills):
            for target in out:
                wait_for(healthy, 60, 0.5, what="healthy before the kill")
                pid = pid_of(target)
                t0 = time.monotonic()
                os.kill(pid, signal.SIGKILL)
                wait_for(lambda: works(target), WAIT_S, 0.1, what=f"{target} working again")
                t_work = time.monotonic() - t0
                wait_for(lambda: pid_of(target) != pid and healthy(), WAIT_S, 0.2, what="health ok")
                t_ok = time.monotonic() - t0
                out[target].append((t_work, t_ok))
                print(f"  {target}: working again {t_work:.1f}s, health ok {t_ok:.1f}s", file=sys.stderr)
    finally:
        app.stop()
        left = processes_of(tmp / "data")
        assert not left, [p.cmdline() for p in left]
    return out


def before() -> tuple[float, bool]:
    """The worker as the old Procfile ran it, unsupervised: kill -9 its worker process."""
    import psutil

    tmp = Path(tempfile.mkdtemp(prefix="bayes-restart-before-"))
    srv = RedisServer(tmp / "redis").start()
    env = stack_env(tmp, 1, REDIS_URL=srv.url, DATABASE_URL=f"sqlite:///{tmp / 'b.db'}")
    from bayes_app.db import migrate

    migrate(env["DATABASE_URL"])
    worker = start_worker(env, tmp / "worker.log")
    try:
        assert _echo(srv.url, 60), "no worker answers"
        child = psutil.Process(worker.pid).children()[0]
        t0 = time.monotonic()
        child.kill()
        worker.wait(30)
        exited = time.monotonic() - t0
        back = _echo(srv.url, 20)  # nobody restarts it
        return exited, back
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        srv.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=3, help="kills per target")
    args = parser.parse_args()
    exited, back = before()
    results = ours(args.kills)
    print(f"\nkill -9 → service healthy again ({args.kills} kills per target; median / max, seconds)\n")
    print("| process killed | Bayes: working again | Bayes: /health ok | before (honcho) |")
    print("|---|---|---|---|")
    for target, runs in results.items():
        work = [w for w, _ in runs]
        ok = [o for _, o in runs]
        if target == "worker":
            baseline = (
                f"never: Dramatiq exited {exited:.1f} s after the kill (measured), "
                f"{'a' if back else 'no'} worker answered in the next 20 s"
            )
        else:
            baseline = "never: honcho stops every process when one exits"
        print(
            f"| {target} | {statistics.median(work):.1f} / {max(work):.1f} "
            f"| {statistics.median(ok):.1f} / {max(ok):.1f} | {baseline} |"
        )


if __name__ == "__main__":
    main()
