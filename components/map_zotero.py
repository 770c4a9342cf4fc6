"""The map toolbar's Zotero menu: send the map to Zotero as notes, add my Zotero highlights."""

from __future__ import annotations

import reflex as rx

from state.map_zotero import MapZoteroState as Z


def zotero_menu() -> rx.Component:
    return rx.popover.root(
        rx.popover.trigger(
            rx.button(
                rx.icon("book-marked", size=14), "Zotero", size="1", variant="soft", id="btn-zotero", on_click=Z.z_open
            )
        ),
        rx.popover.content(
            rx.vstack(
                rx.button(
                    rx.icon("highlighter", size=14),
                    "Add my Zotero highlights",
                    size="2",
                    variant="soft",
                    on_click=Z.z_add_highlights,
                    id="zotero-add-highlights",
                    width="100%",
                ),
                rx.separator(size="4"),
                rx.cond(
                    Z.z_libraries.length() > 0,  # type: ignore[attr-defined]
                    rx.vstack(
                        rx.text("Send this map to", size="1", color_scheme="gray"),
                        rx.el.select(
                            rx.foreach(Z.z_libraries, lambda x: rx.el.option(x["name"], value=x["id"])),
                            value=Z.z_library_id,
                            on_change=Z.z_set_library,
                            id="zotero-send-library",
                            style={"width": "100%"},
                        ),
                        rx.checkbox(
                            "Also a note on each cited item",
                            checked=Z.z_child_notes,
                            on_change=Z.z_set_child_notes,
                            id="zotero-child-notes",
                            size="1",
                        ),
                        rx.button(
                            rx.icon("send", size=14),
                            "Send to Zotero",
                            size="2",
                            on_click=Z.z_send,
                            id="zotero-send",
                            width="100%",
                            loading=Z.z_busy,
                        ),
                        spacing="2",
                        width="100%",
                    ),
                    rx.text(
                        "Connect a Zotero library on the Library page to send maps to it.",
                        size="1",
                        color_scheme="gray",
                    ),
                ),
                rx.cond(Z.z_message != "", rx.text(Z.z_message, size="1", id="zotero-map-message")),
                rx.cond(Z.z_error != "", rx.text(Z.z_error, size="1", color_scheme="red", id="zotero-map-error")),
                spacing="2",
                width="18em",
            ),
            side="bottom",
            align="end",
        ),
    )
