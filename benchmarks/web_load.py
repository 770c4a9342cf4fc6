"""web_load: what page events of a few users do to everyone else's requests.

    .venv/bin/python benchmarks/web_load.py [--tabs 4] [--seconds 20] [--baseline main]
    .venv/bin/python benchmarks/web_load.py --url http://127.0.0.1:3000   # against a running `make run`

Starts the whole app the way `make run` does (tests.support.procs.AppStack), makes --tabs users
with two small papers each, and runs four phases of --seconds each while one API client calls
a cheap authenticated route (`GET /api/v1/me`) without pause:
  idle        nothing else
  api-search  --tabs API clients search their library (`GET /api/v1/search`) without pause
  tab-search  --tabs Chromium tabs run the same searches through the Search page
  tab-mixed   --tabs tabs click through a map, the Search page and the chat page
Per phase: p50/p95 of the cheap call, p50/p95 of the searches or page loads (click → shown),
and the errors. With --baseline REF the same script runs on that commit (benchmarks/
baseline_run.py: its own worktree, so its own `make run`) and both are printed side by side.
Target (issue 38): p95 of /me in tab-search ≤ 1.5 × its p95 in api-search, and ≤ 250 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx

from tests.support.procs import AppStack, free_port, stack_env
from tests.support.tiny_pdf import text_pdf

WORDS = ("alpha", "beta")  # each user's two papers; a search for one shows that paper first
PHASES = ("idle", "api-search", "tab-search", "tab-mixed")


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


class Probe(threading.Thread):
    """Calls /me without pause and keeps each call's latency (ms) under the current phase."""

    def __init__(self, api: str, token: str) -> None:
        super().__init__(daemon=True)
        self.client = httpx.Client(base_url=api, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        self.phase, self.ms, self.errors = "", {p: [] for p in PHASES}, dict.fromkeys(PHASES, 0)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            phase, t0 = self.phase, time.perf_counter()
            try:
                ok = self.client.get("/me").status_code == 200
            except httpx.HTTPError:
                ok = False
            if phase:
                self.ms[phase].append((time.perf_counter() - t0) * 1000)
                self.errors[phase] += not ok
            time.sleep(0.02)


def _setup_user(api: str, n: int) -> dict:
    """A user with two indexed papers, a map and an API token."""
    email, password = f"load{n}-{uuid.uuid4().hex[:6]}@example.com", "pw-" + uuid.uuid4().hex[:14]
    c = httpx.Client(base_url=api, timeout=120)
    c.post("/session/register", json={"email": email, "password": password}).raise_for_status()
    token = c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    c.headers["Authorization"] = f"Bearer {token}"
    for w in WORDS:
        pdf = text_pdf(f"{w} paper {n}", [f"The {w} method measures {w} signals in {w} cells.", "Nothing else."])
        c.post("/documents", files={"file": (f"{w}.pdf", pdf, "application/pdf")}).raise_for_status()
    map_id = c.post("/mindmaps", json={"title": f"Map {n}", "question": "What do alpha cells do?"}).json()["id"]
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        docs = c.get("/documents").json()["documents"]
        if len(docs) == 2 and all(d["status"] == "indexed" for d in docs):
            break
        time.sleep(1)
    else:
        raise TimeoutError(f"papers of user {n} not indexed: {docs}")
    return {"email": email, "password": password, "token": token, "map_id": map_id}


def _api_searches(api: str, users: list[dict], stop: threading.Event, ms: list[float], errors: list[int]) -> None:
    def loop(u: dict) -> None:
        c = httpx.Client(base_url=api, headers={"Authorization": f"Bearer {u['token']}"}, timeout=60)
        i = 0
        while not stop.is_set():
            w, t0 = WORDS[i % 2], time.perf_counter()
            i += 1
            try:
                hits = c.get("/search", params={"q": f"{w} signals"}).json()
                ok = bool(hits) and w in hits[0]["title"]
            except (httpx.HTTPError, KeyError, ValueError):
                ok = False
            ms.append((time.perf_counter() - t0) * 1000)
            errors[0] += not ok

    threads = [threading.Thread(target=loop, args=(u,), daemon=True) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


async def _tabs(url: str, users: list[dict], seconds: float, probe: Probe) -> dict:
    from playwright.async_api import async_playwright

    from tests.support.browser import CHROMIUM_ARGS

    out: dict = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        pages = [await _signed_in_tab(browser, url, u) for u in users]
        for phase in ("tab-search", "tab-mixed"):
            ms: list[float] = []
            errs = [0]
            until = time.monotonic() + seconds
            probe.phase = phase
            if phase == "tab-search":
                await asyncio.gather(*(_searcher(pg, ms, errs, until) for pg in pages))
            else:
                await asyncio.gather(
                    *(_clicker(pg, url, u, ms, errs, until) for pg, u in zip(pages, users, strict=True))
                )
            probe.phase = ""
            out[phase] = {"work_ms": ms, "work_errors": errs[0]}
        await browser.close()
    return out


async def _signed_in_tab(browser: Any, url: str, u: dict) -> Any:
    """A tab of its own signed in as `u`, on the Search page."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 860})
    page = await ctx.new_page()
    page.set_default_timeout(60_000)
    await page.goto(f"{url}/login")
    await page.fill("#email", u["email"])
    await page.fill("#password", u["password"])
    await page.click("#submit")
    await page.wait_for_url("**/maps")
    await page.goto(f"{url}/search")  # opened before the clock runs: the phase times searches only
    await page.locator("#search-q").wait_for()
    return page


async def _search(page: Any, i: int) -> None:
    w = WORDS[i % 2]
    await page.fill("#search-q", f"{w} signals")
    await page.click("#search-go")
    await page.locator(".search-result").first.filter(has_text=f"{w} paper").wait_for()


async def _searcher(page: Any, ms: list[float], errs: list[int], until: float) -> None:
    i = 0
    while time.monotonic() < until:
        t0 = time.perf_counter()
        try:
            await _search(page, i)
            ms.append((time.perf_counter() - t0) * 1000)
        except Exception:  # noqa: BLE001 - counted
            errs[0] += 1
        i += 1


async def _clicker(page: Any, url: str, u: dict, ms: list[float], errs: list[int], until: float) -> None:
    steps: list[tuple[str, Callable]] = [
        (f"/maps/{u['map_id']}", lambda: page.locator("#map-side").wait_for()),
        ("/search?q=alpha+signals", lambda: page.locator(".search-result").first.wait_for()),
        ("/chat", lambda: page.locator("#chat-new").wait_for()),
    ]
    i = 0
    while time.monotonic() < until:
        path, shown = steps[i % len(steps)]
        i += 1
        t0 = time.perf_counter()
        try:
            await page.goto(url + path)
            await shown()
            ms.append((time.perf_counter() - t0) * 1000)
        except Exception:  # noqa: BLE001 - counted
            errs[0] += 1


def run_load(url: str, users: list[dict], seconds: float) -> dict:
    api = url + "/api/v1"
    for u in users:  # warm up: each web process loads the query embedder on its first search
        with httpx.Client(base_url=api, headers={"Authorization": f"Bearer {u['token']}"}, timeout=300) as c:
            for _ in range(3):
                c.get("/search", params={"q": "alpha signals"})
    probe = Probe(api, users[0]["token"])
    probe.start()
    result: dict = {}
    probe.phase = "idle"
    time.sleep(seconds)
    probe.phase = ""
    result["idle"] = {"work_ms": [], "work_errors": 0}

    stop, ms, errs = threading.Event(), [], [0]
    probe.phase = "api-search"
    threading.Timer(seconds, stop.set).start()
    _api_searches(api, users, stop, ms, errs)
    probe.phase = ""
    result["api-search"] = {"work_ms": ms, "work_errors": errs[0]}

    result.update(asyncio.run(_tabs(url, users, seconds, probe)))
    probe.stop.set()
    out = {}
    for phase in PHASES:
        me, work = probe.ms[phase], result[phase]["work_ms"]
        out[phase] = {
            "me_p50": statistics.median(me) if me else float("nan"),
            "me_p95": _pct(me, 0.95),
            "me_n": len(me),
            "me_errors": probe.errors[phase],
            "work_p50": statistics.median(work) if work else float("nan"),
            "work_p95": _pct(work, 0.95),
            "work_n": len(work),
            "work_errors": result[phase]["work_errors"],
        }
    return out


def measure(tabs: int, seconds: float) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bayes-webload-"))
    port = free_port()
    stack = AppStack(
        data_dir=tmp,
        port=port,
        # REFLEX_SSR=false: no prerendering in the build (it times out on a loaded machine); both sides alike
        env=stack_env(tmp, port, BAYES_DEMO="0", BAYES_REDIS_PORT=str(free_port()), REFLEX_SSR="false"),
    ).start()
    try:
        users = [_setup_user(stack.url + "/api/v1", n) for n in range(tabs)]
        return run_load(stack.url, users, seconds)
    finally:
        stack.stop()


ROWS = [
    ("/me p50 (ms)", "me_p50"),
    ("/me p95 (ms)", "me_p95"),
    ("/me errors", "me_errors"),
    ("search or page p50 (ms)", "work_p50"),
    ("search or page p95 (ms)", "work_p95"),
    ("searches or pages done", "work_n"),
    ("search or page errors", "work_errors"),
]


def _target(r: dict) -> str:
    ratio = r["tab-search"]["me_p95"] / r["api-search"]["me_p95"]
    ok = ratio <= 1.5 and r["tab-search"]["me_p95"] <= 250
    return f"{ratio:.2f}× ({'met' if ok else 'missed'}: ≤ 1.5× and ≤ 250 ms)"


def report(ours: dict, base: dict | None, label: str) -> None:
    print(f"{'phase':11} {'':26} {'ours':>10} {label:>10}")
    for phase in PHASES:
        for name, key in ROWS:
            a = ours[phase][key]
            b = base[phase][key] if base else float("nan")
            print(f"{phase:11} {name:26} {a:10.1f} {b:10.1f}")
        print()
    print(f"/me p95 tab-search ÷ api-search: ours {_target(ours)}" + (f"; {label} {_target(base)}" if base else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tabs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--baseline", default="", help="a commit to measure the same way (e.g. main)")
    ap.add_argument("--url", default="", help="a running `make run` instead of a stack of its own")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.url:
        users = [_setup_user(args.url + "/api/v1", n) for n in range(args.tabs)]
        ours = run_load(args.url, users, args.seconds)
    else:
        ours = measure(args.tabs, args.seconds)
    if args.json:
        print(json.dumps(ours))
        return
    base = None
    if args.baseline:
        from benchmarks.baseline_run import measure_at

        base = measure_at(
            args.baseline, "benchmarks/web_load.py", ["--tabs", str(args.tabs), "--seconds", str(args.seconds)]
        )
    report(ours, base, args.baseline or "baseline")


if __name__ == "__main__":
    main()
