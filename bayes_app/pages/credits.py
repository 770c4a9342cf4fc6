"""The user's Credits page: balance, available, held, and one history row per run."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from components.shell import shell
from state.credits import CreditsState


def _stat(label: str, value: rx.Var[str] | str, exact: rx.Var[str] | str, id_: str) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.text(label, size="2", color_scheme="gray"),
            rx.heading(value, size="6", id=id_, title=exact),
            spacing="1",
        ),
        min_width="160px",
    )


def _row(r: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(r["title"]),
        rx.table.cell(rx.badge(r["status"], variant="soft")),
        rx.table.cell(rx.text(r["charged"], title=r["charged_exact"], class_name="history-charged")),
        rx.table.cell(rx.text(r["amount"], title=r["amount_exact"], class_name="history-amount")),
        rx.table.cell(r["date"]),
        class_name="history-row",
    )


def credits_page() -> rx.Component:
    return shell(
        "Credits",
        rx.hstack(
            _stat("Balance", CreditsState.balance, CreditsState.exact["balance"], "credits-balance"),
            _stat("Available", CreditsState.available, CreditsState.exact["available"], "credits-available"),
            _stat("Held for running work", CreditsState.held, CreditsState.exact["held"], "credits-held"),
            spacing="4",
            wrap="wrap",
        ),
        rx.cond(CreditsState.buys != "", rx.text(CreditsState.buys, size="2", color_scheme="gray", id="credits-buys")),
        rx.heading("History", size="4"),
        rx.cond(
            CreditsState.history.length() > 0,  # type: ignore[attr-defined]
            rx.table.root(
                rx.table.header(
                    rx.table.row(
                        rx.table.column_header_cell("What"),
                        rx.table.column_header_cell("Status"),
                        rx.table.column_header_cell("Charged"),
                        rx.table.column_header_cell("Balance change"),
                        rx.table.column_header_cell("Date"),
                    )
                ),
                rx.table.body(rx.foreach(CreditsState.history, _row)),
                id="credits-history",
                width="100%",
            ),
            rx.text("No credit activity yet.", color_scheme="gray", id="credits-empty"),
        ),
    )
