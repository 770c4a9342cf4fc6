"""The Tables pages: your tables and a new one (/tables), and one table's grid (/tables/{id})."""

from __future__ import annotations

import reflex as rx

from components.shell import shell
from components.tables import table_view, tables_list
from state.tables import TableState


def tables_page() -> rx.Component:
    return shell("Tables", tables_list())


def table_page() -> rx.Component:
    return shell(
        "Table",
        rx.hstack(
            rx.link("← Tables", href="/tables", white_space="nowrap"),
            rx.heading(TableState.title, size="5", id="table-heading"),
            align="center",
            spacing="3",
            wrap="wrap",
        ),
        table_view(),
    )
