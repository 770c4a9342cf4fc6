"""The supervisor's pieces without a running supervisor: the generated supervisord.conf, the
health summary of process states and exit records, the watchdog's event parsing, exit
descriptions, records file and leftover detection (on real processes)."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bayes_app.procs import config, listener, status
from bayes_app.settings import load_settings


def _settings(tmp_path: Path, **env: str):
    return load_settings(BAYES_DATA_DIR=str(tmp_path), **env)


@pytest.fixture
def env(monkeypatch, tmp_path):
    for k in ("REDIS_URL", "QDRANT_URL", "QDRANT_API_KEY", "BAYES_WORKER_PROCESSES", "BAYES_WORKER_THREADS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("BAYES_DATA_DIR", str(tmp_path))
    return monkeypatch


def _parse(text: str) -> configparser.RawConfigParser:
    cp = configparser.RawConfigParser()
    cp.read_string(text)
    return cp


def test_config_supervises_every_process_with_a_restart_policy(env, tmp_path):
    env.setenv("BAYES_WORKER_PROCESSES", "3")
    env.setenv("BAYES_WORKER_THREADS", "4")
    cp = _parse(config.render(_settings(tmp_path)))
    programs = [s.removeprefix("program:") for s in cp.sections() if s.startswith("program:")]
    assert programs == ["redis", "index", "worker", "web"]
    for name in programs:
        sec = cp[f"program:{name}"]
        assert sec["autorestart"] == "true"
        assert int(sec["startretries"]) >= 5
        # the worker's main process forwards the stop signal itself (a second one hung it)
        assert sec["stopasgroup"] == ("false" if name == "worker" else "true")
        assert sec["killasgroup"] == "true"
        assert sec["umask"] == "077"
        assert sec["stdout_logfile"] == "/dev/stdout"
        assert sec["redirect_stderr"] == "true"
    worker = cp["program:worker"]
    assert "dramatiq jobs --processes 1 --threads 4" in worker["command"]
    assert worker["numprocs"] == "3"
    assert worker["process_name"] == "%(program_name)s_%(process_num)d"
    assert worker["exitcodes"] == f"0,{config.RECYCLE_EXIT_CODE}"
    assert "--appendonly yes" in cp["program:redis"]["command"]
    assert cp["supervisord"]["nodaemon"] == "true"
    assert cp["eventlistener:watchdog"]["events"] == "PROCESS_STATE"
    assert cp["unix_http_server"]["chmod"] == "0700"
    assert cp["unix_http_server"]["password"] == config.rpc_password(_settings(tmp_path).secret())


def test_config_without_local_redis_and_index_and_in_dev_mode(env, tmp_path):
    env.setenv("REDIS_URL", "redis://elsewhere:6379/0")
    env.setenv("QDRANT_URL", "http://qdrant:6333")
    cp = _parse(config.render(_settings(tmp_path), dev=True))
    assert [s for s in cp.sections() if s.startswith("program:")] == ["program:worker", "program:web"]
    assert "--watch" in cp["program:worker"]["command"]
    assert "--env dev" in cp["program:web"]["command"]


@pytest.mark.usefixtures("env")
def test_percent_signs_in_paths_are_escaped_and_long_socket_paths_moved(tmp_path):
    odd = tmp_path / ("100%-" + "x" * 120)
    text = config.render(_settings(odd))
    assert "100%%-" in text
    p = config.paths(odd)
    assert len(str(p.socket)) <= 100
    assert p.socket.name.startswith("bayes-supervisor-")
    assert config.paths(odd).socket == p.socket  # stable: web finds the same socket


def _info(name: str, state: str = "RUNNING", start: float = 0.0, group: str | None = None) -> dict:
    return {"name": name, "group": group or name, "statename": state, "pid": 123, "start": start}


def test_summary_degraded_after_a_crash_then_ok():
    now = 1000.0
    crash = {
        "ts": now - 2,
        "process": "worker_0",
        "state": "EXITED",
        "expected": False,
        "detail": "exit status 1; not expected",
    }
    infos = [_info("web", start=now - 500), _info("worker_0", start=now - 1, group="worker")]
    rep = status.summarize(infos, [crash], now)
    assert rep["status"] == "degraded"
    assert "worker_0" in rep["error"]
    worker = next(p for p in rep["programs"] if p["name"] == "worker_0")
    assert (worker["restarts"], worker["crashes"], worker["recycles"]) == (1, 1, 0)
    assert worker["last_exit"]["detail"] == "exit status 1; not expected"
    later = status.summarize(infos, [crash], now + status.DEGRADED_AFTER_CRASH_S)
    assert later["status"] == "ok"
    assert later["recent_restarts"][0]["process"] == "worker_0"


def test_summary_planned_recycle_is_not_a_problem_but_a_dead_program_is():
    now = 1000.0
    recycle = {
        "ts": now - 1,
        "process": "worker_0",
        "state": "EXITED",
        "expected": True,
        "detail": "exit status 75; expected",
    }
    starting = [_info("worker_0", state="STARTING", group="worker")]
    rep = status.summarize(starting, [recycle], now)
    assert rep["status"] == "ok"
    assert rep["programs"][0]["recycles"] == 1
    assert status.summarize(starting, [], now)["status"] == "degraded"  # starting for no reason
    fatal = status.summarize([_info("index", state="FATAL")], [], now)
    assert fatal["status"] == "degraded"
    assert "not running: index" in fatal["error"]


def test_watchdog_parses_events_and_supervisord_exit_descriptions():
    rec = listener.parse(
        {"eventname": "PROCESS_STATE_EXITED"},
        "processname:worker_1 groupname:worker from_state:RUNNING expected:0 pid:4242",
    )
    assert rec["process"] == "worker_1"
    assert rec["group"] == "worker"
    assert rec["pid"] == 4242
    assert rec["expected"] is False
    assert rec["state"] == "EXITED"
    assert listener.parse({"eventname": "PROCESS_STATE_STOPPING"}, "processname:web") is None
    backoff = listener.parse({"eventname": "PROCESS_STATE_BACKOFF"}, "processname:web groupname:web tries:2")
    assert backoff["expected"] is False
    assert status.is_crash(backoff)
    log = (
        "2026-01-01 10:00:00,000 WARN exited: worker_1 (exit status 1; not expected)\n"
        "2026-01-01 10:00:05,000 INFO exited: worker_10 (exit status 75; expected)\n"
        "2026-01-01 10:01:00,000 WARN exited: worker_1 (terminated by SIGKILL; not expected)\n"
    )
    assert listener.exit_detail(log, "worker_1") == "terminated by SIGKILL; not expected"
    assert listener.exit_detail(log, "worker_10") == "exit status 75; expected"
    assert listener.exit_detail(log, "web") == ""


def test_events_file_is_appended_and_kept_small(tmp_path, monkeypatch):
    monkeypatch.setattr(listener, "MAX_BYTES", 2_000)
    monkeypatch.setattr(listener, "KEEP_LINES", 10)
    path = tmp_path / "sv" / "events.jsonl"
    for i in range(100):
        listener.append(path, {"ts": i, "process": "web", "state": "EXITED", "expected": False})
    lines = path.read_text().splitlines()
    assert len(lines) <= 30
    assert json.loads(lines[-1])["ts"] == 99
    path.write_text(path.read_text() + "not json\n")
    assert [e["ts"] for e in status.read_events(path, since=97)] == [97, 98, 99]


def test_leftovers_are_processes_below_no_live_program():
    """A parent with two children: with the parent alive nothing is left over; as soon as
    the parent's pid is no longer a live program, both children are."""
    code = (
        "import subprocess, sys, time\n"
        "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']) for _ in range(2)]\n"
        "print(' '.join(str(k.pid) for k in kids), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        kids = [int(x) for x in parent.stdout.readline().split()]
        below = [psutil.Process(k) for k in kids]
        assert listener.leftovers(below, {parent.pid}) == []
        found = listener.leftovers(below, {os.getpid() + 10_000_000})  # no such program
        assert sorted(p.pid for p in found) == sorted(kids)
        t0 = time.monotonic()
        listener.stop_all(found, grace_s=5)
        assert all(not psutil.pid_exists(k) or psutil.Process(k).status() == psutil.STATUS_ZOMBIE for k in kids)
        assert time.monotonic() - t0 < 5  # SIGTERM was enough
    finally:
        parent.kill()
        parent.wait(5)


@pytest.mark.usefixtures("env")
def test_local_redis_and_index_require_generated_secrets(tmp_path):
    """Issue 24.8: `make run`'s redis-server gets a generated `requirepass` and the index an
    API key, both kept in the data dir (mode 600) and never on a command line; the clients'
    settings carry them."""
    import stat

    settings = _settings(tmp_path)
    cp = _parse(config.render(settings))
    redis_cmd, index_cmd = cp["program:redis"]["command"], cp["program:index"]["command"]
    password = (tmp_path / "redis_password").read_text().strip()
    key = (tmp_path / "index_api_key").read_text().strip()
    assert len(password) >= 32
    assert len(key) >= 32
    assert password != key
    conf = tmp_path / "redis" / "redis.conf"
    assert redis_cmd.startswith(f"redis-server {conf} ")
    assert conf.read_text() == f"requirepass {password}\n"
    assert f"--api-key-file {tmp_path / 'index_api_key'}" in index_cmd
    for path in (conf, tmp_path / "redis_password", tmp_path / "index_api_key"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert password not in redis_cmd
    assert key not in index_cmd
    assert settings.effective_redis_url == f"redis://:{password}@127.0.0.1:{settings.redis_port}/0"
    assert settings.effective_qdrant_api_key == key
    again = _settings(tmp_path)  # the same secrets on every start
    assert again.redis_password() == password
    assert again.effective_qdrant_api_key == key


def test_a_program_down_for_an_announced_restart_keeps_health_ok(tmp_path, monkeypatch):
    """Issue 36.10: a worker that announced its recycle is EXITED or STARTING for a few seconds
    before its exit is even recorded; health stays ok. A failed start, or a program down with
    no announcement (or an old one), is still a problem."""
    from bayes_app.procs import planned

    monkeypatch.setenv("SUPERVISOR_PROCESS_NAME", "worker_0")
    assert planned.announce(tmp_path, "memory 3100 MB over 3072 MB")
    now = time.time()
    marks = planned.recent(tmp_path, now)
    assert set(marks) == {"worker_0"}
    assert marks["worker_0"]["reason"].startswith("memory")
    for state in ("EXITED", "STARTING"):
        infos = [_info("web"), _info("worker_0", state=state, group="worker")]
        rep = status.summarize(infos, [], now, marks)
        assert rep["status"] == "ok", rep
        assert rep["programs"][1]["planned_restart"] is True
        assert status.summarize(infos, [], now, {})["status"] == "degraded"  # the same gap, unannounced
    backoff = [_info("worker_0", state="BACKOFF", group="worker")]
    assert status.summarize(backoff, [], now, marks)["status"] == "degraded"
    assert planned.recent(tmp_path, now + planned.GRACE_S + 1) == {}
    monkeypatch.delenv("SUPERVISOR_PROCESS_NAME")
    assert planned.announce(tmp_path, "not supervised") is False
