"""The map's views: the canvas, the outline (with its edit buttons), the Canvas / Outline /
Both switch and the node panel's toggle (the toolbars and runs: components/mindmap.py)."""

from __future__ import annotations

import reflex as rx

from components.mindmap_canvas import mindmap_canvas
from components.mindmap_outline import mindmap_outline
from state.mindmap import MapLiveState, MapState


def canvas() -> rx.Component:
    return rx.box(
        mindmap_canvas(
            graph=MapLiveState.graph,
            selected_id=MapState.selected_id,
            fit_signal=MapLiveState.fit_signal,
            view_signal=MapLiveState.view_signal,
            layout_signal=MapLiveState.layout_signal,
            read_only=~MapState.can_edit,
            on_layout=MapState.apply_layout,
            on_select=MapState.select,
            on_toggle=MapState.toggle,
            on_key=MapState.key,
            on_drag_stop=MapState.drag_stop,
            on_pane_select=MapState.clear_selection,
        ),
        width="100%",
        height=rx.breakpoints(initial="68vh", lg="max(460px, calc(100vh - 250px))"),
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
        on_click=MapState.outline_command(cmd, MapState.selected_id),  # type: ignore[operator]
        disabled=MapState.selected_id == "",
        **kw,
    )


def outline() -> rx.Component:
    """The outline: the same edits as the canvas, by keys or these buttons (for touch); a
    viewer's outline has no edit buttons and ignores the edit keys."""
    return rx.vstack(
        rx.cond(MapState.can_edit, _outline_tools()),
        rx.box(
            mindmap_outline(
                rows=MapLiveState.outline,
                selected_id=MapState.selected_id,
                edit_request=MapState.outline_edit,
                read_only=~MapState.can_edit,
                on_select=MapState.select,
                on_toggle=MapState.toggle,
                on_command=MapState.outline_command,
                on_rename=MapState.outline_rename,
            ),
            width="100%",
            max_height=rx.breakpoints(initial="none", lg="max(460px, calc(100vh - 250px))"),
            overflow_y="auto",
            border="1px solid var(--gray-a6)",
            border_radius="8px",
            padding="0.25em",
        ),
        width="100%",
        spacing="2",
        id="outline-panel",
    )


def _outline_tools() -> rx.Component:
    return rx.hstack(
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
            on_click=MapState.outline_command("undo", ""),  # type: ignore[operator]
        ),
        spacing="1",
        wrap="wrap",
        align="center",
    )


def map_views() -> rx.Component:
    """The canvas, the outline, or both side by side, as the view switch says."""
    # "": before the browser's width chose the view (one round trip): the canvas on a large screen
    # at once (the same element stays when "canvas" is chosen); hidden on a phone (class mm-auto)
    show_canvas = (MapState.view_mode == "canvas") | (MapState.view_mode == "both") | (MapState.view_mode == "")
    show_outline = (MapState.view_mode == "outline") | (MapState.view_mode == "both")
    return rx.box(
        rx.cond(
            show_outline,
            rx.box(
                outline(),
                # beside the canvas ("both"): a column of reading width, the canvas takes the rest
                flex=rx.cond(MapState.view_mode == "both", rx.breakpoints(initial="1 1 0", md="0 0 320px"), "1 1 0"),
                min_width="0",
                width="100%",
            ),
        ),
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


def side_toggle() -> rx.Component:
    """Hide / show the node panel beside the canvas (wide screens only)."""
    return rx.box(
        rx.tooltip(
            rx.icon_button(
                rx.icon(rx.cond(MapState.side_open, "panel-right-close", "panel-right-open"), size=15),
                on_click=MapState.toggle_side,
                variant="soft",
                size="1",
                color_scheme="gray",
                aria_label=rx.cond(MapState.side_open, "Hide the node panel", "Show the node panel"),
                id="btn-side",
            ),
            content=rx.cond(MapState.side_open, "Hide the node panel", "Show the node panel"),
        ),
        display=rx.breakpoints(initial="none", lg="block"),
    )
