"""login_burst: what a burst of sign-ins does to everyone else, and how far password guessing gets.

    .venv/bin/python benchmarks/login_burst.py [--burst 30]

Starts the whole app twice (web + worker + index + Redis, offline), the way `make run` does:
  ours      BAYES_PASSWORD_HASH_CONCURRENCY=2 (default) and login throttling on
  baseline  hashing unbounded (64 at once, as before issue 11) and throttling off (1000 failures)
Per app: `/api/v1/me` latency (bearer token) measured on its own and while --burst parallel
correct sign-ins hit `/api/v1/session/login`; the web process's peak RSS during the burst;
then how many wrong passwords for one account are answered before a 429.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import psutil

from tests.support.procs import AppStack, free_port, stack_env


def _web_rss(port: int) -> int:
    """RSS of the process listening on `port` (the web server) plus its children."""
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
            p = psutil.Process(conn.pid)
            return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)])
    return 0


def measure(label: str, burst: int, **env: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bayes-loginbench-"))
    port = free_port()
    admin_pw = "Xk4-" + uuid.uuid4().hex[:12]
    stack = AppStack(
        data_dir=tmp,
        port=port,
        env=stack_env(
            tmp,
            port,
            BAYES_ADMIN_EMAIL="root@example.com",
            BAYES_ADMIN_PASSWORD=admin_pw,
            BAYES_DEMO="0",
            BAYES_REDIS_PORT=str(free_port()),
            **env,
        ),
    ).start()
    try:
        api = stack.url + "/api/v1"
        c = httpx.Client(timeout=120)
        tok = c.post(f"{api}/auth/token", json={"email": "root@example.com", "password": admin_pw}).json()["token"]
        h = {"Authorization": f"Bearer {tok}"}

        def me() -> float:
            t0 = time.perf_counter()
            c.get(f"{api}/me", headers=h).raise_for_status()
            return (time.perf_counter() - t0) * 1000

        quiet = [me() for _ in range(20)]
        rss0, peak, done = _web_rss(port), 0, threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, _web_rss(port))
                time.sleep(0.1)

        def login(_i: int) -> int:
            with httpx.Client(timeout=120) as x:
                return x.post(
                    f"{api}/session/login", json={"email": "root@example.com", "password": admin_pw}
                ).status_code

        threading.Thread(target=sample, daemon=True).start()
        loaded: list[float] = []
        with ThreadPoolExecutor(burst) as pool:
            futures = [pool.submit(login, i) for i in range(burst)]
            while not all(f.done() for f in futures):
                loaded.append(me())
                time.sleep(0.05)
            statuses = [f.result() for f in futures]
        done.set()

        victim = f"v{uuid.uuid4().hex[:8]}@example.com"
        c.post(f"{api}/session/register", json={"email": victim, "password": "tangerine-sky-42x"})
        answered = 0
        for _ in range(100):
            r = c.post(f"{api}/auth/token", json={"email": victim, "password": "wrong-guess-000"})
            if r.status_code == 429:
                break
            answered += 1
        return {
            "label": label,
            "quiet_p50": statistics.median(quiet),
            "loaded_p50": statistics.median(loaded),
            "loaded_max": max(loaded),
            "rss0_mb": rss0 / 2**20,
            "peak_mb": peak / 2**20,
            "ok_logins": sum(s == 200 for s in statuses),
            "guesses": answered,
        }
    finally:
        stack.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--burst", type=int, default=30)
    args = ap.parse_args()
    ours = measure("ours", args.burst)
    base = measure("baseline", args.burst, BAYES_PASSWORD_HASH_CONCURRENCY="64", BAYES_LOGIN_MAX_FAILURES="1000")
    rows = [
        ("/me p50, quiet (ms)", "quiet_p50"),
        (f"/me p50 during {args.burst} logins (ms)", "loaded_p50"),
        (f"/me max during {args.burst} logins (ms)", "loaded_max"),
        ("web RSS before (MB)", "rss0_mb"),
        ("web RSS peak in burst (MB)", "peak_mb"),
        ("sign-ins that succeeded", "ok_logins"),
        ("wrong passwords answered before 429 (of 100)", "guesses"),
    ]
    print(f"{'':46} {'ours':>10} {'baseline':>10} {'ours/base':>10}")
    for name, key in rows:
        a, b = ours[key], base[key]
        print(f"{name:46} {a:10.1f} {b:10.1f} {a / b if b else float('nan'):10.2f}")


if __name__ == "__main__":
    main()
