"""The map editor's edits: selecting and editing nodes, keyboard commands, moves and layout,
undo, citations (check, rewrite, attach from a library search) and regrouping proposals.

A mixin of `state.mindmap.MapState`: it uses the editor's map in memory (`_nodes`), its
`_edit` (one service call, then show the result) and its live substate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reflex as rx

from bayes_app.errors import NotFound
from bayes_app.usecases import library as app_lib
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases.schemas.maps import CitationOut, NodeOut
from state.offloop import off_loop

if TYPE_CHECKING:
    from state.mindmap import MapLiveState

# what the user's undone edit was, in words (the undo log's action names)
UNDO_LABELS = {
    "add_child": "the new node",
    "add_sibling": "the new node",
    "update_node": "the node edit",
    "move_node": "the move",
    "move_nodes": "the move",
    "delete_subtree": "the deletion",
    "auto_layout": "the auto-layout",
    "attach_citation": "the attached citation",
    "delete_citation": "the citation removal",
    "accept_rewrite": "the accepted rewrite",
    "accept_proposal": "the regrouping",
}


class MapEditing(rx.State, mixin=True):
    """Node, citation and proposal edits of the map editor (see the module docstring)."""

    if TYPE_CHECKING:  # what this mixin uses of MapState (and its AuthState), for mypy only
        user_id: str
        map_id: str
        selected_id: str
        sel_kind: str
        sel_is_root: bool
        search_hits: list[dict[str, str]]
        _nodes: dict[str, dict[str, Any]]
        _fit_after_layout: bool
        _layout_completes: str

        def _load_user(self) -> bool: ...
        def _edit(self, fn: Any, *args: Any, reload: bool = True, **kw: Any) -> Any: ...
        def _live(self) -> MapLiveState: ...
        def _rebuild(self) -> None: ...
        def _reload(self) -> bool: ...
        def _refresh_selected(self, citations: list[dict[str, Any]] | list[CitationOut] | None = None) -> None: ...
        def _patch_node(self, node: NodeOut) -> None: ...
        def _insert_local(self, node: NodeOut, expand_parent: bool) -> None: ...
        def _start(self, kind: str, node_id: str | None = None, prompt: str | None = None) -> bool: ...

    @rx.event
    @off_loop
    def select(self, node_id: str):
        self.confirm_delete = False
        self.selected_id = node_id if node_id in self._nodes else ""
        self._refresh_selected()

    @rx.event
    def clear_selection(self):
        self.selected_id, self.sel_citations, self.confirm_delete = "", [], False

    def _save_field(self, node_id: str, field: str, value: str) -> None:
        """Save a typed field on the node it was typed for (the selection may have moved on)."""
        if not node_id or node_id not in self._nodes:
            return
        if node_id == self.selected_id:
            setattr(self, "sel_" + field, value)
        out = self._edit(app_maps.update_node, node_id, reload=False, **{field: value})
        if out:
            self._patch_node(out)

    @rx.event
    @off_loop
    def set_sel_title(self, value: str, node_id: str):
        self._save_field(node_id, "title", value)

    @rx.event
    @off_loop
    def set_sel_body(self, value: str, node_id: str):
        self._save_field(node_id, "body", value)

    @rx.event
    @off_loop
    def set_sel_kind(self, value: str):
        if self.selected_id and value != self.sel_kind:
            out = self._edit(app_maps.update_node, self.selected_id, reload=False, kind=value)
            if out:
                self.sel_kind = value
                self._patch_node(out)

    def _focus_title(self):
        return rx.call_script(
            "setTimeout(() => { const e = document.getElementById('node-title');"
            " if (e) { e.focus(); e.select(); } }, 60)"
        )

    def _added(self, out: NodeOut | None, child: bool):
        if not out:
            return None
        self._insert_local(out, expand_parent=child)
        self.selected_id = out.id
        self._refresh_selected([])
        return self._focus_title()

    def _add_child(self):
        target = self.selected_id or next((i for i, n in self._nodes.items() if n["parent_id"] is None), "")
        if not target:
            return None
        return self._added(self._edit(app_maps.add_child, target, reload=False), child=True)

    def _add_sibling(self):
        if not self.selected_id:
            return None
        if self.sel_is_root:
            return self._add_child()
        return self._added(self._edit(app_maps.add_sibling, self.selected_id, reload=False), child=False)

    @rx.event
    @off_loop
    def add_child(self):
        return self._add_child()

    @rx.event
    @off_loop
    def add_sibling(self):
        return self._add_sibling()

    def _ask_delete(self) -> None:
        if self.selected_id and not self.sel_is_root:
            self.confirm_delete = True
        elif self.sel_is_root:
            self.error = "The root question cannot be deleted; delete the map instead."

    @rx.event
    @off_loop
    def ask_delete(self):
        self._ask_delete()

    @rx.event
    def cancel_delete(self):
        self.confirm_delete = False

    @rx.event
    @off_loop
    def delete_selected(self):
        self.confirm_delete = False
        if not self.selected_id:
            return
        parent = (self._nodes.get(self.selected_id) or {}).get("parent_id") or ""
        if self._edit(app_maps.delete_subtree, self.selected_id) is not None:
            self.selected_id = parent
            self._refresh_selected()

    @rx.event
    @off_loop
    def toggle(self, node_id: str):
        n = self._nodes.get(node_id)
        if n is not None:
            out = self._edit(app_maps.update_node, node_id, reload=False, collapsed=not n["collapsed"])
            if out:
                self._patch_node(out)
                if node_id == self.selected_id:
                    self.sel_collapsed = out.collapsed
                if not out.collapsed:  # a branch came back: make room for it
                    self._request_layout(fit=False)

    @rx.event
    def toggle_selected(self):
        if self.selected_id:
            return type(self).toggle(self.selected_id)  # type: ignore[operator]
        return None

    @rx.event
    @off_loop
    def drag_stop(self, node_id: str, x: float, y: float, target_id: str):
        """A drag ended: dropped onto another node → re-parent under it; else keep the spot."""
        node = self._nodes.get(node_id)
        if node is None:
            return
        if target_id and target_id in self._nodes and target_id != node["parent_id"] and node["parent_id"]:
            if self._edit(app_maps.move_node, node_id, target_id) is not None:
                self._request_layout(fit=False)
                self.notice = f"Moved under “{self._nodes[target_id]['title'][:60]}”."
            else:
                self._rebuild()  # refused (e.g. under its own child): snap back
            return
        out = self._edit(app_maps.update_node, node_id, reload=False, position={"x": x, "y": y})
        if out:
            self._patch_node(out)

    @rx.event
    @off_loop
    def layout(self):
        """Auto-layout: the canvas lays the nodes out with their measured sizes (ELK) and
        answers with `apply_layout`."""
        self.notice = ""
        self._request_layout(fit=True)

    def _request_layout(self, fit: bool) -> None:
        self._fit_after_layout = self._fit_after_layout or fit
        self._live().layout_signal += 1

    @rx.event
    @off_loop
    def apply_layout(self, positions: dict):
        """The canvas's layout: save every position at once (one undoable edit)."""
        mine = {i: p for i, p in (positions or {}).items() if i in self._nodes}
        completes, self._layout_completes = self._layout_completes, ""
        if (
            mine
            and self._edit(app_maps.set_positions, mine, action="auto_layout", completes=completes or None) is not None
        ) and self._fit_after_layout:
            self._live().view_signal += 1
        self._fit_after_layout = False

    @rx.event
    def fit(self):
        self._live().fit_signal += 1

    @rx.event
    @off_loop
    def undo(self):
        self._undo()

    def _undo(self) -> None:
        if not self._load_user():
            return
        try:
            action = app_maps.undo(self.user_id, self.map_id)
        except NotFound:
            action = None
        except app_maps.MapError as err:  # a viewer
            self.error = err.message
            return
        if not action:
            self.notice = "Nothing to undo."
        elif action.startswith("run_"):  # every write of one run (maps/agent_writes)
            self.notice = "Undone: the run's changes."
        else:
            self.notice = f"Undone: {UNDO_LABELS.get(action, action.replace('_', ' '))}."
        self._reload()

    @rx.event
    @off_loop
    def key(self, key: str):
        """Canvas keyboard: Enter sibling, Tab child, Delete, F2 rename, Ctrl/Cmd-Z undo.
        Handled here, not chained as another event (which would cost a websocket round trip)."""
        if key == "Undo":
            self._undo()
            return None
        if key == "Tab":
            return self._add_child()
        if not self.selected_id:
            return None
        if key == "Enter":
            return self._add_sibling()
        if key == "Delete":
            self._ask_delete()
            return None
        if key == "F2":
            return self._focus_title()
        return None

    # ---- citations -----------------------------------------------------------------------------
    @rx.event
    @off_loop
    def check_support(self):
        if not self.selected_id:
            return
        if app_maps.model_judges_support():  # the model judges: a billed run, followed live
            if self._start("check_support", node_id=self.selected_id):
                self.notice = "Checking support with the model…"
            return
        before = [c["score"] for c in self.sel_citations]
        out = self._edit(app_maps.check_support, self.selected_id)
        if out is not None:
            after = [c["score"] for c in self.sel_citations]
            self.notice = (
                "Support checked: the scores changed."
                if after != before
                else "Support checked: no change" + (f" (score {', '.join(after)})." if any(after) else ".")
            )

    @rx.event
    @off_loop
    def accept_rewrite(self, citation_id: str):
        if self._edit(app_maps.accept_rewrite, citation_id) is not None:
            self.notice = "Rewrite accepted."

    @rx.event
    @off_loop
    def remove_citation(self, citation_id: str):
        self._edit(app_maps.delete_citation, citation_id)

    @rx.event
    def set_search_q(self, value: str):
        self.search_q = value

    @rx.event
    @off_loop
    def search_library(self, form: dict | None = None):
        from bayes_app.usecases.views import best_quote

        if form and "q" in form:
            self.search_q = form["q"]
        self.search_error = ""
        if not self._load_user() or not self.search_q.strip():
            self.search_hits = []
            return
        try:
            hits = app_lib.search(self.user_id, self.search_q, 8)
        except Exception as err:  # noqa: BLE001 - keep the editor alive
            self.search_error = f"Search is unavailable right now ({type(err).__name__})."
            self.search_hits = []
            return
        self.search_hits = [
            {
                "chunk_id": h.chunk_id,
                "title": h.title,
                "page": str(h.page),
                "quote": best_quote(h.text, self.search_q) or h.text[:300],
            }
            for h in hits
        ]
        if not hits:
            self.search_error = "No passages found."

    @rx.event
    @off_loop
    def attach(self, chunk_id: str, quote: str):
        if not self.selected_id:
            self.error = "Select a node to cite this passage on."
            return
        if self._edit(app_maps.attach_citation, self.selected_id, chunk_id, quote) is not None:
            self.notice = "Citation attached."

    # ---- proposals -----------------------------------------------------------------------------
    @rx.event
    @off_loop
    def decide(self, proposal_id: str, accept: bool):
        fn = app_maps.accept_proposal if accept else app_maps.reject_proposal
        if self._edit(fn, proposal_id) is not None:
            if accept:  # the canvas's layout joins the regrouping's undo step
                self._layout_completes = "accept_proposal"
                self._request_layout(fit=True)
            self.notice = "Regrouping applied." if accept else "Proposal rejected."
