"""The `watchdog` event listener that supervisord runs next to the programs
(`python -m bayes_app.procs.listener`, speaking supervisor's event listener protocol on
stdin/stdout).

On every process state change it
- records exits, failed starts and returns to RUNNING in `<data dir>/supervisor/events.jsonl`
  (with supervisord's own description of the exit, e.g. "terminated by SIGKILL; not
  expected"), which /api/v1/health and the admin dashboard read;
- after an exit, stops the processes the dead program left behind (the worker child of a
  killed `dramatiq` main process, a web server's children): supervisord is made a child
  subreaper by `bayes_app.cli run`, so such orphans stay its descendants, and anything below
  it that belongs to no live program is a leftover (SIGTERM, then SIGKILL after 10 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from supervisor import childutils

from bayes_app.procs.config import paths
from bayes_app.procs.status import rpc
from bayes_app.settings import get_settings

RECORDED = ("EXITED", "BACKOFF", "FATAL", "RUNNING")
KEEP_LINES = 2000
MAX_BYTES = 512 * 1024
LEFTOVER_GRACE_S = 10.0


def _say(message: str) -> None:
    print(f"bayes watchdog: {message}", file=sys.stderr, flush=True)


def parse(headers: dict[str, str], payload: str) -> dict[str, Any] | None:
    """A record for a PROCESS_STATE_* event worth keeping, else None."""
    state = headers.get("eventname", "").removeprefix("PROCESS_STATE_")
    if state not in RECORDED:
        return None
    fields = childutils.get_headers(payload.split("\n", 1)[0])
    rec: dict[str, Any] = {
        "ts": round(time.time(), 3),
        "process": fields.get("processname", ""),
        "group": fields.get("groupname", ""),
        "state": state,
        "from": fields.get("from_state", ""),
    }
    if "pid" in fields:
        rec["pid"] = int(fields["pid"])
    if state == "EXITED":
        rec["expected"] = fields.get("expected") == "1"
    elif state in ("BACKOFF", "FATAL"):
        rec["expected"] = False
    return rec


def exit_detail(log_tail: str, process: str) -> str:
    """supervisord's own words for the last exit of `process` in its log, e.g.
    "terminated by SIGKILL; not expected" or "exit status 75; expected"."""
    found = re.findall(rf"exited: {re.escape(process)} \(([^)\n]*)\)", log_tail)
    return found[-1] if found else ""


def append(events_path: Path, rec: dict[str, Any]) -> None:
    """Append one record; keep the file small (only this process writes it)."""
    events_path.parent.mkdir(parents=True, exist_ok=True)
    with open(events_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
    if events_path.stat().st_size > MAX_BYTES:
        lines = events_path.read_text(encoding="utf-8", errors="replace").splitlines()[-KEEP_LINES:]
        tmp = events_path.with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(tmp, events_path)


def descendants(pid: int, me: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.pid != me]
    except psutil.Error:
        return []


def leftovers(candidates: list[psutil.Process], program_pids: set[int]) -> list[psutil.Process]:
    """The candidates that are neither a live program nor below one (orphans re-parented to
    supervisord, and their children). List the candidates *before* asking for the live
    pids, so a program spawned in between is never taken for a leftover."""
    out = []
    for proc in candidates:
        try:
            chain = {proc.pid, *(a.pid for a in proc.parents())}
            if chain & program_pids or proc.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue  # already gone
        out.append(proc)
    return out


def _describe(proc: psutil.Process) -> str:
    try:
        return f"{proc.pid} {' '.join(proc.cmdline()[:4])}"
    except psutil.Error:
        return str(proc.pid)


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def stop_all(procs: list[psutil.Process], grace_s: float = LEFTOVER_GRACE_S) -> None:
    """SIGTERM, then SIGKILL whatever still runs after `grace_s` (zombies count as gone:
    supervisord reaps them)."""
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    deadline = time.monotonic() + grace_s
    while any(_running(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    for proc in procs:
        if _running(proc):
            with contextlib.suppress(psutil.Error):
                proc.kill()


class Watchdog:
    def __init__(self) -> None:
        settings = get_settings()
        self.data_path, self.secret = settings.data_path, settings.secret()
        self.events = paths(self.data_path).events
        self._wanted = threading.Event()
        threading.Thread(target=self._sweeper, name="leftovers", daemon=True).start()

    def _rpc(self):
        return rpc(self.data_path, self.secret, timeout=5).supervisor

    def handle(self, headers: dict[str, str], payload: str) -> None:
        rec = parse(headers, payload)
        if rec is None:
            return
        if rec["state"] in ("EXITED", "BACKOFF", "FATAL"):
            try:
                rec["detail"] = exit_detail(self._rpc().readLog(-16384, 0), rec["process"])
            except Exception:  # noqa: BLE001 - the record matters more than its detail
                rec["detail"] = ""
            self._wanted.set()
        append(self.events, rec)

    def _sweeper(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            self.sweep()

    def sweep(self) -> None:
        """Stop what dead programs left behind."""
        try:
            candidates = descendants(os.getppid(), os.getpid())
            if not candidates:
                return
            live = {i["pid"] for i in self._rpc().getAllProcessInfo() if i["pid"]}
            found = leftovers(candidates, live | {os.getpid()})
            if found:
                _say(f"stopping {len(found)} leftover process(es): " + "; ".join(_describe(p) for p in found))
                stop_all(found)
        except Exception as err:  # noqa: BLE001 - never let the listener die over a sweep
            _say(f"leftover sweep failed: {type(err).__name__}: {err}")

    def run(self) -> None:
        self._wanted.set()  # whatever was left while this listener was down
        while True:
            headers, payload = childutils.listener.wait(sys.stdin, sys.stdout)
            try:
                self.handle(headers, payload)
            except Exception as err:  # noqa: BLE001
                _say(f"event not recorded: {type(err).__name__}: {err}")
            childutils.listener.ok(sys.stdout)


def main() -> None:
    Watchdog().run()


if __name__ == "__main__":
    main()
