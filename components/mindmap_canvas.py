"""The mindmap canvas: a React Flow (@xyflow/react v12) component for Reflex.

React Flow keeps its own node state in the browser (sizes, drag positions, selection), so
the Python side only sends the graph (`graph = {"nodes": [...], "edges": [...]}`) and
hears back what the user decided: a click, a toggle, a keyboard command and the *end* of
a drag (with the node it was dropped on, if any). Nothing goes over the websocket while a
node is being dragged or measured, which keeps 500-node maps cheap.

Graph node items (from `state.mindmap`): id, kind, title, position {x, y}, citations,
support (0..1 or None), level ("good" | "weak" | "poor" | ""), children, hidden (count
under a collapsed node), collapsed, live (written by the running run), challenged (the
"superseded by <paper>" line, or ""). Edge items:
id, source, target, kind ("tree" | "contradicts").
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.event import passthrough_event_spec
from reflex.vars.base import Var

XYFLOW = "@xyflow/react@12.12.1"
ELKJS = "elkjs@0.12.1"  # the Eclipse Layout Kernel: Auto-layout with the nodes' measured sizes
WEB_WORKER = "web-worker@1.5.0"  # elkjs's bundle imports it (unused in the browser, but it must resolve)

_JS = r"""
function MindmapNodeView({ data, selected }) {
  const h = createElement;
  const cls = "mm-node mm-kind-" + data.kind + (data.hue >= 0 ? " mm-hue-" + data.hue : "")
    + (selected ? " mm-selected" : "") + (data.live ? " mm-live" : "");
  const badge = data.citations > 0
    ? h("span", { className: "mm-badge", title: data.citations + " citation(s)" }, "❝ " + data.citations) : null;
  const challenged = data.challenged  // a newer paper contradicts it: the line in full on hover
    ? h("span", { className: "mm-challenged", title: data.challenged, "aria-label": data.challenged }, "⚠") : null;
  const support = data.level
    ? h("span", { className: "mm-support mm-support-" + data.level,
                  title: "support " + (data.support == null ? "" : data.support) }) : null;
  const toggle = data.children > 0
    ? h("button", { className: "mm-toggle nodrag", "data-id": data.id, title: data.collapsed ? "Expand" : "Collapse" },
        data.collapsed ? "+" + data.hidden : "−") : null;
  return h("div", { className: cls, "data-id": data.id, "data-kind": data.kind },
    h(Handle, { type: "target", position: Position.Left, isConnectable: false }),
    h("div", { className: "mm-head" }, h("span", { className: "mm-kind" }, data.kind), support, badge, challenged,
      toggle),
    h("div", { className: "mm-title" }, data.title || "(untitled)"),
    h(Handle, { type: "source", position: Position.Right, isConnectable: false }));
}
// Re-render a node only when its data item or selection changed (not on every drag tick or
// on a change elsewhere in the map).
const MindmapNode = memo(MindmapNodeView, (a, b) => a.data === b.data && a.selected === b.selected);
const mindmapNodeTypes = { mind: MindmapNode };
const MM_TREE_EDGE = { type: "default", className: "mm-edge-tree", style: { stroke: "var(--gray-8)", strokeWidth: 1.5 } };
const MM_CONTRA_EDGE = { type: "straight", className: "mm-edge-contradicts", animated: true, label: "contradicts",
  style: { stroke: "var(--red-9)", strokeWidth: 2, strokeDasharray: "6 4" },
  labelStyle: { fill: "var(--red-11)", fontSize: 12 }, labelBgStyle: { fill: "var(--color-background)" } };

function mindmapToFlow(n, selected) {
  return { id: n.id, type: "mind", position: n.position, data: n, selected, draggable: true, connectable: false };
}

// Same item as what the node shows now? (every field but the position, which is compared apart)
function mindmapSameData(a, b) {
  if (a === b) return true;
  if (!a || !b) return false;
  for (const k in b) if (k !== "position" && a[k] !== b[k]) return false;
  for (const k in a) if (!(k in b)) return false;
  return true;
}

// The React Flow nodes for a new `graph`, reusing every node object whose item, position and
// selection did not change: React Flow then re-renders only the nodes that did (and keeps
// their measured sizes), instead of all of them on every update. Returns `prev` itself when
// nothing changed.
function mindmapMergeNodes(prev, incoming, selectedId) {
  const old = new Map(prev.map((n) => [n.id, n]));
  let changed = prev.length !== incoming.length;
  const next = incoming.map((n, i) => {
    const o = old.get(n.id);
    const sel = n.id === selectedId;
    if (!o) { changed = true; return mindmapToFlow(n, sel); }
    const samePos = o.dragging || (o.position.x === n.position.x && o.position.y === n.position.y);
    const sameData = mindmapSameData(o.data, n);
    if (samePos && sameData && o.selected === sel) {
      if (prev[i] !== o) changed = true;
      return o;
    }
    changed = true;
    return { ...o, position: samePos ? o.position : n.position, data: sameData ? o.data : n, selected: sel };
  });
  return changed ? next : prev;
}

function mindmapMergeEdges(prev, incoming) {
  const old = new Map(prev.map((e) => [e.id, e]));
  let changed = prev.length !== incoming.length;
  const next = incoming.map((e, i) => {
    const o = old.get(e.id);
    if (o && o.source === e.source && o.target === e.target && o.mmKind === e.kind) {
      if (prev[i] !== o) changed = true;
      return o;
    }
    changed = true;
    return { ...(e.kind === "contradicts" ? MM_CONTRA_EDGE : MM_TREE_EDGE), id: e.id, source: e.source,
             target: e.target, mmKind: e.kind };
  });
  return changed ? next : prev;
}

function mindmapInView(rf, el, n) {
  if (!el) return true;
  const vp = rf.getViewport(), w = el.clientWidth / vp.zoom, hh = el.clientHeight / vp.zoom;
  const x0 = -vp.x / vp.zoom, y0 = -vp.y / vp.zoom;
  const nw = n.measured?.width ?? 0, nh = n.measured?.height ?? 0;
  return n.position.x >= x0 && n.position.y >= y0 && n.position.x + nw <= x0 + w && n.position.y + nh <= y0 + hh;
}

// The root and its first level: what a map opens on, at a zoom where titles stay readable.
// Every text on a node is ≥ 12 px (CSS below), so at ≥ 0.95 it stays ≥ 11 px on screen.
const MM_READABLE = { minZoom: 0.95, maxZoom: 1.2 };
function mindmapFirstLevel(graph) {
  const targets = new Set(graph.edges.filter((e) => e.kind === "tree").map((e) => e.target));
  const root = graph.nodes.find((n) => !targets.has(n.id));
  if (!root) return [];
  const kids = graph.edges.filter((e) => e.kind === "tree" && e.source === root.id).map((e) => ({ id: e.target }));
  return [{ id: root.id }, ...kids];
}

// The overview: the whole map if its titles stay readable at that zoom, else the root and
// its first level at a readable zoom (the rest is a pan away; the minimap shows it).
function mindmapFitsReadably(rf, el) {
  const b = rf.getNodesBounds(rf.getNodes());
  const fits = el && b.width > 0 && b.height > 0
    ? Math.min(el.clientWidth / (b.width * 1.3), el.clientHeight / (b.height * 1.3)) : 1;
  return fits >= MM_READABLE.minZoom;
}

function mindmapOverview(rf, el, graph, duration) {
  if (mindmapFitsReadably(rf, el)) { rf.fitView({ padding: 0.15, ...MM_READABLE, duration }); return; }
  const first = mindmapFirstLevel(graph);
  const wide = el && el.clientWidth >= 700;  // room for the root and its first level side by side
  // a narrow screen (a phone): the root alone, readable; its first level is a swipe away
  rf.fitView({ nodes: wide ? first : first.slice(0, 1), padding: 0.15, ...MM_READABLE, duration });
}

// Auto-layout: ELK's layered algorithm, left to right, over the nodes on the canvas with the
// sizes the browser measured (a wrapped title makes a taller box, a short one a narrower box),
// tree edges only, children kept in their order. No two boxes overlap by construction.
const MM_ELK = new ELK();
const MM_ELK_OPTIONS = {
  "elk.algorithm": "layered", "elk.direction": "RIGHT",
  "elk.spacing.nodeNode": "18", "elk.layered.spacing.nodeNodeBetweenLayers": "56",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF", "elk.layered.nodePlacement.bk.fixedAlignment": "BALANCED",
};
async function mindmapElkLayout(nodes, edges) {
  const ids = new Set(nodes.map((n) => n.id));
  const graph = {
    id: "map", layoutOptions: MM_ELK_OPTIONS,
    children: nodes.map((n) => ({ id: n.id, width: Math.ceil(n.measured.width), height: Math.ceil(n.measured.height) })),
    edges: edges.filter((e) => e.mmKind === "tree" && ids.has(e.source) && ids.has(e.target))
      .map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
  const out = await MM_ELK.layout(graph);
  const pos = {};
  for (const c of out.children) pos[c.id] = [Math.round(c.x), Math.round(c.y)];
  return pos;
}

// Is the user typing somewhere on the page (a node title, the side panel)? Then never move the view.
function mindmapEditing() {
  const a = typeof document !== "undefined" ? document.activeElement : null;
  return !!(a && a.closest && a.closest("input, textarea, select, [contenteditable=true]"));
}

function MindmapFlowView(props) {
  const { graph, selectedId, fitSignal, viewSignal, layoutSignal } = props;
  const cb = useRef(props);
  cb.current = props;
  const onSelect = useCallback((id) => cb.current.onSelect(id), []);
  const onToggle = useCallback((id) => cb.current.onToggle(id), []);
  const onDragStop = useCallback((id, x, y, t) => cb.current.onDragStop(id, x, y, t), []);
  const onKey = useCallback((k) => cb.current.onKey(k), []);
  const onPaneSelect = useCallback(() => cb.current.onPaneSelect(), []);
  const onLayout = useCallback((pos) => cb.current.onLayout(pos), []);
  const rf = useReactFlow();
  const [nodes, setNodes, onNodesChange] = useNodesState([]);
  const [edges, setEdges] = useState([]);
  const fitted = useRef(false);
  const knownIds = useRef(new Set());
  const box = useRef(null);
  // A layout effect: the merged nodes render in the same frame as the new graph (a passive
  // effect would run after the paint and show the node one frame later).
  useLayoutEffect(() => {
    const incoming = (graph && graph.nodes) || [];
    setNodes((prev) => mindmapMergeNodes(prev, incoming, selectedId));
    setEdges((prev) => mindmapMergeEdges(prev, (graph && graph.edges) || []));
  }, [graph]);
  useEffect(() => {
    setNodes((prev) => prev.map((n) => (n.selected === (n.id === selectedId) ? n : { ...n, selected: n.id === selectedId })));
  }, [selectedId]);
  const updateNodeInternals = useUpdateNodeInternals();
  useEffect(() => {
    // A node replaced (new graph) while React Flow was measuring it can end up "measured" without
    // handle bounds: it is never re-measured, so its edges are not drawn. Re-measure such nodes.
    const stale = nodes.filter((n) => {
      const i = rf.getInternalNode(n.id);
      return i && i.measured && i.measured.width && !i.internals.handleBounds;
    }).map((n) => n.id);
    if (stale.length) updateNodeInternals(stale);
  }, [nodes]);
  // Auto-layout on request (the button, the end of a run, a move): once every node on the
  // canvas is measured, lay them out with ELK and hand the positions back in ONE event.
  const laidOut = useRef(layoutSignal || 0);
  useEffect(() => {
    if (!layoutSignal || layoutSignal === laidOut.current) return;
    if (!nodes.length || !nodes.every((n) => n.measured && n.measured.width)) return;
    laidOut.current = layoutSignal;
    mindmapElkLayout(nodes, edges).then(onLayout, (err) => console.warn("auto-layout failed", err));
  }, [layoutSignal, nodes]);
  const pendingFit = useRef(false), pendingView = useRef(false);
  useEffect(() => { if (fitSignal) pendingFit.current = true; }, [fitSignal]);
  useEffect(() => { if (viewSignal) pendingView.current = true; }, [viewSignal]);
  useEffect(() => {  // fit once the first nodes are measured, and on request once new nodes are
    if (!nodes.length || !nodes.every((n) => n.measured)) return;
    const ids = new Set(nodes.map((n) => n.id));
    const added = nodes.filter((n) => !knownIds.current.has(n.id));
    knownIds.current = ids;
    if (!fitted.current) {  // the whole map when it fits readably, else the root and first level
      fitted.current = true;
      pendingFit.current = pendingView.current = false;
      mindmapOverview(rf, box.current, graph, 0);
      if (typeof window !== "undefined") window.__mindmapReady = performance.now();
    } else if (pendingFit.current) {  // the Fit button: the whole map, however small
      pendingFit.current = pendingView.current = false;
      rf.fitView({ padding: 0.15, maxZoom: 1.2, duration: 150 });
    } else if (pendingView.current) {  // a run ended or a layout was saved: readable, never fit-all
      pendingView.current = false;
      mindmapOverview(rf, box.current, graph, 150);
    } else {
      // keep newly written nodes in view at the current zoom (never zoom out to fit them all),
      // and never move away while the user is typing. No animation while nodes stream in: each
      // frame re-runs every node's and edge's store selector, which backs up a burst.
      const out = new Set(added.filter((n) => !mindmapInView(rf, box.current, n)).map((n) => n.id));
      if (out.size && mindmapFitsReadably(rf, box.current)) {  // a small map: show all of it
        rf.fitView({ padding: 0.15, ...MM_READABLE, duration: nodes.some((n) => n.data.live) ? 0 : 150 });
      } else if (out.size && (!mindmapEditing() || out.has(selectedId))) {  // (or the node just added here)
        // the new nodes with their parents, so the view keeps its bearings (when there is room)
        const fresh = [...out], el = box.current;
        if (el && el.clientWidth >= 700) {
          for (const e of graph.edges) if (e.kind === "tree" && out.has(e.target)) out.add(e.source);
        }
        // pan to them at the current zoom, or at a readable one if the view was zoomed out; the new
        // nodes alone when they and their parents do not fit together at that zoom
        const z = Math.max(rf.getZoom(), MM_READABLE.minZoom);
        const b = rf.getNodesBounds(nodes.filter((n) => out.has(n.id)));
        const both = !el || (b.width * z <= el.clientWidth * 0.9 && b.height * z <= el.clientHeight * 0.9);
        rf.fitView({ nodes: (both ? [...out] : fresh).map((id) => ({ id })), padding: 0.2, minZoom: z, maxZoom: z,
                     duration: nodes.some((n) => n.data.live) ? 0 : 150 });
      }
    }
  }, [nodes, fitSignal, viewSignal]);
  const onNodeClick = useCallback((event, node) => {
    if (event.target && event.target.closest && event.target.closest(".mm-toggle")) onToggle(node.id);
    else onSelect(node.id);
  }, [onSelect, onToggle]);
  const onNodeDragStop = useCallback((event, node) => {
    const cx = node.position.x + (node.measured?.width ?? 0) / 2, cy = node.position.y + (node.measured?.height ?? 0) / 2;
    let best = "", dist = Infinity;
    for (const o of rf.getIntersectingNodes(node)) {
      if (o.id === node.id) continue;
      const ox = o.position.x + (o.measured?.width ?? 0) / 2, oy = o.position.y + (o.measured?.height ?? 0) / 2;
      const d = (ox - cx) ** 2 + (oy - cy) ** 2;
      if (d < dist) { dist = d; best = o.id; }
    }
    onDragStop(node.id, node.position.x, node.position.y, best);
  }, [onDragStop, rf]);
  const onKeyDown = useCallback((e) => {
    const t = e.target;
    if (t && t.closest && t.closest("input, textarea, select, [contenteditable=true]")) return;
    let key = "";
    if (e.key === "Enter") key = "Enter";
    else if (e.key === "Tab") key = "Tab";
    else if (e.key === "Delete" || e.key === "Backspace") key = "Delete";
    else if (e.key === "F2") key = "F2";
    else if ((e.ctrlKey || e.metaKey) && (e.key === "z" || e.key === "Z")) key = "Undo";
    if (!key) return;
    e.preventDefault();
    e.stopPropagation();
    onKey(key);
  }, [onKey]);
  const h = createElement;
  return h("div", { className: "mm-canvas", id: "mindmap-canvas", tabIndex: 0, onKeyDown, ref: box,
                    style: { width: "100%", height: "100%", outline: "none" } },
    h(ReactFlow, { nodes, edges, nodeTypes: mindmapNodeTypes, onNodesChange, onNodeClick, onNodeDragStop,
                   onPaneClick: onPaneSelect, minZoom: 0.05, maxZoom: 2, deleteKeyCode: null,
                   selectionKeyCode: null, multiSelectionKeyCode: null, nodesConnectable: false,
                   disableKeyboardA11y: true,
                   proOptions: { hideAttribution: true } },
      h(Background, { gap: 18 }), h(Controls, { showInteractive: false }),
      nodes.length >= 40 ? h(MiniMap, { pannable: true, zoomable: true, position: "top-right",
                                        style: { width: 150, height: 100 } }) : null));
}

// Reflex re-renders the canvas whenever any MapState var changes (a typed title, a notice…) and
// passes new (but equivalent) event callbacks each time: skip those renders; the callbacks are
// read through a ref, so the latest are always used.
const MindmapFlow = memo(MindmapFlowView, (a, b) =>
  a.graph === b.graph && a.selectedId === b.selectedId && a.fitSignal === b.fitSignal
  && a.viewSignal === b.viewSignal && a.layoutSignal === b.layoutSignal);

function MindmapCanvas(props) {
  return createElement(ReactFlowProvider, null, createElement(MindmapFlow, props));
}
"""

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
                for t in ("createElement", "memo", "useState", "useEffect", "useLayoutEffect", "useCallback", "useRef")
            ],
        }

    def add_custom_code(self) -> list[str]:
        return [_JS]


def mindmap_canvas(**props: Any) -> rx.Component:
    return MindmapCanvas.create(**props)
