"""Admin page state: the processes `make run` supervises, their restarts and exits."""

from __future__ import annotations

from datetime import UTC, datetime

import reflex as rx

from state.auth import AuthState
from state.offloop import off_loop


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _uptime(seconds: int | None) -> str:
    if seconds is None:
        return "—"
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h}h {m:02d}m" if h else f"{m}m {s:02d}s"


def _kind(event: dict) -> str:
    if not event["expected"]:
        return "crash"
    return "recycled (memory ceiling)" if event["process"].startswith("worker") else "exited normally"


class ProcessesState(AuthState):
    supervised: bool = False
    status: str = ""
    problem: str = ""
    programs: list[dict[str, str]] = []
    restarts: list[dict[str, str]] = []

    @rx.event
    @off_loop
    def load(self):
        if self._load_user() and self.is_admin:
            self._refresh()

    @rx.event
    @off_loop
    def refresh(self):
        if self._load_user() and self.is_admin:
            self._refresh()

    def _refresh(self) -> None:
        from bayes_app.usecases import system

        report = system.supervised_processes()
        self.supervised = report is not None
        if report is None:
            self.status, self.problem, self.programs, self.restarts = "", "", [], []
            return
        self.status = report["status"]
        self.problem = report.get("error", "")
        self.programs = [
            {
                "name": p["name"],
                "state": p["state"],
                "pid": str(p["pid"] or "—"),
                "uptime": _uptime(p["uptime_s"]),
                "restarts": str(p["restarts"]),
                "crashes": str(p["crashes"]),
                "recycles": str(p["recycles"]),
                "last_exit": (f"{_when(p['last_exit']['at'])}: {p['last_exit']['detail']}" if p["last_exit"] else "—"),
            }
            for p in report.get("programs", [])
        ]
        self.restarts = [
            {"at": _when(e["at"]), "process": e["process"], "detail": e["detail"] or "—", "kind": _kind(e)}
            for e in reversed(report.get("recent_restarts", []))
        ]
