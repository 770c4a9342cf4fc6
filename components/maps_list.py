"""The Maps page's list: create, open, rename and delete maps."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from state.maps import WHOLE_LIBRARY, MapsState


# ---- maps list --------------------------------------------------------------------------------
def new_map_form() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                name="title",
                value=MapsState.new_title,
                on_change=MapsState.set_new_title,
                placeholder="A research question or a title",
                id="new-map-title",
                width="28em",
            ),
            rx.select.root(  # optional scope: the map's runs research only this collection
                rx.select.trigger(id="new-map-scope"),
                rx.select.content(
                    rx.select.item("Whole library", value=WHOLE_LIBRARY),
                    rx.foreach(MapsState.scopes, lambda c: rx.select.item(c["name"], value=c["id"])),
                ),
                value=MapsState.new_scope,
                on_change=MapsState.set_new_scope,
            ),
            rx.button(rx.icon("plus", size=14), "New map", type="submit", id="new-map"),
            align="center",
            wrap="wrap",
        ),
        on_submit=MapsState.create,
        width="100%",
    )


def _map_row(m: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(
            rx.cond(
                MapsState.rename_id == m["id"],
                rx.form(
                    rx.hstack(
                        rx.input(
                            name="title",
                            value=MapsState.rename_title,
                            on_change=MapsState.set_rename_title,
                            id="rename-input",
                            size="1",
                            width="22em",
                        ),
                        rx.button("Save", type="submit", size="1", id="rename-save"),
                        rx.button("Cancel", type="button", size="1", variant="soft", on_click=MapsState.cancel_rename),
                    ),
                    on_submit=MapsState.save_rename,
                ),
                rx.hstack(
                    rx.link(m["title"], href="/maps/" + m["id"], class_name="map-open", weight="medium"),
                    rx.cond(
                        m["new_papers"] != "",
                        rx.link(
                            rx.badge(
                                m["new_papers"],
                                rx.cond(m["new_papers"] == "1", " new paper may", " new papers may"),
                                " change this map",
                                color_scheme="amber",
                            ),
                            href="/maps/" + m["id"],
                            class_name="map-new-papers",
                        ),
                    ),
                    align="center",
                    wrap="wrap",
                ),
            )
        ),
        rx.table.cell(m["nodes"], class_name="map-nodes"),
        rx.table.cell(m["updated"], class_name="map-updated"),
        rx.table.cell(
            rx.hstack(
                rx.icon_button(
                    rx.icon("pencil", size=14),
                    size="1",
                    variant="ghost",
                    class_name="map-rename",
                    title="Rename",
                    on_click=MapsState.start_rename(m["id"], m["title"]),
                ),
                rx.icon_button(
                    rx.icon("trash-2", size=14),
                    size="1",
                    variant="ghost",
                    color_scheme="red",
                    class_name="map-delete",
                    title="Delete",
                    on_click=MapsState.ask_delete(m["id"], m["title"]),
                ),
            )
        ),
        class_name="map-row",
    )


def maps_table() -> rx.Component:
    return rx.cond(
        MapsState.maps.length() > 0,
        rx.table.root(
            rx.table.header(
                rx.table.row(
                    rx.table.column_header_cell("Map"),
                    rx.table.column_header_cell("Nodes"),
                    rx.table.column_header_cell("Last edited (UTC)"),
                    rx.table.column_header_cell(""),
                )
            ),
            rx.table.body(rx.foreach(MapsState.maps, _map_row)),
            width="100%",
            id="maps-table",
        ),
        rx.callout(
            "No maps yet. Name a research question above to start one.", icon="info", color_scheme="gray", id="no-maps"
        ),
    )


def _shared_row(m: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(rx.link(m["title"], href="/maps/" + m["id"], class_name="shared-open", weight="medium")),
        rx.table.cell(rx.text(m["owner"], size="2"), class_name="shared-owner"),
        rx.table.cell(rx.badge(m["role"], color_scheme="blue"), class_name="shared-role"),
        rx.table.cell(m["updated"], class_name="map-updated"),
        class_name="shared-row",
    )


def shared_table() -> rx.Component:
    """Maps others shared with me, with my role (only when there are some)."""
    return rx.cond(
        MapsState.shared.length() > 0,
        rx.vstack(
            rx.heading("Shared with me", size="4", margin_top="1em"),
            rx.table.root(
                rx.table.header(
                    rx.table.row(
                        rx.table.column_header_cell("Map"),
                        rx.table.column_header_cell("Owner"),
                        rx.table.column_header_cell("My role"),
                        rx.table.column_header_cell("Last edited (UTC)"),
                    )
                ),
                rx.table.body(rx.foreach(MapsState.shared, _shared_row)),
                width="100%",
            ),
            width="100%",
            id="shared-maps",
        ),
    )


def delete_map_dialog() -> rx.Component:
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title("Delete this map?"),
            rx.alert_dialog.description(
                rx.text(
                    "“",
                    MapsState.delete_title,
                    "” and all its nodes and citations are deleted; a run working on it is stopped.",
                )
            ),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Keep", variant="soft", on_click=MapsState.cancel_delete)),
                rx.alert_dialog.action(
                    rx.button("Delete", color_scheme="red", on_click=MapsState.confirm_delete, id="map-delete-confirm")
                ),
                justify="end",
                spacing="3",
                margin_top="1em",
            ),
        ),
        open=MapsState.delete_id != "",
    )
