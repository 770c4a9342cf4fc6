"""The admin dashboard's panel of supervised processes (restarts, crashes, last exits)."""

from __future__ import annotations

import reflex as rx

from components.admin import cells, section, table
from state.processes import ProcessesState


def processes() -> rx.Component:
    return section(
        "Supervised programs",
        rx.cond(
            ProcessesState.supervised,
            rx.vstack(
                rx.hstack(
                    rx.badge(
                        ProcessesState.status,
                        id="processes-status",
                        color_scheme=rx.cond(ProcessesState.status == "ok", "green", "orange"),
                    ),
                    rx.text(ProcessesState.problem, size="2", color_scheme="orange"),
                    rx.button(
                        rx.icon("refresh-cw", size=14),
                        "Refresh",
                        size="1",
                        variant="soft",
                        on_click=ProcessesState.refresh,
                        id="processes-refresh",
                    ),
                    align="center",
                ),
                table(
                    "admin-processes",
                    ["Process", "State", "PID", "Up", "Restarts (24 h)", "Crashes", "Recycled", "Last exit"],
                    ProcessesState.programs,  # type: ignore[arg-type]
                    lambda p: rx.table.row(
                        *cells(
                            p["name"],
                            p["state"],
                            p["pid"],
                            p["uptime"],
                            p["restarts"],
                            p["crashes"],
                            p["recycles"],
                            p["last_exit"],
                        )
                    ),
                    "No processes reported.",
                ),
                rx.heading("Recent restarts", size="3"),
                table(
                    "admin-restarts",
                    ["When", "Process", "Kind", "Exit"],
                    ProcessesState.restarts,  # type: ignore[arg-type]
                    lambda e: rx.table.row(*cells(e["at"], e["process"], e["kind"], e["detail"])),
                    "No process has exited since the start.",
                ),
                width="100%",
                align="start",
            ),
            rx.text(
                "This app was not started by `make run`, so no supervisor reports here.", size="2", color_scheme="gray"
            ),
        ),
        id="admin-processes-panel",
    )
