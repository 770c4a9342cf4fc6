// The mindmap canvas (React Flow, @xyflow/react v12): Reflex inlines this file as the
// component's custom code (components/mindmap_canvas.py), so the imports are Reflex's.
//
// The canvas owns the node positions once the map is open: after every structural change (a
// node added, removed, moved, collapsed) and whenever two cards overlap or a tree edge runs
// through a card, it lays the map out again with ELK (the nodes' measured sizes), animating the
// move. Then it chooses the view (`mmPlaceView`): the whole map when it is readable at that
// zoom (text >= 11 px on screen), else the nodes that want attention (the question and the
// newest branch on opening, the new nodes after a change), at a readable zoom, as close as
// possible to where the reader was, and with no card cut by the canvas's edge.

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
  // a viewer cannot collapse (it is saved on the map): the count of hidden nodes only
  const toggle = data.children > 0
    ? (data.readOnly
      ? (data.collapsed ? h("span", { className: "mm-hidden-count" }, "+" + data.hidden) : null)
      : h("button", { className: "mm-toggle nodrag", "data-id": data.id, title: data.collapsed ? "Expand" : "Collapse" },
          data.collapsed ? "+" + data.hidden : "−")) : null;
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
// A tree edge runs level out of its source, turns in the gap before the target's layer (cards of a
// layer are left-aligned, so that gap holds no card) and enters the target level: it never crosses
// a card, whatever the widths in a layer (a curve from a narrow card swept over a wider neighbour).
const MM_STEP = 20;  // px before the target where the edge turns (the layers are 44 px apart)
const MM_TREE_EDGE = { type: "smoothstep", className: "mm-edge-tree", pathOptions: { offset: MM_STEP, stepPosition: 1, borderRadius: 8 },
  style: { stroke: "var(--gray-8)", strokeWidth: 1.5 } };
const MM_CONTRA_EDGE = { type: "straight", className: "mm-edge-contradicts", animated: true, label: "contradicts",
  style: { stroke: "var(--red-9)", strokeWidth: 2, strokeDasharray: "6 4" },
  labelStyle: { fill: "var(--red-11)", fontSize: 12 }, labelBgStyle: { fill: "var(--color-background)" } };

function mindmapItem(n, readOnly) {
  return readOnly ? { ...n, readOnly: true } : n;
}

// Same item as what the node shows now? (every field but the position)
function mindmapSameData(a, b) {
  if (a === b) return true;
  if (!a || !b) return false;
  for (const k in b) if (k !== "position" && a[k] !== b[k]) return false;
  for (const k in a) if (!(k in b)) return false;
  return true;
}

// The React Flow nodes for a new `graph`, reusing every node object whose item and selection did
// not change (React Flow then re-renders only the nodes that did, and keeps their measured sizes).
// A node already on the canvas keeps its position (the canvas lays the map out itself); a new
// one starts at its parent's, so the layout's animation grows it out of its parent.
// Returns `prev` itself when nothing changed.
function mindmapMergeNodes(prev, incoming, selectedId, parents, readOnly) {
  const old = new Map(prev.map((n) => [n.id, n]));
  let changed = prev.length !== incoming.length;
  const next = incoming.map((item, i) => {
    const n = mindmapItem(item, readOnly);
    const o = old.get(n.id);
    const sel = n.id === selectedId;
    if (!o) {
      changed = true;
      const p = old.get(parents.get(n.id));
      return { id: n.id, type: "mind", position: p ? { ...p.position } : n.position, data: n, selected: sel,
               draggable: !readOnly, connectable: false };
    }
    const sameData = mindmapSameData(o.data, n);
    if (sameData && o.selected === sel && o.draggable === !readOnly) {
      if (prev[i] !== o) changed = true;
      return o;
    }
    changed = true;
    return { ...o, data: sameData ? o.data : n, selected: sel, draggable: !readOnly };
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

// ---- geometry ------------------------------------------------------------------------------
// Every text on a node is >= 12 px (CSS), so at zoom >= 0.95 it is >= 11 px on screen.
const MM_READ_ZOOM = 0.95, MM_MAX_ZOOM = 1.1;
const MM_MARGIN = 14;  // world px between a card in focus and the canvas's edge
const MM_CLEAR = 6;  // world px between the canvas's edge and a card just outside or inside it

function mmRects(nodes, pos) {
  return nodes.map((n) => {
    const p = pos && pos[n.id];
    return { id: n.id, kind: n.data.kind, x: p ? p[0] : n.position.x, y: p ? p[1] : n.position.y,
             w: n.measured?.width ?? 0, h: n.measured?.height ?? 0 };
  });
}

function mmBounds(rs) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const r of rs) {
    x0 = Math.min(x0, r.x); y0 = Math.min(y0, r.y); x1 = Math.max(x1, r.x + r.w); y1 = Math.max(y1, r.y + r.h);
  }
  return { x0, y0, x1, y1, w: x1 - x0, h: y1 - y0 };
}

// Points along a tree edge as React Flow draws it (MM_TREE_EDGE: level from the source's right
// side, down or up MM_STEP px before the target's left side, level into it), every 6 px, to test
// whether it runs through a third card.
function mmEdgePoints(a, b) {
  const sx = a.x + a.w, sy = a.y + a.h / 2, tx = b.x, ty = b.y + b.h / 2, cx = Math.max(sx, tx - MM_STEP), pts = [];
  for (let x = sx; x <= cx; x += 6) pts.push([x, sy]);
  for (let y = Math.min(sy, ty); y <= Math.max(sy, ty); y += 6) pts.push([cx, y]);
  for (let x = cx; x <= tx; x += 6) pts.push([x, ty]);
  return pts;
}

// No two cards overlap and no tree edge runs through a card.
function mmClean(rs, edges) {
  const s = [...rs].sort((a, b) => a.x - b.x);
  for (let i = 0; i < s.length; i++) {
    const a = s[i];
    for (let j = i + 1; j < s.length && s[j].x < a.x + a.w; j++) {
      const b = s[j];
      if (a.y < b.y + b.h && b.y < a.y + a.h) return false;
    }
  }
  const by = new Map(rs.map((r) => [r.id, r]));
  for (const e of edges) {
    if (e.mmKind !== "tree") continue;
    const a = by.get(e.source), b = by.get(e.target);
    if (!a || !b) continue;
    for (const [px, py] of mmEdgePoints(a, b)) {
      for (const r of s) {
        if (r.x > px) break;
        if (r !== a && r !== b && px > r.x + 1 && px < r.x + r.w - 1 && py > r.y + 1 && py < r.y + r.h - 1) return false;
      }
    }
  }
  return true;
}

// The view (world x0, y0 of the top-left corner, at zoom z) that shows every card of `fb` (a
// bounds) with no card cut by the edge, nearest to (px, py); null when none does. Cards either
// wholly in view or wholly out of it.
function mmSearch(rs, W, H, z, fb, px, py) {
  const vw = W / z, vh = H / z, m = MM_MARGIN, g = MM_CLEAR;
  const xlo = fb.x1 + m - vw, xhi = fb.x0 - m, ylo = fb.y1 + m - vh, yhi = fb.y0 - m;
  if (xlo > xhi || ylo > yhi) return null;
  const cxp = Math.min(xhi, Math.max(xlo, px)), cyp = Math.min(yhi, Math.max(ylo, py));
  const near = rs.filter((r) => r.x < xhi + vw && r.x + r.w > xlo && r.y < yhi + vh && r.y + r.h > ylo);
  const cands = (lo, hi, p, keys) => {
    const out = new Set([Math.round(p), Math.round(lo), Math.round(hi)]);
    for (const v of keys) if (v >= lo && v <= hi) out.add(Math.round(v));
    return [...out].sort((a, b) => Math.abs(a - p) - Math.abs(b - p)).slice(0, 48);
  };
  const xs = cands(xlo, xhi, cxp, near.flatMap((r) => [r.x - g, r.x + r.w + g, r.x - g - vw, r.x + r.w + g - vw]));
  const ys = cands(ylo, yhi, cyp, near.flatMap((r) => [r.y - g, r.y + r.h + g, r.y - g - vh, r.y + r.h + g - vh]));
  let best = null;
  for (const x of xs) {
    const dx = (x - px) * (x - px);
    if (best && dx >= best.score) continue;
    // the cards across the vertical edges (cut unless wholly above or below) and those in between
    const across = [], inside = [];
    for (const r of near) {
      if (r.x + r.w <= x || r.x >= x + vw) continue;
      (r.x >= x && r.x + r.w <= x + vw ? inside : across).push(r);
    }
    for (const y of ys) {
      const score = dx + (y - py) * (y - py);
      if (best && score >= best.score) continue;
      let cut = false;
      for (const r of across) if (r.y + r.h > y && r.y < y + vh) { cut = true; break; }
      if (!cut) for (const r of inside) if (r.y + r.h > y && r.y < y + vh && (r.y < y || r.y + r.h > y + vh)) { cut = true; break; }
      if (!cut) best = { x, y, z, score };
    }
  }
  return best;
}

// Where to look. The whole map when it is readable there; else the longest prefix of `focus`
// (ids, most wanted first) that fits at a readable zoom with no card cut by the edge, nearest to
// `pref` (the current view: {x, y, zoom} as React Flow has it) or centred on the focus.
function mmPlaceView(rs, W, H, focus, pref) {
  if (!rs.length || !W || !H) return null;
  const all = mmBounds(rs);
  const fitAll = Math.min(W / (all.w + 2 * MM_MARGIN), H / (all.h + 2 * MM_MARGIN));
  if (fitAll >= MM_READ_ZOOM) {
    const z = Math.min(fitAll, MM_MAX_ZOOM);
    return { x: -(all.x0 - (W / z - all.w) / 2) * z, y: -(all.y0 - (H / z - all.h) / 2) * z, zoom: z };
  }
  const by = new Map(rs.map((r) => [r.id, r]));
  const ids = focus.filter((id) => by.has(id));
  if (!ids.length && rs.length) ids.push(rs[0].id);
  const z0 = pref ? Math.min(MM_MAX_ZOOM, Math.max(MM_READ_ZOOM, pref.zoom)) : 1.0;
  const zooms = [...new Set([z0, MM_READ_ZOOM, 1.0, MM_MAX_ZOOM])];
  const steps = [];
  for (let k = Math.min(ids.length, 16); k >= 1; k = k > 4 ? Math.ceil(k * 0.7) : k - 1) steps.push(k);
  const place = (group, zs) => {
    const fb = mmBounds(group.map((id) => by.get(id)));
    for (const z of zs) {
      const vw = W / z, vh = H / z;
      const px = pref ? -pref.x / pref.zoom - (vw - W / pref.zoom) / 2 : fb.x0 - (vw - fb.w) / 2;
      const py = pref ? -pref.y / pref.zoom - (vh - H / pref.zoom) / 2 : fb.y0 - (vh - fb.h) / 2;
      const v = mmSearch(rs, W, H, z, fb, px, py);
      if (v) return { x: -v.x * z, y: -v.y * z, zoom: z };
    }
    return null;
  };
  for (const k of steps) {
    const v = place(ids.slice(0, k), zooms);
    if (v) return v;
  }
  // A narrow canvas (a phone, one card wide) may show the first focus card only with a
  // neighbouring column cut: that card closer up (a narrower window fits between the columns
  // around it).
  const closer = place(ids.slice(0, 1), [1.25, 1.4]);
  if (closer) return closer;
  // nothing without a cut card (a card taller than the canvas): the first focus node, centred
  const r = by.get(ids[0]), z = MM_READ_ZOOM;
  return { x: -(r.x - (W / z - r.w) / 2) * z, y: -(r.y - (H / z - r.h) / 2) * z, zoom: z };
}

// The tree: parent of each node, the root, and the nodes in reading order.
function mmTree(graph) {
  const parents = new Map(), kids = new Map();
  for (const e of (graph && graph.edges) || []) {
    if (e.kind !== "tree") continue;
    parents.set(e.target, e.source);
    if (!kids.has(e.source)) kids.set(e.source, []);
    kids.get(e.source).push(e.target);
  }
  const nodes = (graph && graph.nodes) || [];
  const root = nodes.find((n) => !parents.has(n.id));
  return { parents, kids, root: root ? root.id : "", order: nodes.map((n) => n.id) };
}

// The branch (a child of the root) holding the newest node.
function mmNewestBranch(graph, tree) {
  let newest = null;
  for (const n of (graph && graph.nodes) || []) if (n.id !== tree.root && (!newest || (n.created || "") > (newest.created || ""))) newest = n;
  if (!newest) return "";
  let id = newest.id;
  while (tree.parents.get(id) && tree.parents.get(id) !== tree.root) id = tree.parents.get(id);
  return id;
}

function mmSubtree(tree, id) {
  const out = [], stack = [id];
  while (stack.length) {
    const n = stack.shift();
    out.push(n);
    stack.push(...(tree.kids.get(n) || []));
  }
  return out;
}

// What a map opens on, most wanted first: the question, the newest branch's head, then the
// branch's nodes nearest that head (the question is level with it), so that as many of them as
// fit around it are shown rather than only its first few, far above.
function mmOpeningFocus(rs, root, branch, tree) {
  if (!branch) return [root];
  const by = new Map(rs.map((r) => [r.id, r]));
  const mid = (id) => (by.has(id) ? by.get(id).y + by.get(id).h / 2 : Infinity);
  const rest = mmSubtree(tree, branch).slice(1);
  rest.sort((a, b) => Math.abs(mid(a) - mid(branch)) - Math.abs(mid(b) - mid(branch)));
  return [root, branch, ...rest];
}

// Auto-layout: ELK's layered algorithm, left to right, with the sizes the browser measured,
// tree edges only, children kept in their order. No two boxes overlap by construction, and a
// tree edge only crosses the gap between two layers. The question (alone in the first layer) is
// then set level with `branch` (the newest branch): the two are what a large map opens on.
const MM_ELK = new ELK();
const MM_ELK_OPTIONS = {
  "elk.algorithm": "layered", "elk.direction": "RIGHT",
  "elk.spacing.nodeNode": "18", "elk.layered.spacing.nodeNodeBetweenLayers": "44",
  // the canvas draws its own curves between layers: no room kept for ELK's orthogonal routes
  "elk.layered.spacing.edgeNodeBetweenLayers": "0", "elk.layered.spacing.edgeEdgeBetweenLayers": "0",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF", "elk.layered.nodePlacement.bk.fixedAlignment": "BALANCED",
};
async function mindmapElkLayout(nodes, edges, root, branch) {
  const ids = new Set(nodes.map((n) => n.id));
  const graph = {
    id: "map", layoutOptions: MM_ELK_OPTIONS,
    // left-aligned in their layer: every edge turns in the card-free gap before it (MM_TREE_EDGE)
    children: nodes.map((n) => ({ id: n.id, width: Math.ceil(n.measured.width), height: Math.ceil(n.measured.height),
                                  layoutOptions: { "elk.alignment": "LEFT" } })),
    edges: edges.filter((e) => e.mmKind === "tree" && ids.has(e.source) && ids.has(e.target))
      .map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
  const out = await MM_ELK.layout(graph);
  const pos = {}, box = {};
  for (const c of out.children) { pos[c.id] = [Math.round(c.x), Math.round(c.y)]; box[c.id] = c; }
  if (root && branch && box[root] && box[branch]) {
    pos[root][1] = Math.round(box[branch].y + box[branch].height / 2 - box[root].height / 2);
  }
  return pos;
}

// Is the user typing somewhere on the page (a node title, the side panel)?
function mindmapEditing() {
  const a = typeof document !== "undefined" ? document.activeElement : null;
  return !!(a && a.closest && a.closest("input, textarea, select, [contenteditable=true]"));
}

function mmSignature(graph) {
  return ((graph && graph.edges) || []).filter((e) => e.kind === "tree").map((e) => e.source + ">" + e.target).join(",")
    + "|" + ((graph && graph.nodes) || []).length;
}

function mmMark(name) { if (typeof window !== "undefined") window[name] = performance.now(); }

function MindmapFlowView(props) {
  const { graph, selectedId, fitSignal, viewSignal, layoutSignal, readOnly } = props;
  const cb = useRef(props);
  cb.current = props;
  const onSelect = useCallback((id) => cb.current.onSelect(id), []);
  const onToggle = useCallback((id) => cb.current.onToggle(id), []);
  const onDragStop = useCallback((id, x, y, t) => cb.current.onDragStop(id, x, y, t), []);
  const onKey = useCallback((k) => cb.current.onKey(k), []);
  const onPaneSelect = useCallback(() => cb.current.onPaneSelect(), []);
  const rf = useReactFlow();
  const [nodes, setNodes, onNodesChange] = useNodesState([]);
  const [edges, setEdges] = useState([]);
  const [overview, setOverview] = useState(false);
  const box = useRef(null);
  const tree = useMemo(() => mmTree(graph), [graph]);
  const treeRef = useRef(tree);
  treeRef.current = tree;
  const known = useRef(new Set());  // node ids the canvas has shown
  const recent = useRef([]);  // the newest nodes (the last batch that arrived), in reading order
  const opened = useRef(false);
  const laidSig = useRef(""), laidKey = useRef("");
  const busy = useRef(false), anim = useRef(0);
  const wantView = useRef(""), wantLayout = useRef(0), serverLayout = useRef(layoutSignal || 0);
  // A layout effect: the merged nodes render in the same frame as the new graph.
  useLayoutEffect(() => {
    const incoming = (graph && graph.nodes) || [];
    const fresh = incoming.filter((n) => !known.current.has(n.id)).map((n) => n.id);
    if (fresh.length && opened.current) recent.current = fresh;
    for (const id of fresh) known.current.add(id);
    setNodes((prev) => mindmapMergeNodes(prev, incoming, selectedId, tree.parents, !!readOnly));
    setEdges((prev) => mindmapMergeEdges(prev, (graph && graph.edges) || []));
  }, [graph, readOnly]);
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

  const size = () => [box.current ? box.current.clientWidth : 0, box.current ? box.current.clientHeight : 0];
  // Look at `focus` (ids, most wanted first), from the current view (`keep`) or afresh.
  const look = (rs, focus, from, duration) => {
    const [W, H] = size();
    const v = mmPlaceView(rs, W, H, focus, from);
    if (v) rf.setViewport(v, { duration });
  };
  // What the reader should see after `reason`: "open", "run" (a run ended, a regrouping was
  // applied: the server asked), "change" (nodes came or went), "keep" (same nodes).
  const viewFor = (rs, reason, anchor) => {
    const t = treeRef.current, live = nodes.some((n) => n.data.live), dur = live ? 0 : 300;
    if (reason === "open") {
      look(rs, mmOpeningFocus(rs, t.root, mmNewestBranch(graph, t), t), null, 0);
      return;
    }
    let vp = rf.getViewport();

    const [W, H] = size();
    const inView = (r) => r && r.x * vp.zoom + vp.x >= 0 && r.y * vp.zoom + vp.y >= 0
      && (r.x + r.w) * vp.zoom + vp.x <= W && (r.y + r.h) * vp.zoom + vp.y <= H;
    const by = new Map(rs.map((r) => [r.id, r]));
    // keep the anchor (the selected node, else the node nearest the view's centre) where it is on screen
    if (anchor && by.has(anchor.id)) {
      const r = by.get(anchor.id);
      vp = { x: anchor.sx - r.x * vp.zoom, y: anchor.sy - r.y * vp.zoom, zoom: vp.zoom };
      rf.setViewport(vp);
    }
    const fresh = recent.current.filter((id) => by.has(id));
    const depth = (id) => { let d = 0; for (let p = t.parents.get(id); p; p = t.parents.get(p)) d += 1; return d; };
    if (reason === "run" && !live && W >= 700 && fresh.some((id) => depth(id) <= 2)) {
      // a run ended that wrote themes or claims near the question (Research): the question and
      // the newest branch (the layout set them level), as on opening; a run deeper in the tree
      // (Expand on a claim) shows what it wrote, below
      // (a phone, one card wide, keeps showing what the run wrote, below)
      const [root, ...rest] = mmOpeningFocus(rs, t.root, mmNewestBranch(graph, t), t);
      look(rs, rest.length ? [rest[0], root, ...rest.slice(1)] : [root], vp, dur);
      return;
    }
    if (fresh.length && (reason === "run" || !mindmapEditing() || fresh.includes(selectedId))) {
      const first = fresh.map((id) => t.parents.get(id)).find((p) => p && by.has(p));
      // after a run a phone shows what was written, the cards it ends on first (a theme and its
      // claims are a column apart); otherwise the new card first, with its parent
      const focus = reason === "run" && W < 700
        ? [...fresh.filter((id) => !t.kids.has(id)), ...fresh.filter((id) => t.kids.has(id))]
        : [...fresh.slice(0, 1), ...(first ? [first] : []), ...fresh.slice(1)];
      if (reason === "run" || !fresh.every((id) => inView(by.get(id)))) { look(rs, focus, vp, dur); return; }
    }
    // the same place (the anchor kept), moved just enough that no card is cut and the selection shows
    const visible = rs.filter(inView).map((r) => r.id);
    const c = { x: (W / 2 - vp.x) / vp.zoom, y: (H / 2 - vp.y) / vp.zoom };
    visible.sort((a, b) => Math.hypot(by.get(a).x - c.x, by.get(a).y - c.y) - Math.hypot(by.get(b).x - c.x, by.get(b).y - c.y));
    const focus = selectedId && by.has(selectedId) ? [selectedId, ...visible.filter((id) => id !== selectedId)] : visible;
    look(rs, focus.length ? focus : [t.root], vp, dur);
  };
  const anchorOf = () => {
    const vp = rf.getViewport(), [W, H] = size();
    const all = rf.getNodes();
    let a = all.find((n) => n.id === selectedId);
    if (!a) {
      const cx = (W / 2 - vp.x) / vp.zoom, cy = (H / 2 - vp.y) / vp.zoom;
      let d = Infinity;
      for (const n of all) {
        if (!known.current.has(n.id) || recent.current.includes(n.id)) continue;
        const e = Math.hypot(n.position.x - cx, n.position.y - cy);
        if (e < d) { d = e; a = n; }
      }
    }
    return a ? { id: a.id, sx: a.position.x * vp.zoom + vp.x, sy: a.position.y * vp.zoom + vp.y } : null;
  };
  // Move the nodes to `pos` (animated when few and not streaming in), then place the view.
  const applyLayout = (pos, reason) => {
    const current = rf.getNodes();
    const rs = mmRects(current, pos);
    const anchor = reason === "open" ? null : anchorOf();
    const live = current.some((n) => n.data.live);
    const duration = reason === "open" || live || current.length > 300 ? 0 : 300;
    const target = (n) => (pos[n.id] ? { x: pos[n.id][0], y: pos[n.id][1] } : n.position);
    cancelAnimationFrame(anim.current);
    if (!duration) {
      setNodes((prev) => prev.map((n) => (pos[n.id] ? { ...n, position: target(n) } : n)));
      viewFor(rs, reason, anchor);
      return Promise.resolve();
    }
    const from = new Map(current.map((n) => [n.id, n.position]));
    const t0 = performance.now();
    viewFor(rs, reason, anchor);
    return new Promise((done) => {
      const step = (t) => {
        const k = Math.min(1, (t - t0) / duration), e = 1 - Math.pow(1 - k, 3);
        setNodes((prev) => prev.map((n) => {
          const p = pos[n.id];
          if (!p) return n;
          const f = from.get(n.id) || { x: p[0], y: p[1] };
          return { ...n, position: k >= 1 ? { x: p[0], y: p[1] } : { x: f.x + (p[0] - f.x) * e, y: f.y + (p[1] - f.y) * e } };
        }));
        if (k < 1) anim.current = requestAnimationFrame(step);
        else done();
      };
      anim.current = requestAnimationFrame(step);
    });
  };
  // Lay out now (one at a time; what changed meanwhile is caught by the next pass of the effect).
  const layout = (reason, persist) => {
    busy.current = true;
    if (typeof window !== "undefined") window.__mindmapBusy = true;
    const current = rf.getNodes(), t = treeRef.current;
    laidSig.current = mmSignature(graph);
    mindmapElkLayout(current, rf.getEdges(), t.root, mmNewestBranch(graph, t))
      .then((pos) => {
        laidKey.current = laidSig.current + "|" + current.map((n) => Math.round(n.measured.width) + "x" + Math.round(n.measured.height)).join(",");
        if (persist) cb.current.onLayout(pos);
        return applyLayout(pos, reason);
      })
      .catch((err) => { console.warn("auto-layout failed", err); viewFor(mmRects(current), reason, null); })
      .finally(() => {
        busy.current = false;
        if (typeof window !== "undefined") window.__mindmapBusy = false;
        if (reason === "open") mmMark("__mindmapReady");
        mmMark("__mindmapSettled");
        setNodes((prev) => [...prev]);  // a pass of the effect below for what arrived meanwhile
      });
  };
  const layoutRef = useRef(layout);
  layoutRef.current = layout;
  useEffect(() => { if (fitSignal && opened.current) wantView.current = "fit"; }, [fitSignal]);
  useEffect(() => { if (viewSignal && opened.current && !wantView.current) wantView.current = "run"; }, [viewSignal]);
  useEffect(() => {
    if (layoutSignal && layoutSignal !== serverLayout.current) { serverLayout.current = layoutSignal; wantLayout.current = layoutSignal; }
  }, [layoutSignal]);
  // The one place that decides: lay out (on open if needed, after a structural change, when a card
  // overlaps another or an edge runs through one, when the server asks), then choose the view.
  useEffect(() => {
    if (busy.current || !nodes.length || !nodes.every((n) => n.measured && n.measured.width)) return;
    if (nodes.length !== ((graph && graph.nodes) || []).length) return;
    const sig = mmSignature(graph);
    const key = sig + "|" + nodes.map((n) => Math.round(n.measured.width) + "x" + Math.round(n.measured.height)).join(",");
    const rs = mmRects(nodes);
    const changed = sig !== laidSig.current;
    if (!opened.current) {
      // laid out on opening (the question level with the newest branch, whatever was stored)
      opened.current = true;
      layout("open", false);
      return;
    }
    const server = wantLayout.current;
    if (server || changed || (key !== laidKey.current && !mmClean(rs, edges))) {
      wantLayout.current = 0;
      const reason = wantView.current === "run" ? "run" : changed ? "change" : "keep";
      if (reason === "run") wantView.current = "";
      layout(reason, !!server && !readOnly);
      return;
    }
    const want = wantView.current;
    if (want) {
      wantView.current = "";
      if (want === "fit") rf.fitView({ padding: 0.15, maxZoom: 1.2, duration: 150 });
      else viewFor(rs, "run", null);
      mmMark("__mindmapSettled");
    }
  }, [nodes, fitSignal, viewSignal, layoutSignal]);
  // The canvas's box changed size (the side panel, the view switch, a rotated phone): the same
  // place, re-fitted so that no card is cut.
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    let w = el.clientWidth, h = el.clientHeight;
    const ro = new ResizeObserver(() => {
      if (!opened.current || busy.current || (el.clientWidth === w && el.clientHeight === h)) return;
      w = el.clientWidth; h = el.clientHeight;
      viewFor(mmRects(rf.getNodes()), "keep", null);
    });
    ro.observe(el);
    return () => ro.disconnect();
  });
  // A node chosen elsewhere (the outline) comes into view.
  useEffect(() => {
    if (!opened.current || !selectedId || busy.current) return;
    const n = rf.getNodes().find((x) => x.id === selectedId);
    if (!n || !n.measured) return;
    const vp = rf.getViewport(), [W, H] = size();
    const sx = n.position.x * vp.zoom + vp.x, sy = n.position.y * vp.zoom + vp.y;
    if (sx < 0 || sy < 0 || sx + n.measured.width * vp.zoom > W || sy + n.measured.height * vp.zoom > H) {
      look(mmRects(rf.getNodes()), [selectedId], vp, 200);
    }
  }, [selectedId]);
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
    // dropped in the open but over or across other cards: the layout puts it back in its place
    if (!best) setTimeout(() => {
      if (!busy.current && !mmClean(mmRects(rf.getNodes()), rf.getEdges())) layoutRef.current("keep", false);
    }, 0);
  }, [onDragStop, rf]);
  const onKeyDown = useCallback((e) => {
    const t = e.target;
    if (cb.current.readOnly) return;  // a viewer: no edit by keys either
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
                    "data-readonly": readOnly ? "true" : "false",
                    style: { width: "100%", height: "100%", outline: "none" } },
    h(ReactFlow, { nodes, edges, nodeTypes: mindmapNodeTypes, onNodesChange, onNodeClick, onNodeDragStop,
                   onPaneClick: onPaneSelect, minZoom: 0.05, maxZoom: 2, deleteKeyCode: null,
                   selectionKeyCode: null, multiSelectionKeyCode: null, nodesConnectable: false,
                   nodesDraggable: !readOnly, disableKeyboardA11y: true,
                   proOptions: { hideAttribution: true } },
      h(Background, { gap: 18 }),
      // the overview map covers a corner of the canvas (cards the view chose included): on request only
      h(Controls, { showInteractive: false },
        nodes.length >= 40 ? h(ControlButton, { onClick: () => setOverview((v) => !v), id: "mm-overview",
                                                title: overview ? "Hide the overview map" : "Show the overview map",
                                                "aria-label": "Overview map", "aria-pressed": overview }, "▦") : null),
      nodes.length >= 40 && overview ? h(MiniMap, { pannable: true, zoomable: true, position: "top-right",
                                                    style: { width: 150, height: 100 } }) : null));
}

// Reflex re-renders the canvas whenever any MapState var changes (a typed title, a notice…) and
// passes new (but equivalent) event callbacks each time: skip those renders; the callbacks are
// read through a ref, so the latest are always used.
const MindmapFlow = memo(MindmapFlowView, (a, b) =>
  a.graph === b.graph && a.selectedId === b.selectedId && a.fitSignal === b.fitSignal
  && a.viewSignal === b.viewSignal && a.layoutSignal === b.layoutSignal && a.readOnly === b.readOnly);

function MindmapCanvas(props) {
  return createElement(ReactFlowProvider, null, createElement(MindmapFlow, props));
}
