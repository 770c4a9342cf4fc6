"""The Maps page (list, create, rename, delete) and the mindmap editor /maps/<id>."""

from __future__ import annotations

import reflex as rx

# on a phone the node panel is a bottom sheet: always in view, over the page's lower part
from components.first_run import first_run_guide
from components.map_share import share_bar, share_dialog
from components.map_updates import new_papers_badge, watch_switch
from components.maps_list import delete_map_dialog, maps_table, new_map_form, shared_table
from components.mindmap import message_box, phone_actions, proposals, run_bar, run_status, toolbar
from components.mindmap_canvas import CSS
from components.mindmap_outline import CSS as OUTLINE_CSS
from components.mindmap_panel import delete_node_dialog, node_panel, search_panel
from components.mindmap_views import map_views, side_toggle, view_switch
from components.refusal import error_callout
from components.shell import shell, stack_on_phone
from state.maps import MapsState
from state.mindmap import MapState

SHEET_CSS = {
    "@media (max-width: 1023px)": {
        ".mm-sheet": {
            "position": "fixed",
            "left": "0",
            "right": "0",
            "bottom": "0",
            "z_index": "40",
            "max_height": "60vh",
            "overflow_y": "auto",
            "padding": "0.75em 1em 1em",
            "background": "var(--color-panel-solid)",
            "border_top": "1px solid var(--gray-a6)",
            "border_radius": "14px 14px 0 0",
            "box_shadow": "0 -8px 30px var(--black-a5)",
        },
        ".mm-auto": {"display": "none"},
    }
}


def maps_page() -> rx.Component:
    return shell(
        "Maps",
        first_run_guide(),
        new_map_form(),
        error_callout(MapsState.maps_error, "maps-error"),  # type: ignore[arg-type]
        maps_table(),
        shared_table(),
        delete_map_dialog(),
    )


def _editor() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.link(
                rx.icon("arrow-left", size=14),
                "Maps",
                href="/maps",
                size="2",
                white_space="nowrap",
                display="inline-flex",
                align_items="center",
                gap="0.25em",
                flex_shrink="0",
                id="back-to-maps",
            ),
            rx.cond(
                MapState.offline_mode | MapState.offline_map,
                rx.badge(
                    "offline mode",
                    color_scheme="orange",
                    id="offline-badge",
                    title="No language model is configured: agents quote sentences from your library.",
                ),
            ),
            new_papers_badge(),
            rx.spacer(),
            share_bar(),
            rx.cond(MapState.is_owner, watch_switch()),
            view_switch(),
            side_toggle(),
            phone_actions(),
            align="center",
            width="100%",
            wrap="wrap",
        ),
        rx.cond(
            MapState.my_role == "viewer",
            rx.text("View only — ask the owner for edit access", size="1", color_scheme="gray", id="view-only"),
        ),
        rx.box(toolbar(), display=rx.breakpoints(initial="none", md="block"), width="100%"),
        rx.cond(MapState.can_edit, rx.box(run_bar(), display=rx.breakpoints(initial="none", md="block"), width="100%")),
        run_status(),  # (on a phone the runs start from the Actions menu)
        error_callout(MapState.error, "map-error", width="100%"),  # type: ignore[arg-type]
        rx.cond(MapState.notice != "", rx.text(MapState.notice, size="1", color_scheme="gray", id="map-notice")),
        proposals(),
        stack_on_phone(
            rx.vstack(map_views(), rx.cond(MapState.can_edit, message_box()), width="100%", min_width="0", spacing="3"),
            rx.vstack(
                node_panel(),
                rx.cond(MapState.is_owner, rx.fragment(rx.divider(), search_panel())),  # the owner's library
                # 340 px at 1280-1639 px: room for a question, a theme and its claims side by side
                width=rx.breakpoints(initial="100%", lg="340px", xl="380px"),
                min_width=rx.breakpoints(initial="0", lg="340px", xl="380px"),
                spacing="3",
                max_height=rx.breakpoints(initial="none", lg="80vh"),
                overflow_y="auto",
                id="map-side",
                # collapsed on a wide screen: the canvas takes the width (on a phone it is a bottom sheet)
                display=rx.cond(MapState.side_open, "flex", rx.breakpoints(initial="flex", lg="none")),
            ),
            wide="lg",
            width="100%",
            align_items="start",
            gap="1em",
        ),
        delete_node_dialog(),
        share_dialog(),
        width="100%",
        spacing="3",
        style={**CSS, **OUTLINE_CSS, **SHEET_CSS},
    )


def editor_page() -> rx.Component:
    return shell(
        MapState.map_title,
        rx.cond(
            MapState.missing,
            rx.callout.root(
                rx.callout.icon(rx.icon("circle-alert")),
                rx.callout.text(
                    rx.cond(
                        MapState.gone_message != "",
                        MapState.gone_message,
                        "This map does not exist, or it is not yours.",
                    ),
                    " ",
                    rx.link("Back to Maps", href="/maps"),
                ),
                color_scheme="gray",
                id="map-missing",
            ),
            _editor(),
        ),
    )
