"""`make run`'s process set: starts web + workers + index + its own Redis under supervisord,
a worker over its memory ceiling is recycled while the service stays up, Ctrl-C leaves no
orphans, and a second start neither reinstalls nor re-creates the admin."""

import subprocess
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.procs import ROOT, AppStack, free_port, processes_of, stack_env, stack_port, wait_for


def _cmdline(proc: psutil.Process) -> str:
    """A child's command line, or "" for one that exited meanwhile (a build step, a zombie)."""
    try:
        return " ".join(proc.cmdline())
    except psutil.Error:
        return ""


@pytest.mark.stack
def test_run_starts_everything_and_ctrl_c_stops_everything(tmp_path):
    """Two worker processes with a 1 MB memory ceiling: every message ends with the worker
    recycled (exit 75, expected), and the app keeps answering."""
    port, redis_port = stack_port(), free_port()
    env = stack_env(
        tmp_path / "data",
        port,
        BAYES_REDIS_PORT=str(redis_port),
        BAYES_WORKER_PROCESSES="2",
        BAYES_WORKER_MAX_RSS_MB="1",
        # the demo's ingestion would hold the asks below for as long as it takes on workers
        # recycled after every message (48–106 s); test_demo_account checks the demo account
        BAYES_DEMO="0",
    )
    stack = AppStack(data_dir=tmp_path / "data", env=env, port=port).start()
    try:
        _assert_supervised(stack, tmp_path / "data")
        _recycled_while_healthy(stack, tmp_path / "data")
        children = psutil.Process(stack.proc.pid).children(recursive=True)
    finally:
        rc = stack.stop()
    assert rc is not None
    # every program stopped on its stop signal; none had to be killed after `stopwaitsecs`
    stopping = stack.log_path.read_text().split("received SIGINT indicating exit request")[-1]
    assert "SIGKILL" not in stopping, stopping
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"orphans after Ctrl-C: {[_cmdline(c) for c in alive]}"
    assert not processes_of(tmp_path / "data"), [p.cmdline() for p in processes_of(tmp_path / "data")]

    _second_start(env, tmp_path / "data", port)


def _assert_supervised(stack: AppStack, data_dir: Path) -> None:
    """Every program is under supervisord, up and healthy; one port serves the pages and the API."""
    conf = (data_dir / "supervisor" / "supervisord.conf").read_text()
    assert "redis-server" in conf
    assert "dramatiq jobs --processes 1 " in conf
    assert "numprocs=2" in conf
    assert "autorestart=true" in conf
    assert "killasgroup=true" in conf
    assert "bayes_app.search.index_server" in conf
    assert "bayes_app.procs.web" in conf  # reflex run --env prod --single-port
    # wait for everything to be up (the workers start after the web process)
    health = wait_for(lambda: (h := stack.health())["status"] == "ok" and h, 60, 0.5, what="health ok")
    assert {p["name"] for p in health["components"]["processes"]["programs"]} == {
        "web",
        "worker_0",
        "worker_1",
        "index",
        "redis",
        "watchdog",
    }
    assert "Generated password:" in stack.log_path.read_text()  # printed once, on creation
    # one port serves both the pages and the API
    page = httpx.get(f"{stack.url}/login", timeout=10, follow_redirects=True)
    assert page.status_code == 200
    assert "<html" in page.text.lower()
    children = psutil.Process(stack.proc.pid).children(recursive=True)
    names = " ".join(_cmdline(c) for c in children)
    assert "redis-server" in names
    assert "dramatiq" in names
    assert "bayes_app.procs.web" in names
    assert "index_server" in names
    assert "supervisord" in " ".join(psutil.Process(stack.proc.pid).cmdline())


def _recycled_while_healthy(stack: AppStack, data_dir: Path) -> None:
    """Workers over their memory ceiling are recycled (planned restarts, not crashes) while health stays ok."""
    # Issue 36.10: health is sampled all through the recycles (each message ends one);
    # a planned restart is announced by the worker, so no sample may say "degraded".
    samples: list[dict] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append(stack.health())
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _offline_ask(stack, data_dir)
    _offline_ask(stack, data_dir)

    def recycled() -> list[dict]:
        report = stack.health()["components"]["processes"]
        return [
            e
            for e in report["recent_restarts"]
            if e["process"].startswith("worker_") and e["expected"] and e["detail"] == "exit status 75; expected"
        ] or None

    assert len(wait_for(recycled, 30, 0.5, what="a worker recycled")) >= 1
    time.sleep(5)  # the supervisor has the recycled worker running again
    done.set()
    sampler.join(10)
    degraded = [h for h in samples if h["status"] != "ok"]
    assert len(samples) > 20, degraded[:3]
    assert not degraded, degraded[:3]
    assert "over BAYES_WORKER_MAX_RSS_MB=1: finishing the messages in flight" in stack.log_tail(2000)
    report = stack.health()["components"]["processes"]
    assert report["status"] == "ok", report  # planned recycles are not crashes
    assert sum(p["recycles"] for p in report["programs"]) >= 1
    assert all(p["crashes"] == 0 for p in report["programs"]), report


def _second_start(env: dict, data_dir: Path, port: int) -> None:
    """Second start: same data, admin exists, no password printed again; the code is the same,
    so the frontend is served from the first start's build, not built again."""
    env.pop("BAYES_WORKER_MAX_RSS_MB")
    again = AppStack(data_dir=data_dir, env=env, port=port)
    again.start()
    try:
        log = again.log_path.read_text()
        assert "Generated password:" not in log
        assert "Frontend unchanged since its last build" in log
        assert "Creating Production Build" not in log
        page = httpx.get(f"{again.url}/login", timeout=10, follow_redirects=True)
        assert page.status_code == 200
        assert "<html" in page.text.lower()
    finally:
        again.stop()


def _offline_ask(stack: AppStack, data_dir) -> None:
    """Without OPENAI_BASE_URL / OPENAI_API_KEY the app answers in offline mode."""
    import json
    import uuid

    from bayes_app.accounts import service
    from bayes_app.credits import ledger
    from bayes_app.db import session_scope
    from bayes_app.models import MICRO

    email, password = f"o{uuid.uuid4().hex[:8]}@example.com", "pw-" + uuid.uuid4().hex
    with session_scope(f"sqlite:///{data_dir / 'bayes.db'}") as db:
        user = service.register(db, email, password)
        db.flush()
        ledger.grant(db, user, MICRO, f"grant:{user.id}", "test")
    with httpx.Client(base_url=stack.url + "/api/v1", timeout=30) as c:
        token = c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
        h = {"Authorization": f"Bearer {token}"}
        assert c.get("/conversations", headers=h).json()["offline_mode"] is True
        run = c.post("/runs", json={"kind": "ask", "prompt": "What is in my library?"}, headers=h).json()
        # the stream stays quiet until a worker (recycled after every message) takes the run
        with c.stream("GET", f"/runs/{run['id']}/events?format=ndjson", headers=h, timeout=180) as stream:
            lines = [json.loads(x) for x in stream.iter_lines() if x]
        assert lines[-1]["data"]["status"] == "SUCCEEDED"
        thinking = "".join(x["data"].get("delta", "") for x in lines if x["type"] == "thinking")
        assert thinking.startswith("Offline mode")
        assert c.get(f"/runs/{run['id']}", headers=h).json()["model"] == "offline"
        conv = c.get(f"/conversations/{run['conversation_id']}", headers=h).json()
        assert [m["role"] for m in conv["messages"]] == ["user", "assistant"]
        assert conv["messages"][1]["status"] == "complete"


@pytest.mark.stack
def test_second_make_run_does_not_reinstall():
    import time

    t = time.monotonic()
    out = subprocess.run(["make", "setup"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120).stdout
    assert "nothing to install" in out, out
    assert "installing" not in out, out
    assert time.monotonic() - t < 30


def test_invalid_setting_fails_at_start_naming_it(tmp_path):
    env = stack_env(tmp_path, 1)
    env["BAYES_PORT"] = "not-a-port"
    p = subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-m", "bayes_app.cli", "run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "BAYES_PORT" in p.stderr
