"""The map editor's node panel: the selected node's fields, citations and export, the library
search to cite from, and the delete confirmation."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from bayes_app.usecases import runs as app_runs
from components.map_updates import challenge_lines
from components.mindmap import download_link
from state.mindmap import EDITABLE_KINDS, MapState


def _citation(c: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(c["title"], size="2", weight="medium", trim="end", class_name="citation-paper"),
                rx.text(
                    "p. ",
                    c["page"],
                    size="1",
                    color_scheme="gray",
                    class_name="citation-page",
                    white_space="nowrap",  # never "p / . / 2" in a narrow sheet
                    flex_shrink="0",
                ),
                rx.cond(
                    c["language"] != "",
                    rx.badge(
                        c["language"],
                        size="1",
                        variant="soft",
                        color_scheme="gray",
                        class_name="citation-language",
                        title="The passage's language (quoted as written)",
                    ),
                ),
                rx.spacer(),
                rx.cond(
                    MapState.can_edit,
                    rx.icon_button(
                        rx.icon("x", size=12),
                        size="1",
                        variant="ghost",
                        title="Remove citation",
                        on_click=MapState.remove_citation(c["id"]),
                        class_name="citation-remove",
                    ),
                ),
                width="100%",
                align="center",
            ),
            rx.text("“", c["quote"], "”", size="1", class_name="citation-quote"),
            rx.cond(
                c["cited_in_library"] != "",
                rx.text(c["cited_in_library"], size="1", color_scheme="gray", class_name="citation-cited-by"),
            ),
            rx.hstack(
                rx.link("Open at page", href=c["href"], size="2", class_name="open-at-page"),
                rx.spacer(),
                rx.cond(
                    c["label"] != "",
                    rx.badge(
                        c["label"],
                        " ",
                        c["score"],
                        class_name="citation-support",
                        color_scheme=rx.match(c["level"], ("good", "green"), ("weak", "amber"), "red"),
                    ),
                ),
                width="100%",
                align="center",
            ),
            rx.cond(
                (c["rewrite"] != "") & MapState.can_edit,
                rx.hstack(
                    rx.text("Suggested: ", rx.el.i(c["rewrite"]), size="1", class_name="citation-rewrite"),
                    rx.button(
                        "Accept",
                        size="1",
                        variant="soft",
                        class_name="accept-rewrite",
                        on_click=MapState.accept_rewrite(c["id"]),
                    ),
                    align="center",
                    width="100%",
                ),
            ),
            spacing="1",
            width="100%",
        ),
        size="1",
        width="100%",
        class_name="citation",
    )


def node_export() -> rx.Component:
    """Export links for the selected node's subtree (the backend's `export.<fmt>?node_id=`)."""
    query = "?node_id=" + MapState.selected_id + "&style=" + MapState.export_style
    return rx.hstack(
        rx.text("Export this branch", size="1", color_scheme="gray"),
        rx.spacer(),
        download_link("Markdown", MapState.export_base + ".md" + query, "branch.md", "export-node-md"),
        download_link("DOCX", MapState.export_base + ".docx" + query, "branch.docx", "export-node-docx"),
        width="100%",
        align="center",
        spacing="2",
        id="node-export",
    )


def node_panel() -> rx.Component:
    return rx.cond(
        MapState.selected_id != "",
        rx.vstack(
            rx.hstack(
                rx.cond(
                    MapState.sel_is_root | ~MapState.can_edit,  # a viewer sees the kind, not a menu
                    rx.badge(rx.cond(MapState.sel_is_root, "question", MapState.sel_kind), id="node-kind-label"),
                    rx.select(
                        EDITABLE_KINDS,
                        value=MapState.sel_kind,
                        on_change=MapState.set_sel_kind,
                        size="1",
                        id="node-kind",
                    ),
                ),
                rx.badge(MapState.sel_origin, variant="soft", color_scheme="gray"),
                rx.spacer(),
                rx.icon_button(
                    rx.icon("x", size=14),
                    size="1",
                    variant="ghost",
                    on_click=MapState.clear_selection,
                    id="node-close",
                    aria_label="Close",
                ),
                width="100%",
                align="center",
            ),
            challenge_lines(),
            rx.text_area(
                value=MapState.sel_title,
                on_change=lambda v: MapState.set_sel_title(v, MapState.selected_id).debounce(250),
                id="node-title",
                read_only=~MapState.can_edit,
                placeholder="Title",
                width="100%",
                rows="2",
                size="2",
            ),
            rx.text_area(
                value=MapState.sel_body,
                on_change=lambda v: MapState.set_sel_body(v, MapState.selected_id).debounce(400),
                id="node-body",
                read_only=~MapState.can_edit,
                placeholder="Notes",
                width="100%",
                rows="3",
                size="1",
            ),
            rx.hstack(
                rx.text("Citations", weight="bold", size="2"),
                rx.spacer(),
                rx.cond(
                    MapState.can_edit,
                    rx.button(
                        app_runs.label("check_support"),
                        size="1",
                        variant="soft",
                        on_click=MapState.check_support,
                        id="btn-check-support",
                        disabled=MapState.sel_citations.length() == 0,
                    ),
                ),
                width="100%",
                align="center",
            ),
            rx.cond(
                MapState.sel_citations.length() > 0,
                rx.vstack(
                    rx.foreach(MapState.sel_citations, _citation), width="100%", spacing="2", id="node-citations"
                ),
                rx.text(
                    rx.cond(
                        MapState.is_owner,
                        "No citations. Search the library below and attach a passage.",
                        "No citations.",
                    ),
                    size="1",
                    color_scheme="gray",
                ),
            ),
            node_export(),
            width="100%",
            spacing="2",
            id="node-panel",
            class_name="mm-sheet",
        ),
        rx.text(
            rx.cond(
                MapState.can_edit,
                "Select a node to edit it and see its citations.",
                "Select a node to see its citations.",
            ),
            size="2",
            color_scheme="gray",
        ),
    )


def search_panel() -> rx.Component:
    return rx.vstack(
        rx.text("Library", weight="bold", size="2"),
        rx.form(
            rx.hstack(
                rx.input(
                    name="q",
                    value=MapState.search_q,
                    on_change=MapState.set_search_q,
                    id="map-search-q",
                    placeholder="Search your library",
                    size="1",
                    width="100%",
                ),
                rx.button("Search", type="submit", size="1", id="map-search-go"),
                width="100%",
            ),
            on_submit=MapState.search_library,
            width="100%",
        ),
        rx.cond(MapState.search_error != "", rx.text(MapState.search_error, size="1", color_scheme="gray")),
        rx.foreach(
            MapState.search_hits,
            lambda h: rx.box(
                rx.hstack(
                    rx.text(h["title"], size="1", weight="medium", trim="end"),
                    rx.text("p. ", h["page"], size="1", color_scheme="gray"),
                    rx.spacer(),
                    rx.button(
                        "Attach",
                        size="1",
                        variant="soft",
                        class_name="attach-hit",
                        on_click=MapState.attach(h["chunk_id"], h["quote"]),
                        disabled=MapState.selected_id == "",
                    ),
                    width="100%",
                    align="center",
                ),
                rx.text(h["quote"], size="1", color_scheme="gray"),
                class_name="search-hit",
                width="100%",
                padding_y="0.3em",
                border_bottom="1px solid var(--gray-a4)",
            ),
        ),
        width="100%",
        spacing="2",
    )


def delete_node_dialog() -> rx.Component:
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title("Delete this node and everything under it?"),
            rx.alert_dialog.description("Its children and their citations go too. Ctrl/Cmd-Z brings them back."),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Keep", variant="soft", on_click=MapState.cancel_delete)),
                rx.alert_dialog.action(
                    rx.button("Delete", color_scheme="red", on_click=MapState.delete_selected, id="node-delete-confirm")
                ),
                justify="end",
                spacing="3",
                margin_top="1em",
            ),
        ),
        open=MapState.confirm_delete,
    )
