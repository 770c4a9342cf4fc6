"""Admin page (admin-only: hidden from the navigation and refused on load for others):
the supervised processes, the model connection (with its check), the credit dashboard and the
users."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from components import admin as parts
from components.processes import processes
from components.shell import shell
from state.admin import AdminState
from state.auth import AuthState


def _user_row(u: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(rx.table.cell(u["email"]), rx.table.cell(u["role"]), rx.table.cell(u["created"]))


def admin_page() -> rx.Component:
    return shell(
        "Admin",
        rx.cond(
            AuthState.is_admin,
            rx.vstack(
                rx.heading("Processes", size="5", id="admin-processes-heading"),
                processes(),
                parts.model_connection(),
                rx.hstack(
                    rx.heading("Credit dashboard", size="5", id="admin-credits-heading"),
                    rx.button(
                        rx.icon("refresh-cw", size=14),
                        "Refresh",
                        size="1",
                        variant="soft",
                        on_click=AdminState.refresh,
                        id="admin-refresh",
                    ),
                    align="center",
                ),
                parts.reconciliation(),
                parts.grant_form(),
                parts.balances(),
                parts.reserves(),
                parts.charts(),
                parts.drill_down(),
                parts.price_editor(),
                parts.shares(),
                rx.heading("Users", size="4"),
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            rx.table.column_header_cell("E-mail"),
                            rx.table.column_header_cell("Role"),
                            rx.table.column_header_cell("Created"),
                        )
                    ),
                    rx.table.body(rx.foreach(AdminState.users, _user_row)),
                    id="admin-users",
                    width="100%",  # scrolls inside itself on a phone (the page does not)
                ),
                width="100%",
                spacing="4",
            ),
            rx.callout("Administrators only.", icon="shield-alert", color_scheme="red"),
        ),
    )
