"""The Tables pages: the list with the new-table form, and one table's grid with its cell panel.

Cell values and quotes are the papers' own text: shown as plain text, never as markup."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from bayes_app.usecases.schemas.tables import TableSummary
from components.shell import stack_on_phone
from state.tables import TYPES, ColumnForm, TablesState, TableState


def _type_select(value: rx.Var[str] | str, on_change: Any, id_: str) -> rx.Component:
    return rx.select.root(
        rx.select.trigger(aria_label="Answer type", id=id_),
        rx.select.content(*[rx.select.item(label, value=v) for v, label in TYPES]),
        value=value,
        on_change=on_change,
    )


def _column_chip(c: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.badge(c["type"], variant="soft"),
        rx.text(c["question"], size="2"),
        rx.icon_button(
            rx.icon("x", size=12),
            size="1",
            variant="ghost",
            aria_label="Remove column",
            on_click=TablesState.remove_new_column(c["key"]),
        ),
        align="center",
        class_name="new-column",
    )


def new_table_form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading("New table", size="4"),
            rx.text(
                "One row per paper of a collection, one column per question; every filled cell quotes the "
                "sentence it rests on.",
                size="2",
                color_scheme="gray",
            ),
            rx.input(
                placeholder="Title, e.g. Exercise trials",
                value=TablesState.new_title,
                on_change=TablesState.set_new_title,
                id="table-title",
                width="100%",
            ),
            rx.cond(
                TablesState.collections.length() > 0,
                rx.select.root(
                    rx.select.trigger(placeholder="Collection", id="table-collection", width="100%"),
                    rx.select.content(
                        rx.foreach(TablesState.collections, lambda c: rx.select.item(c["name"], value=c["id"]))
                    ),
                    value=TablesState.new_collection,
                    on_change=TablesState.set_new_collection,
                ),
                rx.text("Make a collection in the Library first: a table's rows are its papers.", size="2"),
            ),
            rx.text("Columns", weight="bold", size="2"),
            rx.vstack(rx.foreach(TablesState.new_columns, _column_chip), spacing="1", width="100%"),
            column_form(
                TablesState,
                "Another question, e.g. What was the intervention?",
                rx.button("Add column", variant="soft", on_click=TablesState.add_new_column, id="new-column-add"),
                "new-column",
            ),
            rx.cond(TablesState.form_error != "", rx.text(TablesState.form_error, color_scheme="red", size="2")),
            rx.button("Make table", on_click=TablesState.create, id="table-create"),
            spacing="3",
            width="100%",
        ),
        width="100%",
        max_width="760px",
    )


def _table_row(t: ObjectVar[TableSummary]) -> rx.Component:
    return rx.link(
        rx.card(
            rx.hstack(
                rx.icon("table-2", size=16),
                rx.text(t.title, weight="bold"),
                rx.spacer(),
                rx.badge(t.role, variant="soft"),
                rx.text(t.columns, " columns", size="2", color_scheme="gray"),
                align="center",
                width="100%",
            )
        ),
        href="/tables/" + t.id,
        underline="none",
        width="100%",
        class_name="table-link",
    )


def tables_list() -> rx.Component:
    return rx.vstack(
        rx.cond(
            TablesState.tables.length() > 0,
            rx.vstack(rx.foreach(TablesState.tables, _table_row), width="100%", max_width="760px"),
            rx.text("No tables yet.", color_scheme="gray", id="tables-empty"),
        ),
        new_table_form(),
        spacing="4",
        width="100%",
    )


# ---- one table -------------------------------------------------------------------------------
def _toolbar() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.cond(
                TableState.can_edit,
                rx.cond(
                    TableState.filling,
                    rx.button("Stop", color_scheme="red", variant="soft", on_click=TableState.stop, id="table-stop"),
                    rx.button("Fill", on_click=TableState.fill_all, id="table-fill"),
                ),
            ),
            rx.link(rx.button("CSV", variant="soft"), href=TableState.csv_url, id="table-csv", is_external=True),
            rx.link(rx.button("Excel", variant="soft"), href=TableState.xlsx_url, id="table-xlsx", is_external=True),
            rx.text(TableState.fill_note, size="2", id="table-fill-note"),
            wrap="wrap",
            align="center",
            spacing="2",
        ),
        rx.cond(
            TableState.filling,
            rx.hstack(
                rx.progress(value=TableState.progress, width="220px", id="table-progress"),
                rx.text(TableState.done, " of ", TableState.total, " papers", size="2"),
                align="center",
            ),
        ),
        rx.cond(TableState.error != "", rx.text(TableState.error, color_scheme="red", size="2", id="table-error")),
        stack_on_phone(
            rx.input(
                placeholder="Filter rows",
                value=TableState.filter_text,
                on_change=TableState.set_filter,
                id="table-filter",
                flex="1",
            ),
            rx.select.root(
                rx.select.trigger(placeholder="Sort by", id="table-sort"),
                rx.select.content(
                    rx.select.item("Paper", value="paper"),
                    rx.foreach(TableState.columns, lambda c: rx.select.item(c.question, value=c.key)),
                ),
                value=TableState.sort_key,
                on_change=TableState.set_sort,
            ),
            rx.checkbox(
                "Only rows with gaps",
                checked=TableState.only_missing,
                on_change=TableState.set_only_missing,
                id="table-only-missing",
            ),
            gap="0.5em",
            align_items=rx.breakpoints(initial="stretch", md="center"),
            width="100%",
        ),
        rx.foreach(
            TableState.screening,
            lambda s: rx.text(rx.text.strong(s["column"], ": "), s["line"], size="2", class_name="screening"),
        ),
        spacing="2",
        width="100%",
    )


def _cell_panel() -> rx.Component:
    return rx.cond(
        TableState.sel_document != "",
        rx.card(
            rx.vstack(
                rx.text(TableState.sel_paper, weight="bold", size="2"),
                rx.text(TableState.sel_question, size="2", color_scheme="gray"),
                rx.heading(TableState.sel_value, size="4", id="cell-value"),
                rx.cond(
                    TableState.sel_quote != "",
                    rx.vstack(
                        rx.blockquote(TableState.sel_quote, size="2", id="cell-quote"),
                        rx.link("Open at page ", TableState.sel_page, href=TableState.sel_link, id="cell-open"),
                        spacing="1",
                    ),
                    rx.text(
                        rx.cond(
                            TableState.sel_status == "edited",
                            "Entered by hand.",
                            "No sentence of this paper states it.",
                        ),
                        size="2",
                        color_scheme="gray",
                    ),
                ),
                rx.cond(
                    TableState.can_edit,
                    rx.hstack(
                        rx.input(
                            value=TableState.sel_edit, on_change=TableState.set_sel_edit, id="cell-edit", flex="1"
                        ),
                        rx.button("Save", variant="soft", on_click=TableState.save_edit, id="cell-save"),
                        width="100%",
                    ),
                ),
                spacing="2",
                width="100%",
            ),
            width=rx.breakpoints(initial="100%", md="340px"),
            flex_shrink="0",
            id="cell-panel",
        ),
    )


def column_form(state: type[ColumnForm], placeholder: str, button: rx.Component, id_: str) -> rx.Component:
    """A column's question, its answer type and (for a choice) its options, then `button`."""
    return stack_on_phone(
        rx.input(
            placeholder=placeholder,
            value=state.col_question,
            on_change=state.set_col_question,
            id=f"{id_}-question",
            flex="1",
        ),
        _type_select(state.col_type, state.set_col_type, f"{id_}-type"),
        rx.cond(
            state.col_type == "choice",
            rx.input(placeholder="Options, comma-separated", value=state.col_choices, on_change=state.set_col_choices),
        ),
        button,
        gap="0.5em",
        width="100%",
    )


def _add_column() -> rx.Component:
    return rx.cond(
        TableState.can_edit,
        column_form(
            TableState,
            "Add a column: a question for every paper",
            rx.button("Add and fill", variant="soft", on_click=TableState.add_column, id="add-column"),
            "add-column",
        ),
    )


def _member(m: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.text(m["email"], size="2"),
        rx.badge(m["role"], variant="soft"),
        rx.button(
            "Remove",
            size="1",
            variant="ghost",
            color_scheme="red",
            on_click=TableState.unshare(m["user_id"]),
            aria_label="Remove member",
        ),
        align="center",
        class_name="table-member",
    )


def _share() -> rx.Component:
    """The owner's Share section: members see the table and its quoted papers (editors may fill and edit)."""
    return rx.cond(
        TableState.is_owner,
        rx.card(
            rx.vstack(
                rx.text("Share", weight="bold", size="2"),
                rx.text(
                    "Members read the table and open its papers at the quoted page; an editor may also fill, "
                    "add columns and edit cells.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.foreach(TableState.share_members, _member),
                stack_on_phone(
                    rx.input(
                        placeholder="E-mail of a registered user",
                        value=TableState.share_email,
                        on_change=TableState.set_share_email,
                        id="table-share-email",
                        flex="1",
                    ),
                    rx.select.root(
                        rx.select.trigger(aria_label="Role", id="table-share-role"),
                        rx.select.content(
                            rx.select.item("Viewer", value="viewer"), rx.select.item("Editor", value="editor")
                        ),
                        value=TableState.share_role,
                        on_change=TableState.set_share_role,
                    ),
                    rx.button("Share", variant="soft", on_click=TableState.share, id="table-share"),
                    gap="0.5em",
                    width="100%",
                ),
                rx.cond(
                    TableState.share_error != "",
                    rx.text(TableState.share_error, color_scheme="red", size="2", id="table-share-error"),
                ),
                spacing="2",
                width="100%",
            ),
            width="100%",
            max_width="760px",
            id="table-share-card",
        ),
    )


def table_view() -> rx.Component:
    return rx.vstack(
        _toolbar(),
        stack_on_phone(
            rx.box(
                rx.data_editor(
                    columns=TableState.grid_columns,
                    data=TableState.grid_data,
                    on_cell_clicked=TableState.select_cell,
                    on_cell_edited=TableState.cell_edited,
                    row_height=44,
                    freeze_columns=1,
                    row_markers="number",
                    smooth_scroll_x=True,
                    smooth_scroll_y=True,
                    width="100%",
                    height="60vh",
                ),
                id="table-grid",
                flex="1",
                min_width="0",
                width="100%",
            ),
            _cell_panel(),
            gap="1em",
            width="100%",
        ),
        _add_column(),
        _share(),
        spacing="3",
        width="100%",
    )
