"""Mindmap editor state: the map, the selected node's panel, runs on the map, and live sync.

The map lives in backend-only vars (`_nodes`, `_relations`); the browser gets `graph`, a
compact projection for the canvas (visible nodes, tree + `contradicts` edges), kept with the
other per-write values in the `MapLiveState` substate so a new node re-renders the canvas and
not the whole editor. Every edit calls `bayes_app.maps` at once (one transaction each) and
shows the result.

Live: one background task per page load (`watch`, started from on_load, so a reload or a
navigation cancels it and the next load starts a fresh one) iterates the map's changes
(`bayes_app.maps.watch.MapWatcher`: its active run's events, runs started elsewhere, other
tabs' edits) and moves each into the vars.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from typing import Any

import reflex as rx

from bayes_app.errors import DomainError, NotFound
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases.maps import LiveChange, LiveMap, MapChange, build_graph, outline_rows
from bayes_app.usecases.schemas.maps import CitationOut, MapView, NodeOut
from bayes_app.usecases.views import NodeKind, display_credits, foreign_label, format_credits, support_level
from state.auth import AuthState
from state.map_edits import MapEditing
from state.map_outline import MapOutline
from state.map_share import MapSharing, here
from state.map_updates import MapUpdates, challenge_lines, update_row
from state.offloop import off_loop, run_off_loop

EDITABLE_KINDS = [k for k in NodeKind.ALL if k != NodeKind.QUESTION]


def _citation_row(c: dict[str, Any]) -> dict[str, Any]:
    quote = " ".join((c.get("quote") or "").split())
    score = c.get("support_score")
    return {
        "id": c["id"],
        "title": c.get("title") or "Deleted document",
        "page": str(c.get("page") or ""),
        "quote": quote[:400] + ("…" if len(quote) > 400 else ""),
        "origin": c.get("origin") or "",
        "href": f"/documents/{c.get('document_id')}?page={c.get('page')}&quote=" + urllib.parse.quote(quote[:300]),
        "label": c.get("support_label") or "",
        "score": "" if score is None else f"{score:.2f}",
        "level": support_level(score),
        "rewrite": c.get("suggested_rewrite") or "",
        "authors": ", ".join((c.get("authors") or [])[:3]),
        "year": str(c.get("year") or ""),
        "language": foreign_label(c.get("language")),
        "cited_in_library": _cited_label(c.get("cited_in_library") or 0),
    }


def _cited_label(n: int) -> str:
    return "" if not n else f"cited by {n} paper{'s' if n != 1 else ''} in your library"


class MapState(MapUpdates, MapOutline, MapEditing, MapSharing, AuthState):
    # the map
    map_id: str = ""
    export_style: str = "apa"  # the reference style of the Markdown and DOCX exports
    map_title: str = ""
    offline_map: bool = False
    offline_mode: bool = False
    missing: bool = False
    error: str = ""
    notice: str = ""
    # the selected node
    selected_id: str = ""
    sel_title: str = ""
    sel_body: str = ""
    sel_kind: str = ""
    sel_origin: str = ""
    sel_is_root: bool = False
    sel_collapsed: bool = False
    sel_citations: list[dict[str, str]] = []
    confirm_delete: bool = False
    # library search from the map
    search_q: str = ""
    search_hits: list[dict[str, str]] = []
    search_error: str = ""
    # runs
    research_q: str = ""
    message_draft: str = ""
    live_run_id: str = ""
    live_kind: str = ""
    run_route: str = ""
    run_outcome: str = ""
    run_cost: str = ""
    run_cost_exact: str = ""
    proposals: list[dict[str, Any]] = []
    proposals_open: bool = False  # the proposal drawer, else its badge (a reload shows the badge)
    # the view: "canvas", "outline" or "both" ("" until the browser's width chose the default)
    view_mode: str = ""
    side_open: bool = True  # the node panel beside the canvas (wide screens; collapsed: the canvas is wider)
    outline_edit: str = ""  # "<node id>:<n>": the outline renames that row in place
    _rename_n: int = 0
    _first_cites: dict[str, dict[str, Any]] = {}  # node id → its first citation (the outline's quote)
    _nodes: dict[str, dict[str, Any]] = {}
    _relations: list[dict[str, Any]] = []
    _live_ids: list[str] = []
    _live_count: int = 0
    _run_finding: str = ""  # what a run that found nothing says ("No counter-evidence found …")
    _cursor: str = ""
    _revision: int = 0
    _gen: int = 0
    _fit_after_layout: bool = False  # fit the view once the requested layout is saved
    _layout_completes: str = ""  # the edit the requested layout finishes (one undo step with it)

    def _live(self) -> MapLiveState:
        """The substate with what changes while a run writes (see MapLiveState)."""
        # Reflex loads a state's substates with it, so the synchronous cache lookup is enough
        # (`get_state` is async, and most handlers here are sync).
        return self._get_state_from_cache(MapLiveState)

    def _note(self, text: str) -> None:
        self._live().run_note = text

    @rx.var
    def running(self) -> bool:
        return self.live_run_id != ""

    @rx.var
    def export_base(self) -> str:
        return f"/api/v1/mindmaps/{self.map_id}/export" if self.map_id else ""

    @rx.event
    def pick_export_style(self, style: str) -> None:
        """The reference style picked beside the export buttons (an unknown one is ignored)."""
        if style in app_maps.EXPORT_STYLES:
            self.export_style = style

    @rx.var
    def live_label(self) -> str:
        return app_runs.label(self.live_kind)

    # ---- loading -------------------------------------------------------------------------
    def _apply_view(self, model: MapView) -> None:
        self.map_title, self.offline_map, self._revision = model.title, model.offline, model.revision
        view = model.model_dump()  # the editor's in-memory map holds plain dicts, as run events do (LiveMap)
        by_node: dict[str, list[dict]] = {}
        for c in view["citations"]:
            by_node.setdefault(c["node_id"], []).append(c)
        self._first_cites = {
            nid: {k: cs[0][k] for k in ("quote", "page", "document_id")} for nid, cs in by_node.items()
        }
        self._nodes = {n["id"]: n for n in view["nodes"]}
        self._relations = view["relations"]
        self.proposals = [self._proposal_row(p) for p in view["proposals"]]
        self._apply_living(view)
        self._rebuild()
        self._refresh_selected(by_node.get(self.selected_id, []))

    def _proposal_row(self, p: dict[str, Any]) -> dict[str, Any]:
        groups = []
        for g in p["payload"].get("groups", []):
            members = [self._nodes[i]["title"] or "(untitled)" for i in g.get("node_ids", []) if i in self._nodes]
            groups.append({"title": str(g.get("title") or ""), "members": members})
        kind = {"chapters": "Chapters", "split": "Split", "update": "New papers"}.get(p["kind"], "Restructure")
        row = {"id": p["id"], "kind": kind, "groups": groups, "update": False, "papers": "", "cost": "", "items": []}
        row["doc_ids"], row["run_id"] = [], p.get("run_id") or ""
        return {**row, **update_row(p)} if p["kind"] == "update" else row

    def _rebuild(self) -> None:
        live = self._live()
        live.graph = build_graph(
            self._nodes, self._relations, live_layout=self.live_run_id != "", live_ids=set(self._live_ids)
        )
        live.node_count = len(self._nodes)
        live.outline = outline_rows(self._nodes, self._first_cites) if self.view_mode in ("outline", "both") else []

    def _reload(self) -> bool:
        """Read the whole map; False when it is gone (deleted, or never ours)."""
        try:
            view = app_maps.map_view(self.user_id, self.map_id)
        except NotFound:
            self._gone()
            return False
        self.my_role = view.role or ""
        self._apply_view(view)
        return True

    def _refresh_selected(self, citations: list[dict[str, Any]] | list[CitationOut] | None = None) -> None:
        n = self._nodes.get(self.selected_id)
        if n is None:
            self.selected_id, self.sel_citations = "", []
            return
        self.sel_title, self.sel_body, self.sel_kind = n["title"], n["body"], n["kind"]
        self.sel_origin, self.sel_is_root, self.sel_collapsed = n["created_by"], n["parent_id"] is None, n["collapsed"]
        self.sel_challenges = challenge_lines(n)
        if citations is None:
            citations = app_maps.node_citations(self.user_id, self.map_id, n["id"])
        self.sel_citations = [_citation_row(c if isinstance(c, dict) else c.model_dump()) for c in citations]

    @rx.event
    @off_loop
    def load(self):
        """on_load of /maps/<id>: the map, then follow its live run and other tabs' edits."""
        if not self._load_user():
            return None
        self.offline_mode = app_runs.offline()
        self.error = self.notice = ""
        self.missing, self.confirm_delete, self.proposals_open = False, False, False
        self.gone_message, self.viewing = "", []
        parts = [p for p in self.router.url.path.split("/") if p]
        new_id = parts[1] if len(parts) >= 2 and parts[0] == "maps" else ""
        # the same map loaded again (a reconnect) while a run was followed: a run that ended
        # meanwhile is finished here, so its outcome and proposal are not lost with the stream
        ended = self.live_run_id if new_id == self.map_id else ""
        if new_id != self.map_id:
            self.selected_id, self.search_hits, self.search_q, self.my_role = "", [], "", ""
            self._reset_run()
        self.map_id = new_id
        self.live_run_id, self._cursor, self._live_ids = "", "", []
        if not self._reload():
            return None
        _rev, run_id = app_maps.probe(self.user_id, self.map_id)
        if run_id:
            self._follow(run_id)
        elif ended:
            self.live_run_id = ended
            self._finish()
        self._gen += 1
        return [
            MapState.watch(self._gen),  # type: ignore[misc]
            rx.call_script("window.innerWidth", callback=MapState.default_view),
        ]

    def _reset_run(self) -> None:
        self.live_run_id = self.live_kind = self._cursor = self.run_route = ""
        self.run_outcome = self.run_cost = ""
        self._live_count, self._live_ids = 0, []
        self._run_finding = ""
        live = self._live()
        live.run_note = live.run_text = ""

    def _follow(self, run_id: str) -> None:
        run = app_runs.info(run_id)
        kind = run.kind if run else ""
        self._reset_run()
        self.live_run_id, self.live_kind = run_id, kind
        self._note("Queued…")
        self._rebuild()

    # ---- the live consumer ----------------------------------------------------------------
    @rx.event(background=True)
    async def watch(self, gen: int):
        """Show the map's changes (`maps.watch.MapWatcher`: its live run, other tabs' edits)."""
        async with self:
            user_id, map_id, email = self.user_id, self.map_id, self.user_email
            cursor = self._cursor or None
            watcher = app_maps.watcher(
                user_id, map_id, self.live_run_id, cursor, self._revision, beat=lambda: here(user_id, email, map_id)
            )
        try:
            async for change in watcher.changes():
                async with self:
                    if self._gen != gen or self.map_id != map_id:
                        return
                    shown = await run_off_loop(self._show, change)
                    if shown is None:
                        return
                    watcher.seen(self.live_run_id, self._cursor or None, self._revision, change.at if shown else None)
        finally:
            await watcher.aclose()

    def _show(self, change: MapChange) -> bool | None:
        """Move one change into the vars: True when the whole map was re-read, None when it is gone."""
        if change.revision is None:  # deleted, or no longer shared with this user
            self._gone()
            return None
        if change.viewers is not None and change.viewers != self.viewing:
            self.viewing = change.viewers
        finished, view = False, self._view()
        for ev in change.batch:
            self._cursor = ev.id
            if self.live_run_id and view.counted_write(ev):
                self._revision += 1
            finished = self._take(view.apply(ev)) or finished
        self._keep(view)
        if change.batch and not finished:
            self._rebuild()  # the canvas refits itself when a new node lands off-view
        if finished:
            self._finish()
            return True
        if change.new_run and change.active is not None and change.active != self.live_run_id:
            self._follow(change.active)
        elif change.revision > self._revision and (change.foreign or not self.live_run_id):
            self._reload()
            return True
        return False

    def _view(self) -> LiveMap:
        """The map in memory as a live view (nodes shared, not copied)."""
        return LiveMap(
            self._nodes, self._relations, {p["id"] for p in self.proposals}, list(self._live_ids), self._live_count
        )

    def _keep(self, view: LiveMap) -> None:
        self._relations, self._live_ids, self._live_count = view.relations, view.live_ids, view.written

    def _take(self, change: LiveChange) -> bool:
        """Show what one run event changed besides nodes and relations; True at the run's end."""
        if change.proposal is not None:
            self.proposals = [*self.proposals, self._proposal_row(change.proposal)]
            self._count_new_papers()
            self.proposals_open = True
        if change.route is not None:
            self.run_route = change.route
        if change.text:
            self._live().run_text += change.text
        if change.finding is not None:
            self._run_finding = change.finding
        if change.note is not None:
            self._note(change.note)
        return change.finished

    def _finish(self) -> None:
        """The run ended: show its outcome and cost, reload the map, lay new nodes out."""
        run_id = self.live_run_id
        run = app_runs.info(run_id)
        status, charged = (run.status, run.charged_credits) if run else ("", None)
        reason = (run.outcome_reason if run else "") or ""
        self.run_outcome = app_maps.outcome_line(status, reason)
        self.run_cost = f"{display_credits(charged)} credits" if charged is not None else ""
        self.run_cost_exact = f"{format_credits(charged)} credits" if charged is not None else ""
        wrote = self._live_count > 0
        self.live_run_id, self._cursor, self._live_ids = "", "", []
        self._note(self._run_finding)
        if not self._reload():
            return
        if any(p["run_id"] == run_id for p in self.proposals):  # its preview, even if its event was missed
            self.proposals_open = True
        if wrote:  # lay out what the run wrote with the nodes' measured sizes, then show it all
            self._request_layout(fit=True)

    # ---- edits -------------------------------------------------------------------------------
    def _edit(self, fn: Any, *args: Any, reload: bool = True, **kw: Any) -> Any:
        """Run one service edit; reload the map after it. None (and `error` set) on refusal."""
        if not self._load_user():
            return None
        self.notice = ""  # the status line speaks of the latest action only
        try:
            out = fn(self.user_id, self.map_id, *args, **kw)
        except NotFound as err:
            self.error = str(err)
            self._reload()
            return None
        except DomainError as err:
            self.error = err.message
            return None
        self.error = ""
        if reload:
            self._reload()
        return out

    def _patch_node(self, node: NodeOut) -> None:
        """Show an edited node without re-reading the map (the revision moved by exactly one)."""
        self._view().patch(node.model_dump())
        rev = app_maps.revision(self.user_id, self.map_id)
        if rev == self._revision + 1:
            self._revision = rev
            self._rebuild()
        else:
            self._reload()

    def _insert_local(self, node: NodeOut, expand_parent: bool) -> None:
        """Show a node this tab just added without re-reading the map (`LiveMap.insert`) when
        the revision moved by exactly one; else re-read it."""
        rev = app_maps.revision(self.user_id, self.map_id)
        if rev != self._revision + 1 or not self._view().insert(node.model_dump(), expand_parent):
            self._reload()
            return
        self._revision = rev
        self._rebuild()

    # ---- runs ----------------------------------------------------------------------------------
    @rx.event
    def set_research_q(self, value: str):
        self.research_q = value

    @rx.event
    def set_message_draft(self, value: str):
        self.message_draft = value

    def _start(self, kind: str, node_id: str | None = None, prompt: str | None = None) -> bool:
        if not self._load_user():
            return False
        if self.running:
            self.error = "A run is already working on this map; stop it first."
            return False
        try:
            out = app_runs.start_map_run(self.user_id, kind, self.map_id, node_id, prompt)
        except app_runs.QueueUnavailable:
            self.error = "The job queue is unavailable; try again."
            return False
        except DomainError as err:  # the run was refused (bad input, credits, price …)
            self.error = err.message
            return False
        self.error = ""
        self._reset_run()
        self.live_run_id, self.live_kind = out.id, kind
        self._note("Queued…")
        self._rebuild()
        return True

    @rx.event
    @off_loop
    def research(self):
        q = self.research_q.strip()
        if self._start("build_map", prompt=q or None):
            self.research_q = ""

    @rx.event
    @off_loop
    def run_on_node(self, kind: str):
        if app_runs.needs_node(kind) and not self.selected_id:
            self.error = "Select a node first."
            return
        node = self.selected_id or None
        if app_runs.whole_map(kind):
            node = None
        self._start(kind, node_id=node)

    @rx.event
    @off_loop
    def send_message(self, form: dict | None = None):
        text = ((form or {}).get("message") or self.message_draft).strip()
        if not text:
            return
        if self._start("message", node_id=self.selected_id or None, prompt=text):
            self.message_draft = ""

    @rx.event
    @off_loop
    def stop(self):
        if not self.live_run_id or not self._load_user():
            return
        with contextlib.suppress(app_runs.RunNotFound):
            app_runs.stop_owned(self.user_id, self.live_run_id, finished_ok=True)
        self._note("Stopping…")


class MapLiveState(MapState):
    """What changes while a run writes: the canvas graph, the counters and the run's note/text.

    Kept apart from MapState because Reflex re-renders every component that reads a state
    whenever any of its vars changes: here a new node re-renders the canvas and two labels,
    not the ~50 toolbar/panel components that read MapState."""

    graph: dict[str, Any] = {"nodes": [], "edges": []}
    outline: list[dict[str, Any]] = []  # the outline's rows (only while the outline is shown)
    node_count: int = 0
    fit_signal: int = 0  # incremented: fit the whole map (the Fit button)
    view_signal: int = 0  # incremented: the readable overview (after a run, a layout, a regrouping)
    layout_signal: int = 0  # incremented: the canvas lays itself out (ELK) and calls apply_layout
    run_note: str = ""
    run_text: str = ""
