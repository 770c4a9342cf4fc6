"""Mindmap editor building blocks: the toolbar, runs, proposals, the canvas and the outline
(the maps list: components/maps_list.py; the node panel: components/mindmap_panel.py)."""

from __future__ import annotations

import reflex as rx

from bayes_app.usecases import runs as app_runs
from bayes_app.usecases.maps import EXPORT_STYLES
from components.map_updates import update_card
from components.map_zotero import zotero_menu
from components.safe_markdown import safe_markdown
from state.mindmap import MapLiveState, MapState


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
        rx.cond(MapState.can_edit, _edit_tools()),  # a viewer reads, fits and exports
        _tool("maximize", "Zoom to fit", MapState.fit, "btn-fit"),
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
        rx.select.root(
            rx.select.trigger(id="export-style", aria_label="Reference style"),
            rx.select.content(*[rx.select.item(label, value=name) for name, label in EXPORT_STYLES.items()]),
            value=MapState.export_style,
            on_change=MapState.pick_export_style,
            size="1",
        ),
        download_link(
            "Markdown", MapState.export_base + ".md?style=" + MapState.export_style, "mindmap.md", "export-md"
        ),
        download_link(
            "DOCX", MapState.export_base + ".docx?style=" + MapState.export_style, "mindmap.docx", "export-docx"
        ),
        download_link("BibTeX", MapState.export_base + ".bib", "sources.bib", "export-bib"),
        download_link("LaTeX", MapState.export_base + ".tex", "mindmap.tex", "export-tex"),
        rx.cond(MapState.is_owner, zotero_menu()),  # it reads and writes the caller's own Zotero
        width="100%",
        align="center",
        spacing="2",
        wrap="wrap",
    )


def _edit_tools() -> rx.Component:
    return rx.fragment(
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
        _tool("undo-2", "Undo (Ctrl/Cmd-Z)", MapState.undo, "btn-undo"),
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
                app_runs.label("build_map"),
                on_click=MapState.research,
                id="btn-research",
                disabled=MapState.running,
            ),
            rx.separator(orientation="vertical", size="1"),
            rx.button(
                app_runs.label("expand"),
                on_click=MapState.run_on_node("expand"),
                id="btn-expand",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                app_runs.label("deepen"),
                on_click=MapState.run_on_node("deepen"),
                id="btn-deepen",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                app_runs.label("counter"),
                on_click=MapState.run_on_node("counter"),
                id="btn-counter",
                variant="soft",
                disabled=node_needed | MapState.running,
            ),
            rx.button(
                app_runs.label("synthesize"),
                on_click=MapState.run_on_node("synthesize"),
                id="btn-synthesize",
                variant="soft",
                disabled=MapState.running,
            ),
            rx.button(
                app_runs.label("restructure"),
                on_click=MapState.run_on_node("restructure"),
                id="btn-restructure",
                variant="soft",
                disabled=MapState.running,
            ),
            rx.button(
                app_runs.label("chapters"),
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
                    rx.text(
                        rx.cond(p["update"], "Update from new papers (preview)", "Proposed regrouping (preview)"),
                        weight="medium",
                        size="2",
                    ),
                    rx.spacer(),
                    rx.cond(
                        p["update"],
                        rx.fragment(),
                        rx.hstack(
                            rx.button(
                                "Accept",
                                size="1",
                                on_click=MapState.decide(p["id"], True),
                                class_name="proposal-accept",
                            ),
                            rx.button(
                                "Reject",
                                size="1",
                                variant="soft",
                                color_scheme="gray",
                                on_click=MapState.decide(p["id"], False),
                                class_name="proposal-reject",
                            ),
                        ),
                    ),
                    width="100%",
                    align="center",
                ),
                rx.cond(
                    p["update"],
                    update_card(p),
                    rx.foreach(
                        p["groups"].to(list[dict]),
                        lambda g: rx.box(
                            rx.text(g["title"].to(str), weight="bold", size="2"),
                            rx.el.ul(rx.foreach(g["members"].to(list[str]), lambda t: rx.el.li(rx.text(t, size="1")))),
                            class_name="proposal-group",
                        ),
                    ),
                ),
                spacing="2",
                width="100%",
            ),
            class_name="proposal",
            width="100%",
        ),
    )


def _menu_item(label: rx.Var | str, handler, id_: str, **kw) -> rx.Component:
    return rx.menu.item(label, on_click=handler, id=id_, **kw)


def phone_actions() -> rx.Component:
    """A phone's one "Actions" menu: the runs, the fit, the exports (the toolbars are hidden there)."""
    node_needed = MapState.selected_id == ""
    runs = rx.fragment(
        _menu_item("Add child", MapState.add_child, "m-add-child"),  # the canvas's edit toolbar is hidden there
        rx.menu.separator(),
        _menu_item(app_runs.label("build_map"), MapState.research, "m-research", disabled=MapState.running),
        _menu_item(
            app_runs.label("expand"),
            MapState.run_on_node("expand"),
            "m-expand",
            disabled=node_needed | MapState.running,
        ),
        _menu_item(
            app_runs.label("deepen"),
            MapState.run_on_node("deepen"),
            "m-deepen",
            disabled=node_needed | MapState.running,
        ),
        _menu_item(
            app_runs.label("counter"),
            MapState.run_on_node("counter"),
            "m-counter",
            disabled=node_needed | MapState.running,
        ),
        _menu_item(
            app_runs.label("synthesize"), MapState.run_on_node("synthesize"), "m-synthesize", disabled=MapState.running
        ),
        _menu_item(
            app_runs.label("restructure"),
            MapState.run_on_node("restructure"),
            "m-restructure",
            disabled=MapState.running,
        ),
        _menu_item(
            app_runs.label("chapters"), MapState.run_on_node("chapters"), "m-chapters", disabled=MapState.running
        ),
        rx.menu.separator(),
    )
    return rx.box(
        rx.menu.root(
            rx.menu.trigger(
                rx.button(rx.icon("ellipsis", size=14), "Actions", size="1", variant="soft", id="btn-phone-actions")
            ),
            rx.menu.content(
                rx.cond(MapState.can_edit, runs),
                _menu_item("Zoom to fit", MapState.fit, "m-fit"),
                rx.menu.separator(),
                *[
                    rx.menu.item(rx.el.a(f"Export {label}", href=href, download=name, reload_document=True))
                    for label, href, name in (
                        ("Markdown", MapState.export_base + ".md?style=" + MapState.export_style, "mindmap.md"),
                        ("DOCX", MapState.export_base + ".docx?style=" + MapState.export_style, "mindmap.docx"),
                        ("BibTeX", MapState.export_base + ".bib", "sources.bib"),
                        ("LaTeX", MapState.export_base + ".tex", "mindmap.tex"),
                    )
                ],
            ),
        ),
        display=rx.breakpoints(initial="block", md="none"),
    )
