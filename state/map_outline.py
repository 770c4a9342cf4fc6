"""The map editor's outline view and its view switch (canvas / outline / both), and the
proposal drawer's collapsed state.

A mixin of `state.mindmap.MapState`: the outline's commands go through the same map services
as the canvas's (one transaction each, undoable) and show the result the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reflex as rx

from bayes_app.usecases import maps as app_maps
from bayes_app.usecases.schemas.maps import CitationOut, NodeOut
from state.offloop import off_loop

if TYPE_CHECKING:
    from state.mindmap import MapLiveState

VIEWS = ("canvas", "outline", "both")
PHONE_MAX_PX = 1024  # below this width (the layout's `lg` breakpoint) a map opens as its outline
# the kinds of command the outline sends, by what they do
MOVES = ("up", "down", "indent", "outdent")


class MapOutline(rx.State, mixin=True):
    """View switch and outline commands of the map editor (see the module docstring)."""

    if TYPE_CHECKING:  # what this mixin uses of MapState (and its AuthState), for mypy only
        selected_id: str
        _rename_n: int
        _nodes: dict[str, dict[str, Any]]

        def _edit(self, fn: Any, *args: Any, reload: bool = True, **kw: Any) -> Any: ...
        def _live(self) -> MapLiveState: ...
        def _rebuild(self) -> None: ...
        def _refresh_selected(self, citations: list[dict[str, Any]] | list[CitationOut] | None = None) -> None: ...
        def _insert_local(self, node: NodeOut, expand_parent: bool) -> None: ...
        def _request_layout(self, fit: bool) -> None: ...
        def _save_field(self, node_id: str, field: str, value: str) -> None: ...
        def _undo(self) -> None: ...

    @rx.event
    @off_loop
    def set_view(self, mode: str | list[str]):
        if isinstance(mode, str) and mode in VIEWS:
            self.view_mode = mode
            if mode == "both":  # outline, canvas and panel side by side would leave the canvas ~370 px wide
                self.side_open = False
            self._rebuild()
            self._live().view_signal += 1  # the canvas's box changed size: a readable view again

    @rx.event
    @off_loop
    def default_view(self, width: float | None):
        """The first view of this tab: the outline on a phone, the canvas on a larger screen."""
        if self.view_mode == "":
            narrow = isinstance(width, (int, float)) and width < PHONE_MAX_PX
            self.view_mode = "outline" if narrow else "canvas"
            self._rebuild()

    @rx.event
    def toggle_side(self):
        """Show or hide the node panel; the canvas takes the width (and re-places its view)."""
        self.side_open = not self.side_open

    @rx.event
    def set_proposals_open(self, value: bool):
        self.proposals_open = bool(value)

    @rx.event
    @off_loop
    def outline_rename(self, node_id: str, title: str):
        self._save_field(node_id, "title", title)

    @rx.event
    @off_loop
    def outline_command(self, cmd: str, node_id: str):
        """One command of the outline (its keys and its toolbar) on `node_id`."""
        if cmd == "undo":
            self._undo()
            return
        if node_id not in self._nodes:
            return
        if node_id != self.selected_id:
            self.selected_id = node_id
            self._refresh_selected()
        node = self._nodes[node_id]
        if cmd == "rename":
            self._ask_rename(node_id)
        elif cmd in ("child", "sibling"):
            self._outline_add(node_id, child=cmd == "child" or node["parent_id"] is None)
        elif cmd in MOVES:
            if self._edit(app_maps.move_step, node_id, cmd) is not None:
                self._request_layout(fit=False)
        elif cmd == "delete":
            self._outline_delete(node_id, node)

    def _outline_add(self, node_id: str, child: bool) -> None:
        """A new node under `node_id` (or after it), selected and open for renaming."""
        fn = app_maps.add_child if child else app_maps.add_sibling
        out = self._edit(fn, node_id, reload=False)
        if out:
            self._insert_local(out, expand_parent=child)
            self.selected_id = out.id
            self._refresh_selected([])
            self._ask_rename(out.id)

    def _outline_delete(self, node_id: str, node: dict[str, Any]) -> None:
        """The node's subtree deleted (never the root's); its parent selected."""
        if node["parent_id"] is None:
            self.error = "The root question cannot be deleted; delete the map instead."
            return
        title = (node["title"] or "(untitled)")[:60]
        if self._edit(app_maps.delete_subtree, node_id) is not None:
            self.selected_id = node["parent_id"]
            self._refresh_selected()
            self.notice = f"Deleted “{title}” and everything under it. Undo brings it back."

    def _ask_rename(self, node_id: str) -> None:
        self._rename_n += 1
        self.outline_edit = f"{node_id}:{self._rename_n}"
