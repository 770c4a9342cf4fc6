"""The map as an outline: an indented ARIA tree (WAI-ARIA tree view pattern) beside the canvas.

One flat `role="tree"` list of `role="treeitem"` rows carrying `aria-level`, `aria-expanded`
(rows with children), `aria-posinset`/`aria-setsize` and `aria-selected`, with one roving
tab stop. Keys (the pattern's, plus the editor's edits):
  ↑ ↓ Home End  move the focus (the selection follows it)   → expand, or go to the first child
  ←  collapse, or go to the parent        F2  rename in place (Enter saves, Escape cancels)
  Enter  add a sibling (under the root question: a child)   Shift+Enter  add a child
  Alt+↑ / Alt+↓  move up / down     Alt+→ / Alt+←  indent / outdent
  Delete  delete the branch (Ctrl/Cmd-Z or Undo brings it back)
A viewer's outline (`read_only`) moves the focus and nothing else.
Rows come from `bayes_app.maps.outline.outline_rows` (text only: React renders it as text).
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.event import passthrough_event_spec
from reflex.vars.base import Var

_JS = r"""
function OutlineRowView({ row, selected, focused, editing, onRenameDone }) {
  const h = createElement;
  const [draft, setDraft] = useState(row.title);
  const input = useRef(null), done = useRef(false);
  useEffect(() => {
    if (!editing) return;
    done.current = false;
    setDraft(row.title);
    setTimeout(() => input.current && input.current.select(), 0);
  }, [editing]);
  const finish = (save) => {  // once: Enter or Escape, then the blur as the input goes away
    if (done.current) return;
    done.current = true;
    onRenameDone(row.id, save ? draft : null);
  };
  const attrs = { role: "treeitem", "aria-level": row.level, "aria-posinset": row.posinset, "aria-setsize": row.setsize,
    "aria-selected": selected ? "true" : "false", tabIndex: focused ? 0 : -1, "data-id": row.id,
    className: "ol-row ol-kind-" + row.kind + (row.hue >= 0 ? " mm-hue-" + row.hue : "")
      + (selected ? " ol-selected" : ""),
    style: { paddingLeft: (row.level - 1) * 18 + 6 + "px" } };
  if (row.expanded) attrs["aria-expanded"] = row.expanded;
  const twisty = h("span", { className: "ol-twisty", "aria-hidden": "true", "data-toggle": row.expanded ? "1" : "" },
    row.expanded === "true" ? "▾" : row.expanded === "false" ? "▸" : "");
  const title = editing
    ? h("input", { ref: input, className: "ol-rename", value: draft, "aria-label": "Title",
        onChange: (e) => setDraft(e.target.value), onBlur: () => finish(true),
        onKeyDown: (e) => { e.stopPropagation();
          if (e.key === "Enter") { e.preventDefault(); finish(true); }
          else if (e.key === "Escape") { e.preventDefault(); finish(false); } } })
    : h("span", { className: "ol-title" }, row.title || "(untitled)");
  const chip = row.page
    ? h("a", { className: "ol-chip", href: "/documents/" + encodeURIComponent(row.document_id) + "?page="
        + encodeURIComponent(row.page) + "&quote=" + encodeURIComponent(row.cite_quote || row.quote),
        tabIndex: -1, onClick: (e) => e.stopPropagation(), title: row.citations + " citation(s)" }, "p. " + row.page)
    : (row.citations > 0 ? h("span", { className: "ol-chip" }, "❝ " + row.citations) : null);
  return h("li", attrs,
    h("div", { className: "ol-line" }, twisty, h("span", { className: "ol-kind" }, row.kind), title, chip),
    row.quote ? h("div", { className: "ol-quote" }, "“" + row.quote + "”") : null,
    row.challenged ? h("div", { className: "ol-challenged" }, "⚠ " + row.challenged) : null);
}
const OutlineRow = memo(OutlineRowView, (a, b) => a.row === b.row && a.selected === b.selected
  && a.focused === b.focused && a.editing === b.editing);

function MindmapOutlineView(props) {
  const { rows, selectedId, editRequest } = props;
  const cb = useRef(props);
  cb.current = props;
  const h = createElement;
  const list = rows || [];
  const [focusId, setFocusId] = useState("");
  const [editId, setEditId] = useState("");
  const tree = useRef(null);
  const index = useMemo(() => new Map(list.map((r, i) => [r.id, i])), [rows]);
  const current = index.has(focusId) ? focusId : (index.has(selectedId) ? selectedId : (list[0] ? list[0].id : ""));
  useEffect(() => { if (selectedId && index.has(selectedId)) setFocusId(selectedId); }, [selectedId]);
  useEffect(() => {  // rename in place when the editor asks ("<id>:<n>", after adding a node from here)
    const id = (editRequest || "").split(":")[0];
    if (id) { setEditId(id); setFocusId(id); }
  }, [editRequest]);
  useEffect(() => {  // keep the keyboard focus on the focused row when the rows are replaced
    const el = tree.current;
    if (!el || editId || !el.contains(document.activeElement)) return;
    const row = el.querySelector('[role="treeitem"][tabindex="0"]');
    if (row && row !== document.activeElement) row.focus();
  });
  if (typeof window !== "undefined" && list.length) window.__outlineRendered = performance.now();
  const go = (id) => {
    if (!id) return;
    setFocusId(id);
    const row = tree.current && tree.current.querySelector('[data-id="' + CSS.escape(id) + '"]');
    if (row) { row.focus(); row.scrollIntoView({ block: "nearest" }); }
    if (id !== selectedId) cb.current.onSelect(id);
  };
  const onKeyDown = (e) => {
    const i = index.get(current);
    if (i === undefined) return;
    const row = list[i];
    const mod = e.ctrlKey || e.metaKey;
    let cmd = "", move = "";
    if (e.altKey && e.key === "ArrowUp") cmd = "up";
    else if (e.altKey && e.key === "ArrowDown") cmd = "down";
    else if (e.altKey && e.key === "ArrowRight") cmd = "indent";
    else if (e.altKey && e.key === "ArrowLeft") cmd = "outdent";
    else if (mod && (e.key === "z" || e.key === "Z")) cmd = "undo";
    else if (e.key === "Enter") cmd = e.shiftKey ? "child" : "sibling";
    else if (e.key === "Delete" || e.key === "Backspace") cmd = "delete";
    else if (e.key === "F2") { e.preventDefault(); if (!cb.current.readOnly) setEditId(row.id); return; }
    else if (e.key === "ArrowDown") move = list[i + 1] && list[i + 1].id;
    else if (e.key === "ArrowUp") move = list[i - 1] && list[i - 1].id;
    else if (e.key === "Home") move = list[0].id;
    else if (e.key === "End") move = list[list.length - 1].id;
    else if (e.key === "ArrowRight") {
      if (row.expanded === "false") cmd = "toggle";
      else if (row.expanded === "true") move = list[i + 1] && list[i + 1].id;
    } else if (e.key === "ArrowLeft") {
      if (row.expanded === "true") cmd = "toggle";
      else move = row.parent_id;
    } else return;
    e.preventDefault();
    e.stopPropagation();
    if (cmd && cb.current.readOnly) return;  // a viewer: reading keys only (collapsing is saved on the map)
    if (move) go(move);
    else if (cmd === "toggle") cb.current.onToggle(row.id);
    else if (cmd) cb.current.onCommand(cmd, row.id);
  };
  const onClick = (e) => {
    const li = e.target.closest && e.target.closest('[role="treeitem"]');
    if (!li || (e.target.closest && e.target.closest("input"))) return;
    const id = li.getAttribute("data-id");
    if (e.target.closest('[data-toggle="1"]') && !cb.current.readOnly) {
      setFocusId(id); cb.current.onToggle(id); return;
    }
    go(id);
  };
  const onDoubleClick = (e) => {
    const li = e.target.closest && e.target.closest('[role="treeitem"]');
    if (li && !cb.current.readOnly) setEditId(li.getAttribute("data-id"));
  };
  const onRenameDone = useCallback((id, value) => {
    setEditId("");
    if (value !== null) cb.current.onRename(id, value);
    setTimeout(() => { const r = tree.current && tree.current.querySelector('[data-id="' + CSS.escape(id) + '"]');
                       if (r) r.focus(); }, 0);
  }, []);
  return h("ul", { role: "tree", "aria-label": "Map outline", id: "map-outline", className: "ol-tree", ref: tree,
                   onKeyDown, onClick, onDoubleClick },
    list.map((r) => h(OutlineRow, { key: r.id, row: r, selected: r.id === selectedId, focused: r.id === current,
                                     editing: r.id === editId, onRenameDone })));
}

const MindmapOutline = memo(MindmapOutlineView, (a, b) =>
  a.rows === b.rows && a.selectedId === b.selectedId && a.editRequest === b.editRequest && a.readOnly === b.readOnly);
"""

# a colour per first-level branch (Radix colour scales), shared by the canvas and the outline
HUE_COLORS = ("blue", "grass", "orange", "purple", "cyan", "crimson", "amber", "teal")


def hue_css() -> dict[str, Any]:
    """Branch colours: a tinted theme box, a coloured edge on claims and notes."""
    css: dict[str, Any] = {}
    for k, c in enumerate(HUE_COLORS):
        css[f".mm-node.mm-kind-theme.mm-hue-{k}"] = {"background": f"var(--{c}-3)", "border_color": f"var(--{c}-8)"}
        css[f".mm-node.mm-hue-{k}"] = {"border_left": f"4px solid var(--{c}-9)"}
        css[f".ol-row.mm-hue-{k}"] = {"border_left": f"3px solid var(--{c}-9)"}
        css[f".ol-row.ol-kind-theme.mm-hue-{k} .ol-title"] = {"color": f"var(--{c}-11)"}
    return css


CSS: dict[str, Any] = {
    ".ol-tree": {"list_style": "none", "margin": "0", "padding": "0.25em 0", "font_size": "14px"},
    ".ol-row": {
        "padding": "3px 6px",
        "border_radius": "4px",
        "cursor": "default",
        "outline": "none",
        "margin_bottom": "1px",
    },
    ".ol-row:focus-visible": {"box_shadow": "0 0 0 2px var(--accent-8)"},
    ".ol-row.ol-selected": {"background": "var(--accent-a4)"},
    ".ol-line": {"display": "flex", "align_items": "baseline", "gap": "6px", "min_width": "0"},
    ".ol-twisty": {
        "width": "1.1em",
        "flex": "none",
        "color": "var(--gray-11)",
        "cursor": "pointer",
        "text_align": "center",
    },
    ".ol-kind": {"font_size": "11px", "text_transform": "uppercase", "color": "var(--gray-11)", "flex": "none"},
    ".ol-title": {"flex": "1", "min_width": "0", "overflow_wrap": "anywhere"},
    ".ol-kind-question .ol-title": {"font_weight": "600"},
    ".ol-kind-theme .ol-title": {"font_weight": "600"},
    ".ol-kind-note .ol-title": {"font_style": "italic"},
    ".ol-rename": {"flex": "1", "min_width": "0", "font": "inherit"},
    ".ol-chip": {
        "flex": "none",
        "font_size": "12px",
        "white_space": "nowrap",
        "background": "var(--accent-a4)",
        "color": "var(--accent-11)",
        "border_radius": "8px",
        "padding": "0 6px",
        "text_decoration": "none",
    },
    ".ol-challenged": {"font_size": "12px", "color": "var(--orange-11)", "margin_left": "calc(1.1em + 6px)"},
    ".ol-quote": {
        "font_size": "12.5px",
        "color": "var(--gray-11)",
        "margin_left": "calc(1.1em + 6px)",
        "overflow": "hidden",
        "display": "-webkit-box",
        "-webkit-line-clamp": "2",
        "-webkit-box-orient": "vertical",
    },
    **hue_css(),
}


class MindmapOutline(rx.Component):
    """`<MindmapOutline>`: the ARIA tree defined in this module's custom code."""

    tag = "MindmapOutline"

    rows: Var[list[dict[str, Any]]]
    selected_id: Var[str]
    edit_request: Var[str]  # "<node id>:<n>": rename that row in place (a new value each time)
    read_only: Var[bool]  # a viewer: moving through the rows only

    on_select: rx.EventHandler[passthrough_event_spec(str)]
    on_toggle: rx.EventHandler[passthrough_event_spec(str)]
    on_command: rx.EventHandler[passthrough_event_spec(str, str)]  # (command, node id)
    on_rename: rx.EventHandler[passthrough_event_spec(str, str)]  # (node id, title)

    def add_imports(self) -> dict:
        return {
            "react": [
                rx.ImportVar(tag=t)
                for t in ("createElement", "memo", "useState", "useEffect", "useCallback", "useRef", "useMemo")
            ]
        }

    def add_custom_code(self) -> list[str]:
        return [_JS]


def mindmap_outline(**props: Any) -> rx.Component:
    return MindmapOutline.create(**props)
