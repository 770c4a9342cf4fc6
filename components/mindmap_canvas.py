"""The mindmap canvas: a React Flow (@xyflow/react v12) component for Reflex.

React Flow keeps its own node state in the browser (sizes, drag positions, selection), so
the Python side only sends the graph (`graph = {"nodes": [...], "edges": [...]}`) and
hears back what the user decided: a click, a toggle, a keyboard command and the *end* of
a drag (with the node it was dropped on, if any). Nothing goes over the websocket while a
node is being dragged or measured, which keeps 500-node maps cheap.

The canvas lays the map out itself (ELK, measured sizes) after every structural change and
chooses what is in view (assets/js/mindmap_canvas.js says how); a layout the server asked for
(`layout_signal`) is sent back (`on_layout`) to be saved.

Graph node items (from `state.mindmap`): id, kind, title, position {x, y}, citations,
support (0..1 or None), level ("good" | "weak" | "poor" | ""), children, hidden (count
under a collapsed node), collapsed, live (written by the running run), challenged (the
"superseded by <paper>" line, or ""), created (when it was written: the canvas opens on the
newest branch). Edge items:
id, source, target, kind ("tree" | "contradicts").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import reflex as rx
from reflex.event import passthrough_event_spec
from reflex.vars.base import Var

XYFLOW = "@xyflow/react@12.12.1"
ELKJS = "elkjs@0.12.1"  # the Eclipse Layout Kernel: Auto-layout with the nodes' measured sizes
WEB_WORKER = "web-worker@1.5.0"  # elkjs's bundle imports it (unused in the browser, but it must resolve)

# the component's code (React, on @xyflow/react and elkjs): an asset file, inlined by Reflex
_JS = (Path(__file__).resolve().parent.parent / "assets" / "js" / "mindmap_canvas.js").read_text(encoding="utf-8")

CSS = {
    ".mm-node": {
        "background": "var(--color-panel-solid)",
        "border": "1px solid var(--gray-7)",
        "border_radius": "8px",
        "padding": "6px 10px",
        "min_width": "140px",
        "max_width": "260px",
        "font_size": "12px",
        "box_shadow": "0 1px 2px var(--black-a3)",
    },
    ".mm-node.mm-selected": {"outline": "2px solid var(--accent-9)", "outline_offset": "1px"},
    ".mm-node.mm-live": {"animation": "mmflash 1.2s ease-out"},
    "@keyframes mmflash": {"from": {"box_shadow": "0 0 0 6px var(--accent-a6)"}, "to": {"box_shadow": "none"}},
    ".mm-head": {"display": "flex", "gap": "6px", "align_items": "center", "margin_bottom": "2px"},
    ".mm-kind": {"font_size": "12px", "color": "var(--gray-11)", "flex": "1"},
    ".mm-title": {
        "line_height": "1.3",
        "overflow": "hidden",
        "display": "-webkit-box",
        "-webkit-line-clamp": "4",
        "-webkit-box-orient": "vertical",
    },
    ".mm-badge": {
        "font_size": "12px",
        "background": "var(--accent-a4)",
        "color": "var(--accent-11)",
        "border_radius": "8px",
        "padding": "0 5px",
    },
    ".mm-support": {"width": "8px", "height": "8px", "border_radius": "50%", "display": "inline-block"},
    ".mm-challenged": {"color": "var(--orange-10)", "font_size": "12px", "cursor": "help"},
    ".mm-support-good": {"background": "var(--green-9)"},
    ".mm-support-weak": {"background": "var(--amber-9)"},
    ".mm-support-poor": {"background": "var(--red-9)"},
    ".mm-hidden-count": {"font_size": "12px", "color": "var(--gray-11)"},
    ".mm-toggle": {
        "font_size": "12px",
        "border": "1px solid var(--gray-7)",
        "border_radius": "4px",
        "background": "var(--gray-2)",
        "cursor": "pointer",
        "padding": "0 4px",
        "line_height": "16px",
    },
    ".mm-kind-question": {
        "background": "var(--indigo-3)",
        "border_color": "var(--indigo-8)",
        "font_weight": "600",
        "font_size": "13px",
    },
    ".mm-kind-theme": {"background": "var(--violet-2)", "border_color": "var(--violet-7)", "font_weight": "500"},
    ".mm-kind-claim": {"background": "var(--color-panel-solid)", "min_width": "200px"},
    ".mm-kind-counterpoint": {"background": "var(--red-2)", "border_color": "var(--red-7)"},
    ".mm-kind-note": {"background": "var(--yellow-2)", "border_color": "var(--yellow-7)", "border_style": "dashed"},
    ".mm-kind-chapter": {"background": "var(--teal-3)", "border_color": "var(--teal-8)", "font_weight": "600"},
}


class MindmapCanvas(rx.Component):
    """`<MindmapCanvas>`: defined in this module's custom code on top of @xyflow/react."""

    tag = "MindmapCanvas"
    lib_dependencies: list[str] = [XYFLOW, ELKJS, WEB_WORKER]

    graph: Var[dict[str, Any]]
    selected_id: Var[str]
    fit_signal: Var[int]  # increment: fit the whole map (the Fit button)
    view_signal: Var[int]  # increment: the readable overview (after a run or a layout)
    layout_signal: Var[int]  # increment: lay the canvas out with ELK, answered by on_layout
    read_only: Var[bool]  # a viewer: no drag, no collapse, no edit keys

    on_select: rx.EventHandler[passthrough_event_spec(str)]
    on_toggle: rx.EventHandler[passthrough_event_spec(str)]
    on_key: rx.EventHandler[passthrough_event_spec(str)]
    on_drag_stop: rx.EventHandler[passthrough_event_spec(str, float, float, str)]
    on_pane_select: rx.EventHandler[lambda: []]
    on_layout: rx.EventHandler[passthrough_event_spec(dict)]  # {node id: [x, y]}

    def add_imports(self) -> dict:
        return {
            "": "@xyflow/react/dist/style.css",
            ELKJS: rx.ImportVar(tag="ELK", is_default=True, package_path="/lib/elk.bundled.js"),
            XYFLOW: [
                rx.ImportVar(tag=t)
                for t in (
                    "ReactFlow",
                    "ReactFlowProvider",
                    "Background",
                    "Controls",
                    "ControlButton",
                    "MiniMap",
                    "Handle",
                    "Position",
                    "useNodesState",
                    "useReactFlow",
                    "useUpdateNodeInternals",
                )
            ],
            "react": [
                rx.ImportVar(tag=t)
                for t in (
                    "createElement",
                    "memo",
                    "useState",
                    "useEffect",
                    "useLayoutEffect",
                    "useCallback",
                    "useRef",
                    "useMemo",
                )
            ],
        }

    def add_custom_code(self) -> list[str]:
        return [_JS]


def mindmap_canvas(**props: Any) -> rx.Component:
    return MindmapCanvas.create(**props)
