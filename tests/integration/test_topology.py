"""Scale-out topology, no shared disk: one PostgreSQL, one Redis, an S3 endpoint (moto), one
index endpoint, two web processes (Reflex with its Redis state manager) and two Dramatiq
workers; every process has its own empty BAYES_DATA_DIR. The web processes listen on two
addresses, 127.0.0.1:P and 127.0.0.2:P: the built frontend takes the WebSocket's host from the
page but keeps the build's port, so this is how a browser tab reaches the second process.

Checked through both web processes: a session made on A works on B; a PDF uploaded on A is stored in
S3, ingested by a worker and found by search on B; an Ask run started on B is streamed on A and
stopped from A; a worker killed with -9 mid-run has its run finalized by the other within 15 s,
and reconciliation reports no mismatch; the reaper is enqueued once per interval although both
workers tick the scheduler; a map run shows its nodes live in two browser tabs whose WebSockets
go to different web processes, and is stopped from the other one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support.frontend import shared_build
from tests.support.procs import (
    ROOT,
    Fatal,
    PgCluster,
    free_port,
    stack_env,
    stack_port,
    start_index,
    start_worker,
    wait_for,
    web_workdir,
)
from tests.support.tiny_pdf import text_pdf

pytestmark = [pytest.mark.stack, pytest.mark.timeout(600)]
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@example.com", "topology-secret-42"
PHRASE = "Marsupial lichen cartography"


class Topology:
    def __init__(self, tmp: Path, pg: PgCluster, redis_url: str, reflex_redis_url: str, s3):
        self.tmp = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        bucket = s3.new_bucket()
        self.s3, self.bucket = s3, bucket
        self.db_url = pg.create_database(f"topo_{uuid.uuid4().hex[:10]}")
        self.index_port = free_port()
        self.procs: list[subprocess.Popen] = []
        self.procs.append(start_index(tmp / "index", self.index_port, tmp / "index.log"))
        self.common = dict(
            DATABASE_URL=self.db_url,
            REDIS_URL=redis_url,
            REFLEX_REDIS_URL=reflex_redis_url,
            QDRANT_URL=f"http://127.0.0.1:{self.index_port}",
            BAYES_STORAGE_URL=f"s3://{bucket}/pdfs",
            BAYES_SECRET_KEY="k" * 48,
            BAYES_ADMIN_EMAIL=ADMIN_EMAIL,
            BAYES_ADMIN_PASSWORD=ADMIN_PASSWORD,
            BAYES_DEMO="0",
            BAYES_OFFLINE_WORD_DELAY_MS="40",
            GRANIAN_WORKERS="1",  # one server process per web (Reflex forks 2×cores+1 with Redis)
            REFLEX_SSR="false",  # built as `make run` builds (bayes_app/cli.py), so stacks share the build
            **s3.env(),
        )
        self.data_dirs: list[Path] = []
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        tmp = self.tmp
        setup = subprocess.run(
            [sys.executable, "-m", "bayes_app.cli", "setup"],
            cwd=ROOT,
            env=self.env("setup"),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert setup.returncode == 0, setup.stderr
        # Web A: `reflex run --env prod` as `make run` starts it (builds the frontend unless
        # unchanged, serves it and the backend) on 127.0.0.1:P. Web B: the same built app served
        # by a second process on 127.0.0.2:P (the built frontend keeps the port and takes the
        # host from the page, so a tab opened on 127.0.0.2 has its WebSocket on B).
        self.port = stack_port()
        with shared_build(web_workdir(self.port), self.port):
            self.webs = [
                ("127.0.0.1", self._web("web-a", "bayes_app.procs.web", str(self.port), "--backend-host", "127.0.0.1"))
            ]
            self.workers = [start_worker(self.env(n), tmp / f"{n}.log") for n in ("worker-1", "worker-2")]
            self.procs += self.workers
            self._wait_up(0, 600)  # B serves A's build: start it once the build is there
        self.webs.append(("127.0.0.2", self._web("web-b", "tests.support.reflex_twin", "127.0.0.2", str(self.port))))
        self._wait_up(1, 240)

    def _web(self, name: str, module: str, *args: str) -> subprocess.Popen:
        """A web process (`python -m module args`) on this topology's port, logging to name.log."""
        with open(self.tmp / f"{name}.log", "w") as log_out:
            proc = subprocess.Popen(
                [sys.executable, "-m", module, *args],
                cwd=ROOT,
                env=self.env(name, self.port),
                stdout=log_out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def _wait_up(self, i: int, timeout: float) -> None:
        host, proc = self.webs[i]

        def up() -> bool:
            if proc.poll() is not None:
                raise Fatal(f"web {host} exited")
            return httpx.get(f"http://{host}:{self.port}/api/v1/health", timeout=5).status_code == 200

        wait_for(up, timeout, 0.5, what=f"web on {host}:{self.port}")

    def env(self, name: str, port: int = 1) -> dict:
        d = self.tmp / name
        d.mkdir()
        self.data_dirs.append(d)
        return stack_env(d, port, **self.common)

    def site(self, i: int) -> str:
        return f"http://{self.webs[i][0]}:{self.port}"

    def url(self, i: int) -> str:
        return self.site(i) + "/api/v1"

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    if p in self.workers:  # Dramatiq's main process forwards it to its worker
                        p.terminate()  # process; a second SIGTERM from the group would hang it
                    else:
                        os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def topo(redis_server, s3_server):
    base = Path(tempfile.mkdtemp(prefix="bayes-topo-"))
    os.chmod(base, 0o755)
    pg = PgCluster(base / "pg").start()
    t = None
    try:
        t = Topology(base / "t", pg, redis_server.url_db(5), redis_server.url_db(6), s3_server)
        yield t
    finally:
        if t is not None:
            t.stop()
        pg.stop()
        shutil.rmtree(base, ignore_errors=True)


def _bearer(base: str, email: str, password: str) -> dict:
    tok = httpx.post(f"{base}/auth/token", json={"email": email, "password": password}, timeout=30)
    assert tok.status_code in (200, 201), tok.text
    return {"Authorization": f"Bearer {tok.json()['token']}"}


def test_session_made_on_a_works_on_b(topo):
    a, b = topo.url(0), topo.url(1)
    email, pw = f"u{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42"
    origin_a = a.removesuffix("/api/v1")
    reg = httpx.post(
        f"{a}/session/register", json={"email": email, "password": pw}, headers={"Origin": origin_a}, timeout=30
    )
    assert reg.status_code in (200, 201), reg.text
    cookies = dict(reg.cookies)  # the browser would hold it per host; here it is carried to B by hand
    assert cookies, "no session cookie"
    # B recognises A's cookie: a cookie-authenticated read, then a state change (same origin: B)
    probe = httpx.get(f"{b}/documents/{'0' * 32}/file", cookies=cookies, timeout=30)
    assert probe.status_code == 404, probe.text  # authenticated; without the cookie: 401
    assert httpx.get(f"{b}/documents/{'0' * 32}/file", timeout=30).status_code == 401
    new_pw = "second-tangerine-43"
    changed = httpx.post(
        f"{b}/session/password",
        json={"old_password": pw, "new_password": new_pw},
        cookies=cookies,
        headers={"Origin": b.removesuffix("/api/v1")},
        timeout=30,
    )
    assert changed.status_code == 200, changed.text
    assert httpx.post(f"{a}/auth/token", json={"email": email, "password": new_pw}, timeout=30).is_success


def test_upload_on_a_searched_on_b_with_files_in_s3_only(topo):
    a, b = topo.url(0), topo.url(1)
    admin = _bearer(b, ADMIN_EMAIL, ADMIN_PASSWORD)
    email, pw = f"u{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42"
    httpx.post(
        f"{a}/session/register",
        json={"email": email, "password": pw},
        headers={"Origin": a.removesuffix("/api/v1")},
        timeout=30,
    ).raise_for_status()
    ha, hb = _bearer(a, email, pw), _bearer(b, email, pw)
    assert admin
    data = text_pdf("Lichens", [f"{PHRASE} maps the slow growth of lichens on stone."] * 6, pages=2)
    up = httpx.post(f"{a}/documents", headers=ha, files={"file": ("lichen.pdf", data, "application/pdf")}, timeout=60)
    assert up.status_code == 202, up.text
    doc_id = up.json()["id"]
    wait_for(
        lambda: httpx.get(f"{b}/documents/{doc_id}", headers=hb, timeout=10).json()["status"] == "indexed",
        120,
        0.5,
        what="ingestion by a worker",
    )
    hits = httpx.get(f"{b}/search", params={"q": PHRASE}, headers=hb, timeout=60).json()
    assert any(h.get("document_id") == doc_id for h in hits), hits
    assert httpx.get(f"{b}/documents/{doc_id}/file", headers=hb, timeout=30).content == data
    assert len(topo.s3.keys(topo.bucket)) == 1
    assert not [p for d in topo.data_dirs for p in d.rglob("*.pdf")]  # no PDF on any local disk
    # deleted on B: a worker removes the vectors and, as no document uses it now, the object
    assert httpx.delete(f"{b}/documents/{doc_id}", headers=hb, timeout=30).status_code == 204
    wait_for(lambda: topo.s3.keys(topo.bucket) == [], 30, 0.2, what="the object to be purged")


def _user_with_credits(topo) -> tuple[dict, dict]:
    a, b = topo.url(0), topo.url(1)
    email, pw = f"u{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42"
    httpx.post(
        f"{a}/session/register",
        json={"email": email, "password": pw},
        headers={"Origin": a.removesuffix("/api/v1")},
        timeout=30,
    ).raise_for_status()
    admin = _bearer(a, ADMIN_EMAIL, ADMIN_PASSWORD)
    g = httpx.post(f"{a}/admin/credits/grant", json={"email": email, "credits": 50}, headers=admin, timeout=30)
    assert g.status_code == 201, g.text
    ha = _bearer(a, email, pw)
    # one indexed paper: offline Ask on an empty library answers at once, without streaming
    pdf = text_pdf("Lichens", ["Lichens are a symbiosis of a fungus and an alga or a cyanobacterium."])
    doc = httpx.post(f"{a}/documents", headers=ha, timeout=60, files={"file": ("l.pdf", pdf, "application/pdf")})
    doc_id = doc.json()["id"]
    deadline = time.monotonic() + 120
    while httpx.get(f"{a}/documents/{doc_id}", headers=ha, timeout=30).json()["status"] != "indexed":
        assert time.monotonic() < deadline, "the paper did not finish indexing"
        time.sleep(0.3)
    return ha, _bearer(b, email, pw)


def test_ask_started_on_b_streamed_and_stopped_on_a(topo):
    a, b = topo.url(0), topo.url(1)
    ha, hb = _user_with_credits(topo)
    run = httpx.post(
        f"{b}/runs", json={"kind": "ask", "prompt": "Tell me everything about lichens."}, headers=hb, timeout=30
    )
    assert run.status_code == 202, run.text
    run_id = run.json()["id"]
    types = []
    with httpx.stream("GET", f"{a}/runs/{run_id}/events?format=ndjson", headers=ha, timeout=60) as s:
        cancelled = False
        for line in s.iter_lines():
            if not line:
                continue
            ev = json.loads(line)
            types.append(ev["type"])
            if ev["type"] == "text" and not cancelled:
                c = httpx.post(f"{a}/runs/{run_id}/cancel", headers=ha, timeout=30)
                assert c.status_code in (200, 202), c.text
                cancelled = True
            if ev["type"] == "done":
                assert ev["data"]["status"] == "CANCELLED", ev
                break
    assert "text" in types
    assert types[-1] == "done"
    assert httpx.get(f"{b}/runs/{run_id}", headers=hb, timeout=30).json()["status"] == "CANCELLED"


def test_kill_9_worker_mid_run_is_finalized_by_the_other(topo):
    a, b = topo.url(0), topo.url(1)
    ha, hb = _user_with_credits(topo)
    w1, w2 = topo.workers
    os.killpg(w2.pid, signal.SIGSTOP)  # so that worker 1 takes the run
    try:
        run_id = httpx.post(
            f"{b}/runs", json={"kind": "ask", "prompt": "Write at length on stone."}, headers=hb, timeout=30
        ).json()["id"]
        wait_for(
            lambda: httpx.get(f"{a}/runs/{run_id}", headers=ha, timeout=10).json()["status"] == "RUNNING",
            60,
            0.2,
            what="the run to start on worker 1",
        )
    finally:
        os.killpg(w2.pid, signal.SIGCONT)
    os.killpg(w1.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    try:

        def final():
            # STOPPED (outcome known, not yet settled) is a brief intermediate state: wait for
            # the settled, terminal status.
            r = httpx.get(f"{a}/runs/{run_id}", headers=ha, timeout=10).json()
            return r if r["status"] not in ("QUEUED", "RUNNING", "STOPPED") else None

        r = wait_for(final, 30, 0.2, what="finalization by worker 2")
        took = time.monotonic() - killed_at
        print(f"run finalized by the other worker {took:.1f} s after kill -9")
        assert took <= 15, took
        assert (r["status"], r["outcome_reason"]) == ("FAILED", "worker_lost"), r
        admin = _bearer(b, ADMIN_EMAIL, ADMIN_PASSWORD)
        rec = httpx.get(f"{b}/admin/credits/reconciliation", headers=admin, timeout=30).json()
        assert rec["ok"], rec
        assert rec["spend_mismatches"] == [], rec
        assert rec["held_after_finalize"] == [], rec
    finally:  # back to two workers, also when an assertion above failed
        topo.workers[0] = start_worker(topo.env("worker-3"), topo.tmp / "worker-3.log")
        topo.procs.append(topo.workers[0])


def test_periodic_jobs_fire_once_per_interval_across_workers(topo, redis_server):
    """Both workers tick the scheduler; the reaper (every 5 s) must be enqueued once per
    interval cluster-wide. Enqueues are read from Redis' MONITOR feed (the dispatch carries the
    message, hence the actor name). A worker that boots (the one the kill test restarted) also
    sends the reaper at once and, while runs hold leases, once more when they run out
    (jobs/periodic.py `at_boot`, jobs/runs.py `follow_leases`): those carry `follow_leases` or
    a delay (`eta`) and are not the schedule under test."""
    import redis

    from jobs.runs import REAP_EVERY_S

    assert len(topo.workers) == 2
    assert all(w.poll() is None for w in topo.workers)
    db = int(topo.common["REDIS_URL"].rsplit("/", 1)[1])
    stamps: list[float] = []
    zotero: list[float] = []  # the Zotero check runs every 60 s: at most once in this window
    # Each worker ticks every REAP_EVERY_S / 2, so enqueues are 5 to 7.5 s apart: any 15 s
    # holds at least two, and none may be closer than 5 s.
    window = 3 * REAP_EVERY_S + 1.5
    r = redis.Redis.from_url(redis_server.url)
    with r.monitor() as m:
        end = time.monotonic() + window
        for cmd in m.listen():
            if time.monotonic() > end:
                break
            text = cmd["command"].replace("\\", "").replace(" ", "")
            scheduled = "follow_leases" not in text and '"eta":' not in text
            if cmd["db"] == db and text.lower().startswith("eval") and '"actor_name":"reap_runs"' in text and scheduled:
                stamps.append(float(cmd["time"]))
            if cmd["db"] == db and text.lower().startswith("eval") and '"actor_name":"sync_zotero_due"' in text:
                zotero.append(float(cmd["time"]))
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert 2 <= len(stamps) <= 4, stamps
    assert all(g >= REAP_EVERY_S - 0.05 for g in gaps), gaps
    assert len(zotero) <= 1, zotero
    from jobs.zotero import PERIODIC_CHECK_S

    workers_redis = redis.Redis.from_url(topo.common["REDIS_URL"])
    # scheduled, and locked for one interval (re-taken within a tick after it expires)
    ttl = wait_for(
        lambda: max(workers_redis.pttl("bayes:periodic:sync_zotero_due"), 0), 5, 0.1, what="the Zotero check's lock"
    )
    assert ttl <= PERIODIC_CHECK_S * 1000


# ---- browsers: two tabs on two web processes ------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    """Module-scoped and closed at the end of the module (a live sync Playwright would break
    asyncio.run() in later tests)."""
    from tests.support.browser import chromium

    yield from chromium()


@pytest.mark.browser  # drives Chromium (conftest marks only tests/browser by their folder)
def test_map_run_live_in_two_tabs_on_two_web_processes(topo, browser):
    import re

    from playwright.sync_api import expect

    from tests.support import pdfs
    from tests.support.browser import login

    node = ".react-flow__node"
    a, b = topo.url(0), topo.url(1)
    email, pw = f"m{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42"
    httpx.post(
        f"{a}/session/register", json={"email": email, "password": pw}, headers={"Origin": topo.site(0)}, timeout=30
    ).raise_for_status()
    admin = _bearer(a, ADMIN_EMAIL, ADMIN_PASSWORD)
    httpx.post(
        f"{a}/admin/credits/grant", json={"email": email, "credits": 50}, headers=admin, timeout=30
    ).raise_for_status()
    h = _bearer(b, email, pw)
    doc = httpx.post(
        f"{b}/documents",
        headers=h,
        timeout=60,
        files={"file": (pdfs.REVIEW.name, pdfs.REVIEW.read_bytes(), "application/pdf")},
    ).json()
    wait_for(
        lambda: httpx.get(f"{a}/documents/{doc['id']}", headers=h, timeout=10).json()["status"] == "indexed",
        180,
        0.5,
        what="the review to be indexed",
    )

    sockets: dict[int, list[str]] = {0: [], 1: []}
    tabs = []
    for i in (0, 1):
        ctx = browser.new_context(viewport={"width": 1280, "height": 860})
        page = ctx.new_page()
        page.set_default_timeout(30_000)
        page.on("websocket", lambda ws, i=i: sockets[i].append(ws.url))
        login(page, topo.site(i), email, pw)
        tabs.append(page)
    one, two = tabs
    one.fill("#new-map-title", "How are molecular prediction models explained?")
    one.click("#new-map")
    expect(one).to_have_url(re.compile(r"/maps/[0-9a-f]{32}$"))
    map_id = one.url.rsplit("/", 1)[1]
    two.goto(f"{topo.site(1)}/maps/{map_id}")
    expect(two.locator(node)).to_have_count(1)
    assert sockets[0], sockets
    assert all("127.0.0.1" in u for u in sockets[0]), sockets
    assert sockets[1], sockets
    assert all("127.0.0.2" in u for u in sockets[1]), sockets

    import redis

    # the tabs' Reflex state lives in Redis (REFLEX_REDIS_URL), not in either web process
    assert redis.Redis.from_url(topo.common["REFLEX_REDIS_URL"]).dbsize() > 0
    one.click("#btn-research")
    for page in (one, two):  # both see the run and its nodes while it is still going
        expect(page.locator("#run-live")).to_be_visible()
        expect(page.locator(node).nth(3)).to_be_visible(timeout=60_000)
    assert two.locator("#run-live").is_visible(), "the run ended before both tabs saw it live"
    two.click("#btn-stop")  # stopped from the other web process
    for page in (one, two):
        expect(page.locator("#run-outcome")).to_contain_text("CANCELLED", timeout=30_000)
    for page in tabs:
        page.context.close()
