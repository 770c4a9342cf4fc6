"""The map editor's living-map parts: "Watch for new papers", the "N new papers may change this
map" badge, update proposals previewed item by item (accept all, some or none), and a node's
"superseded by <paper>" line.

A mixin of `state.mindmap.MapState` (its `_nodes`, `_edit`, `_reload` and `proposals`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import reflex as rx

from bayes_app.usecases import living as app_living
from state.offloop import off_loop

T = TypeVar("T")

ACTION_WORDS = {"insert": "under", "create": "new theme", "counter": "counterpoint to"}
TITLE_CHARS = 90  # a paper's title in the preview (a bad title extraction can be a paragraph)


def _short(title: str | None) -> str:
    t = " ".join((title or "").split()) or "Untitled"
    return t if len(t) <= TITLE_CHARS else t[: TITLE_CHARS - 1].rstrip() + "…"


def update_row(p: dict[str, Any]) -> dict[str, Any]:
    """An update proposal as the drawer shows it: its papers, cost and items (where each goes)."""
    docs = p["payload"].get("documents", [])
    items = []
    for it in p["payload"].get("items", []):
        where = {
            "insert": " › ".join(it.get("path") or [it.get("parent_title") or ""]),
            "create": it.get("theme_title") or "",
            "counter": it.get("target_title") or "",
        }.get(it.get("action"), "")
        items.append(
            {
                "key": f"{p['id']}:{it['n']}",
                "n": it["n"],
                "text": it.get("text", ""),
                "action": ACTION_WORDS.get(it.get("action"), ""),
                "where": where,
                "paper": f"{_short(it.get('document_title'))}, p. {it.get('page')}",
            }
        )
    cost = app_living.cost_words(p.get("charged_credits"))
    return {
        "update": True,
        "doc_ids": [d["id"] for d in docs if d.get("id")],
        "papers": f"{len(docs)} new paper(s): " + "; ".join(_short(d.get("title")) for d in docs),
        "cost": cost,
        "items": items,
    }


def challenge_lines(n: dict[str, Any]) -> list[str]:
    """'Superseded by <paper> (evidence arrived <date>)' for each newer paper contradicting the node."""
    return [str(c.get("line") or "") for c in n.get("challenged_by") or [] if c.get("line")]


class MapUpdates(rx.State, mixin=True):
    """Living-map events and vars of the map editor (see the module docstring)."""

    if TYPE_CHECKING:  # what this mixin uses of MapState (and its AuthState), for mypy only
        map_id: str
        proposals: list[dict[str, Any]]

        def _as_user(
            self, use_case: Callable[..., T], *args: Any, error_var: str | None = None, **kw: Any
        ) -> tuple[T | None, Any]: ...
        def _reload(self) -> bool: ...
        def _request_layout(self, fit: bool) -> None: ...

    watch_new_papers: bool = False
    new_papers: int = 0
    sel_challenges: list[str] = []
    skipped: list[str] = []  # update items ("proposal:n") the user unticked

    def _apply_living(self, view: dict[str, Any]) -> None:
        self.watch_new_papers = bool(view.get("watch_new_papers"))
        self._count_new_papers()

    def _count_new_papers(self) -> None:
        """The badge: the distinct papers of the pending update proposals (rows of `proposals`)."""
        self.new_papers = len({d for p in self.proposals for d in p.get("doc_ids") or []})

    @rx.event
    @off_loop
    def set_watch(self, value: bool):
        watching, refused = self._as_user(app_living.set_watch, self.map_id, bool(value), error_var="error")
        if refused is not None:  # the map is gone
            return refused
        self.watch_new_papers = bool(watching)
        self.notice = "Watching for new papers." if self.watch_new_papers else "No longer watching for new papers."
        return None

    @rx.event
    def toggle_item(self, key: str, on: bool):
        self.skipped = [k for k in self.skipped if k != key] + ([] if on else [key])

    @rx.event
    @off_loop
    def accept_items(self, proposal_id: str, everything: bool):
        """Accept all items of an update proposal, or the ticked ones (none ticked: declined)."""
        p = next((p for p in self.proposals if p["id"] == proposal_id), None)
        if p is None:
            return None
        picked = [it["n"] for it in p["items"] if everything or it["key"] not in self.skipped]
        _, refused = self._as_user(app_living.accept_update, self.map_id, proposal_id, picked, error_var="error")
        if refused is not None:
            self._reload()
            return refused
        self.skipped = [k for k in self.skipped if not k.startswith(proposal_id + ":")]
        self.notice = f"{len(picked)} claim(s) added from new papers." if picked else "Update declined."
        self._reload()
        if picked:  # the canvas lays the new nodes out; that layout joins the acceptance's undo step
            self._layout_completes = "accept_update"
            self._request_layout(fit=True)
        return None
