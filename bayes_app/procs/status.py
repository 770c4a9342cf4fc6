"""What the supervisor says: each program's live state (supervisord's XML-RPC over its unix
socket) and the recorded exits (the watchdog listener's events file), for /api/v1/health and
the admin dashboard."""

from __future__ import annotations

import json
import socket
import time
import xmlrpc.client
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, cast

from bayes_app.procs import planned
from bayes_app.procs.config import RPC_USER, paths, rpc_password

# A crash (unexpected exit) keeps health "degraded" this long, so a monitor polling every
# few seconds sees it; a program that is not RUNNING keeps it degraded until it is.
DEGRADED_AFTER_CRASH_S = 10.0
HISTORY_S = 24 * 3600
RPC_TIMEOUT_S = 2.0
# the states of a program between a planned exit and running again (not BACKOFF/FATAL: failures)
PLANNED_STATES = ("STOPPING", "EXITED", "STOPPED", "STARTING")


class _UnixConnection(HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class _UnixTransport(xmlrpc.client.Transport):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__()
        self._path, self._timeout = path, timeout

    def make_connection(self, host):
        _host, self._extra_headers, _x509 = self.get_host_info(host)  # basic auth from the URL
        return _UnixConnection(self._path, self._timeout)


def rpc(data_path: Path, secret: str, timeout: float = RPC_TIMEOUT_S) -> xmlrpc.client.ServerProxy:
    """A client for the supervisord of this data dir (raises OSError when none is listening)."""
    sock = paths(data_path).socket
    auth = f"{RPC_USER}:{rpc_password(secret)}@"
    return xmlrpc.client.ServerProxy(f"http://{auth}localhost/RPC2", transport=_UnixTransport(str(sock), timeout))


def read_events(events_path: Path, since: float = 0.0) -> list[dict[str, Any]]:
    """Recorded process events newer than `since` (oldest first); bad lines are skipped."""
    try:
        raw = events_path.read_text(errors="replace")
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and float(ev.get("ts", 0)) >= since:
            out.append(ev)
    return out


def is_crash(ev: dict[str, Any]) -> bool:
    """An exit nobody asked for: unexpected exit code or signal, or a failed start."""
    return ev.get("state") in ("EXITED", "BACKOFF", "FATAL") and not ev.get("expected", False)


def summarize(
    infos: list[dict[str, Any]],
    events: list[dict[str, Any]],
    now: float,
    planned: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Health of the supervised programs from their live states, recorded events and the
    restarts they announced (`procs.planned.recent`): a program down for a planned restart is
    "restarting", not a problem, until it fails to start (BACKOFF, FATAL) or the grace ends."""
    planned = planned or {}
    programs = []
    for info in infos:
        name = info["name"]
        mine = [e for e in events if e.get("process") == name]
        exits = [e for e in mine if e.get("state") in ("EXITED", "BACKOFF", "FATAL")]
        last = exits[-1] if exits else None
        programs.append(
            {
                "name": name,
                "group": info["group"],
                "state": info["statename"],
                "pid": info["pid"] or None,
                "uptime_s": round(now - info["start"]) if info["statename"] == "RUNNING" else None,
                "planned_restart": name in planned and info["statename"] != "RUNNING",
                "restarts": len([e for e in exits if e.get("state") == "EXITED"]),
                "crashes": len([e for e in exits if is_crash(e)]),
                "recycles": len([e for e in exits if e.get("state") == "EXITED" and e.get("expected")]),
                "last_exit": None
                if last is None
                else {
                    "at": last["ts"],
                    "detail": last.get("detail") or last["state"].lower(),
                    "expected": bool(last.get("expected")),
                },
            }
        )
    recent = [e for e in events if is_crash(e) and now - float(e["ts"]) < DEGRADED_AFTER_CRASH_S]
    not_running = [
        p["name"]
        for p in programs
        if p["state"] != "RUNNING"
        and not _recycling(p, now)
        and not (p["planned_restart"] and p["state"] in PLANNED_STATES)
    ]
    problems = []
    if not_running:
        problems.append("not running: " + ", ".join(not_running))
    if recent:
        problems.append("restarted after a crash: " + ", ".join(sorted({e["process"] for e in recent})))
    out: dict[str, Any] = {
        "status": "degraded" if problems else "ok",
        "programs": programs,
        "recent_restarts": [
            {"process": e["process"], "at": e["ts"], "detail": e.get("detail", ""), "expected": bool(e.get("expected"))}
            for e in events
            if e.get("state") == "EXITED"
        ][-20:],
    }
    if problems:
        out["error"] = "; ".join(problems)
    return out


def _recycling(program: dict[str, Any], now: float) -> bool:
    """A worker starting again right after a planned (memory) recycle is not a problem."""
    if program["state"] != "STARTING" or program["last_exit"] is None:
        return False
    return program["last_exit"]["expected"] and now - program["last_exit"]["at"] < 30


def report(data_path: Path, secret: str, now: float | None = None) -> dict[str, Any] | None:
    """The supervised programs' health, or None when no supervisor runs for this data dir
    (the app was started some other way)."""
    p = paths(data_path)
    if not p.socket.exists():
        return None
    try:
        infos = cast(list[dict[str, Any]], rpc(data_path, secret).supervisor.getAllProcessInfo())
    except (OSError, xmlrpc.client.Error):
        return None
    now = time.time() if now is None else now
    return summarize(infos, read_events(p.events, since=now - HISTORY_S), now, planned.recent(data_path, now))
