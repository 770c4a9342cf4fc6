"""Admin page (admin-only: hidden from the navigation and refused on load for others)."""

from __future__ import annotations

import reflex as rx

from components.shell import shell
from state.admin import AdminState
from state.auth import AuthState


def _user_row(u: rx.Var) -> rx.Component:
    return rx.table.row(rx.table.cell(u["email"]), rx.table.cell(u["role"]),
                        rx.table.cell(u["created"]))


def admin_page() -> rx.Component:
    return shell(
        "Admin",
        rx.cond(
            AuthState.is_admin,
            rx.vstack(
                rx.heading("Users", size="4"),
                rx.table.root(
                    rx.table.header(rx.table.row(
                        rx.table.column_header_cell("E-mail"), rx.table.column_header_cell("Role"),
                        rx.table.column_header_cell("Created"))),
                    rx.table.body(rx.foreach(AdminState.users, _user_row)),
                    id="admin-users",
                ),
                rx.text("The credit dashboard arrives with the runs milestone.", size="2",
                        color_scheme="gray"),
                width="100%",
            ),
            rx.callout("Administrators only.", icon="shield-alert", color_scheme="red"),
        ),
    )
