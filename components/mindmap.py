"""Mindmap building blocks: the maps list, the editor toolbar, the node panel, runs, proposals."""

from __future__ import annotations

import reflex as rx

from components.map_zotero import zotero_menu
from components.mindmap_canvas import mindmap_canvas
from components.mindmap_outline import mindmap_outline
from components.safe_markdown import safe_markdown
from state.maps import MapsState
from state.mindmap import EDITABLE_KINDS, MapLiveState, MapState


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
            rx.button(rx.icon("plus", size=14), "New map", type="submit", id="new-map"),
            align="center",
            wrap="wrap",
        ),
        on_submit=MapsState.create,
        width="100%",
    )


def _map_row(m: rx.Var) -> rx.Component:
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
                rx.link(m["title"], href="/maps/" + m["id"], class_name="map-open", weight="medium"),
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


# ---- editor -----------------------------------------------------------------------------------
def _tool(icon: str, label: str, handler, id_: str, **kw) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(
            rx.icon(icon, size=15), on_click=handler, id=id_, variant="soft", size="2", aria_label=label, **kw
        ),
        content=label,
    )


def download_link(label: str, href: rx.Var | str, filename: str, id_: str) -> rx.Component:
    """A link to a backend file. Reflex renders `rx.el.a` as a React Router <Link>, which would
    route an /api/ URL inside the app (its 404 page): `reload_document` leaves the click to the
    browser, so the file downloads."""
    return rx.el.a(
        rx.button(label, size="1", variant="outline"), href=href, download=filename, id=id_, reload_document=True
    )


def toolbar() -> rx.Component:
    return rx.hstack(
        _tool("corner-down-right", "Add child (Tab)", MapState.add_child, "btn-add-child"),
        _tool(
            "list-plus",
            "Add sibling (Enter)",
            MapState.add_sibling,
            "btn-add-sibling",
            disabled=MapState.selected_id == "",
        ),
        _tool(
            "trash-2",
            "Delete subtree (Delete)",
            MapState.ask_delete,
            "btn-delete",
            disabled=MapState.selected_id == "",
            color_scheme="red",
        ),
        _tool(
            "chevrons-down-up",
            "Collapse / expand",
            MapState.toggle_selected,
            "btn-collapse",
            disabled=MapState.selected_id == "",
        ),
        _tool("network", "Auto-layout", MapState.layout, "btn-layout"),
        _tool("maximize", "Zoom to fit", MapState.fit, "btn-fit"),
        _tool("undo-2", "Undo (Ctrl/Cmd-Z)", MapState.undo, "btn-undo"),
        rx.separator(orientation="vertical", size="1"),
        rx.text(
            MapLiveState.node_count,
            rx.cond(MapLiveState.node_count == 1, " node", " nodes"),
            size="1",
            color_scheme="gray",
            id="node-count",
        ),
        rx.spacer(),
        rx.text("Export", size="1", color_scheme="gray"),
        download_link("Markdown", MapState.export_base + ".md", "mindmap.md", "export-md"),
        download_link("DOCX", MapState.export_base + ".docx", "mindmap.docx", "export-docx"),
        download_link("BibTeX", MapState.export_base + ".bib", "sources.bib", "export-bib"),
        zotero_menu(),
        width="100%",
        align="center",
        spacing="2",
        wrap="wrap",
    )


def run_bar() -> rx.Component:
    node_needed = MapState.selected_id == ""
    return rx.vstack(
        rx.hstack(
            rx.input(
                value=MapState.research_q,
                on_change=MapState.set_research_q,
                id="research-q",
                placeholder="Research question (empty: the map's question)",
                width="26em",
                size="2",
            ),
            rx.button(
                rx.icon("telescope", size=14),
                "Research",
                on_click=MapState.research,
                id="btn-research",
                disabled=MapState.running,
            ),
            rx.separator(orientation="vertical", size="1"),
            rx.button(
                "Expand",
                on_click=MapState.run_on_node("expand"),
                id="btn-expand",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                "Dive deeper",
                on_click=MapState.run_on_node("deepen"),
                id="btn-deepen",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                "Counter-evidence",
                on_click=MapState.run_on_node("counter"),
                id="btn-counter",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                "Synthesize",
                on_click=MapState.run_on_node("synthesize"),
                id="btn-synthesize",
                variant="soft",
                disabled=MapState.running,
            ),
            rx.button(
                "Restructure",
                on_click=MapState.run_on_node("restructure"),
                id="btn-restructure",
                variant="soft",
                disabled=MapState.running,
            ),
            rx.button(
                "Chapters",
                on_click=MapState.run_on_node("chapters"),
                id="btn-chapters",
                variant="soft",
                disabled=MapState.running,
            ),
            width="100%",
            align="center",
            spacing="2",
            wrap="wrap",
        ),
        run_status(),
        width="100%",
        spacing="2",
    )


def run_status() -> rx.Component:
    return rx.fragment(
        rx.cond(
            MapState.running,
            rx.hstack(
                rx.spinner(size="1"),
                rx.text(MapState.live_label, weight="medium", size="2"),
                rx.text(MapLiveState.run_note, size="2", color_scheme="gray", id="run-note"),
                rx.button(
                    rx.icon("square", size=12),
                    "Stop",
                    on_click=MapState.stop,
                    color_scheme="red",
                    size="1",
                    id="btn-stop",
                ),
                align="center",
                id="run-live",
                spacing="2",
            ),
        ),
        rx.cond(
            ~MapState.running & (MapState.run_outcome != ""),
            rx.hstack(
                rx.text(MapState.live_label, " run: ", size="2"),
                rx.badge(
                    MapState.run_outcome,
                    id="run-outcome",
                    color_scheme=rx.cond(MapState.run_outcome == "SUCCEEDED", "green", "orange"),
                ),
                rx.text(
                    "charged ",
                    rx.el.span(MapState.run_cost, id="run-cost", title=MapState.run_cost_exact),
                    size="2",
                    color_scheme="gray",
                ),
                rx.text(MapLiveState.run_note, size="1", color_scheme="gray", id="run-finding"),
                align="center",
                spacing="2",
                id="run-done",
            ),
        ),
    )


def message_box() -> rx.Component:
    return rx.vstack(
        rx.form(
            rx.hstack(
                rx.input(
                    name="message",
                    value=MapState.message_draft,
                    on_change=MapState.set_message_draft,
                    placeholder="Ask about the map, ask for an edit (“add a note …”), or ask for research",
                    id="message-input",
                    width="100%",
                ),
                rx.button(rx.icon("send", size=14), "Send", type="submit", id="btn-send", disabled=MapState.running),
                width="100%",
            ),
            on_submit=MapState.send_message,
            width="100%",
        ),
        rx.cond(MapState.run_route != "", rx.text("Route: ", rx.el.b(MapState.run_route, id="run-route"), size="2")),
        rx.cond(
            MapLiveState.run_text != "",
            rx.box(
                safe_markdown(MapLiveState.run_text),
                id="run-text",
                padding="0.6em",
                border="1px solid var(--gray-a5)",
                border_radius="8px",
                max_height="14em",
                overflow_y="auto",
                width="100%",
            ),
        ),
        width="100%",
        spacing="2",
    )


def proposals() -> rx.Component:
    """Restructure / Chapters previews in a drawer in the page's flow (under the run buttons,
    above the canvas: it covers nothing), collapsible to a badge; a reload shows the badge."""
    n = MapState.proposals.length()
    return rx.cond(
        n > 0,
        rx.cond(
            MapState.proposals_open,
            rx.box(
                rx.hstack(
                    rx.text(n, " pending proposal(s)", weight="medium", size="2"),
                    rx.spacer(),
                    rx.button(
                        rx.icon("chevron-up", size=14),
                        "Hide",
                        size="1",
                        variant="soft",
                        color_scheme="gray",
                        on_click=MapState.set_proposals_open(False),
                        id="proposal-collapse",
                    ),
                    width="100%",
                    align="center",
                    margin_bottom="0.5em",
                ),
                rx.vstack(_proposal_cards(), spacing="3", width="100%"),
                width="100%",
                max_height="45vh",
                overflow_y="auto",
                padding="0.75em",
                border_radius="12px",
                background="var(--color-panel-solid)",
                border="1px solid var(--gray-a6)",
                id="proposal-drawer",
            ),
            rx.button(
                rx.icon("layers", size=14),
                n,
                " proposal(s) pending: review",
                size="1",
                variant="soft",
                color_scheme="violet",
                on_click=MapState.set_proposals_open(True),
                id="proposal-badge",
            ),
        ),
    )


def _proposal_cards() -> rx.Component:
    return rx.foreach(
        MapState.proposals,
        lambda p: rx.card(
            rx.vstack(
                rx.hstack(
                    rx.badge(p["kind"]),
                    rx.text("Proposed regrouping (preview)", weight="medium", size="2"),
                    rx.spacer(),
                    rx.button(
                        "Accept", size="1", on_click=MapState.decide(p["id"], True), class_name="proposal-accept"
                    ),
                    rx.button(
                        "Reject",
                        size="1",
                        variant="soft",
                        color_scheme="gray",
                        on_click=MapState.decide(p["id"], False),
                        class_name="proposal-reject",
                    ),
                    width="100%",
                    align="center",
                ),
                rx.foreach(
                    p["groups"].to(list[dict]),
                    lambda g: rx.box(
                        rx.text(g["title"].to(str), weight="bold", size="2"),
                        rx.el.ul(rx.foreach(g["members"].to(list[str]), lambda t: rx.el.li(rx.text(t, size="1")))),
                        class_name="proposal-group",
                    ),
                ),
                spacing="2",
                width="100%",
            ),
            class_name="proposal",
            width="100%",
        ),
    )


def _citation(c: rx.Var) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(c["title"], size="2", weight="medium", trim="end", class_name="citation-paper"),
                rx.text("p. ", c["page"], size="1", color_scheme="gray", class_name="citation-page"),
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
                rx.icon_button(
                    rx.icon("x", size=12),
                    size="1",
                    variant="ghost",
                    title="Remove citation",
                    on_click=MapState.remove_citation(c["id"]),
                    class_name="citation-remove",
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
                c["rewrite"] != "",
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
    query = "?node_id=" + MapState.selected_id
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
                    MapState.sel_is_root,
                    rx.badge("question"),
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
            rx.text_area(
                value=MapState.sel_title,
                on_change=lambda v: MapState.set_sel_title(v, MapState.selected_id).debounce(250),
                id="node-title",
                placeholder="Title",
                width="100%",
                rows="2",
                size="2",
            ),
            rx.text_area(
                value=MapState.sel_body,
                on_change=lambda v: MapState.set_sel_body(v, MapState.selected_id).debounce(400),
                id="node-body",
                placeholder="Notes",
                width="100%",
                rows="3",
                size="1",
            ),
            rx.hstack(
                rx.text("Citations", weight="bold", size="2"),
                rx.spacer(),
                rx.button(
                    "Check support",
                    size="1",
                    variant="soft",
                    on_click=MapState.check_support,
                    id="btn-check-support",
                    disabled=MapState.sel_citations.length() == 0,
                ),
                width="100%",
                align="center",
            ),
            rx.cond(
                MapState.sel_citations.length() > 0,
                rx.vstack(
                    rx.foreach(MapState.sel_citations, _citation), width="100%", spacing="2", id="node-citations"
                ),
                rx.text("No citations. Search the library below and attach a passage.", size="1", color_scheme="gray"),
            ),
            node_export(),
            width="100%",
            spacing="2",
            id="node-panel",
            class_name="mm-sheet",
        ),
        rx.text("Select a node to edit it and see its citations.", size="2", color_scheme="gray"),
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


def canvas() -> rx.Component:
    return rx.box(
        mindmap_canvas(
            graph=MapLiveState.graph,
            selected_id=MapState.selected_id,
            fit_signal=MapLiveState.fit_signal,
            view_signal=MapLiveState.view_signal,
            layout_signal=MapLiveState.layout_signal,
            on_layout=MapState.apply_layout,
            on_select=MapState.select,
            on_toggle=MapState.toggle,
            on_key=MapState.key,
            on_drag_stop=MapState.drag_stop,
            on_pane_select=MapState.clear_selection,
        ),
        width="100%",
        height="68vh",
        border="1px solid var(--gray-a6)",
        border_radius="8px",
    )


def view_switch() -> rx.Component:
    """Canvas / Outline / Both (the outline is the default on phones)."""
    return rx.segmented_control.root(
        rx.segmented_control.item("Canvas", value="canvas", id="view-canvas"),
        rx.segmented_control.item("Outline", value="outline", id="view-outline"),
        rx.segmented_control.item("Both", value="both", id="view-both"),
        value=MapState.view_mode,
        on_change=MapState.set_view,
        size="1",
        id="view-switch",
    )


def _ol_tool(icon: str, label: str, cmd: str, id_: str, **kw) -> rx.Component:
    return rx.icon_button(
        rx.icon(icon, size=14),
        size="1",
        variant="soft",
        aria_label=label,
        title=label,
        id=id_,
        on_click=MapState.outline_command(cmd, MapState.selected_id),
        disabled=MapState.selected_id == "",
        **kw,
    )


def outline() -> rx.Component:
    """The outline: the same edits as the canvas, by keys or these buttons (for touch)."""
    return rx.vstack(
        rx.hstack(
            _ol_tool("corner-down-right", "Add child (Shift+Enter)", "child", "ol-add-child"),
            _ol_tool("list-plus", "Add sibling (Enter)", "sibling", "ol-add-sibling"),
            _ol_tool("pencil", "Rename (F2)", "rename", "ol-rename"),
            _ol_tool("arrow-up", "Move up (Alt+↑)", "up", "ol-up"),
            _ol_tool("arrow-down", "Move down (Alt+↓)", "down", "ol-down"),
            _ol_tool("indent-increase", "Indent (Alt+→)", "indent", "ol-indent"),
            _ol_tool("indent-decrease", "Outdent (Alt+←)", "outdent", "ol-outdent"),
            _ol_tool("trash-2", "Delete branch (Delete)", "delete", "ol-delete", color_scheme="red"),
            rx.icon_button(
                rx.icon("undo-2", size=14),
                size="1",
                variant="soft",
                aria_label="Undo (Ctrl/Cmd-Z)",
                title="Undo (Ctrl/Cmd-Z)",
                id="ol-undo",
                on_click=MapState.outline_command("undo", ""),
            ),
            spacing="1",
            wrap="wrap",
            align="center",
        ),
        rx.box(
            mindmap_outline(
                rows=MapLiveState.outline,
                selected_id=MapState.selected_id,
                edit_request=MapState.outline_edit,
                on_select=MapState.select,
                on_toggle=MapState.toggle,
                on_command=MapState.outline_command,
                on_rename=MapState.outline_rename,
            ),
            width="100%",
            max_height=rx.breakpoints(initial="none", lg="68vh"),
            overflow_y="auto",
            border="1px solid var(--gray-a6)",
            border_radius="8px",
            padding="0.25em",
        ),
        width="100%",
        spacing="2",
        id="outline-panel",
    )


def map_views() -> rx.Component:
    """The canvas, the outline, or both side by side, as the view switch says."""
    # "": before the browser's width chose the view (one round trip): the canvas on a large screen
    # at once (the same element stays when "canvas" is chosen); hidden on a phone (class mm-auto)
    show_canvas = (MapState.view_mode == "canvas") | (MapState.view_mode == "both") | (MapState.view_mode == "")
    show_outline = (MapState.view_mode == "outline") | (MapState.view_mode == "both")
    return rx.box(
        rx.cond(show_outline, rx.box(outline(), flex="1 1 0", min_width="0", width="100%")),
        rx.cond(
            show_canvas,
            rx.box(
                canvas(),
                flex="1 1 0",
                min_width="0",
                width="100%",
                class_name=rx.cond(MapState.view_mode == "", "mm-auto", ""),
            ),
        ),
        display="flex",
        flex_direction=rx.breakpoints(initial="column", md="row"),
        gap="0.75em",
        width="100%",
    )
