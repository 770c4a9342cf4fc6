"""Mindmap editor state: the map, the selected node's panel, runs on the map, and live sync.

The map lives in backend-only vars (`_nodes`, `_relations`); the browser gets `graph`, a
compact projection for the canvas (visible nodes, tree + `contradicts` edges), kept with the
other per-write values in the `MapLiveState` substate so a new node re-renders the canvas and
not the whole editor. Every edit calls `bayes_app.maps` at once (one transaction each) and
shows the result.

Live: one background task per page load (`watch`, started from on_load, so a reload or a
navigation cancels it and the next load starts a fresh one) follows the map's active run
from its Redis Stream cursor (nodes appear as the writer commits them) and polls the map's
revision counter (one indexed SELECT every POLL_S) so another tab's edits show within a second.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from typing import Any

import reflex as rx

from bayes_app.app import maps as app_maps
from bayes_app.app import runs as app_runs
from bayes_app.credits.pricing import display_credits, format_credits
from bayes_app.db import session_scope
from bayes_app.llm.factory import is_offline
from bayes_app.maps import citations as cit
from bayes_app.maps import runs as map_runs
from bayes_app.maps import service
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps import live as live_map
from bayes_app.maps.live import LiveMap, build_graph, support_level
from bayes_app.models import NodeKind, Operation, RunStatus
from bayes_app.runs import events
from bayes_app.runs.follower import RunFollower
from bayes_app.runs.service import RunRequestError
from state.auth import AuthState

POLL_S = 0.25  # revision poll while no run is live
RUN_BLOCK_MS = 250  # XREAD BLOCK while a run is live
RELOAD_MIN_S = 1.0  # during a run, full reloads for foreign edits at most this often
# During a burst of writes, at most one push per PUSH_MIN_S: each push costs the browser a render,
# and a backlog of renders (not the wait) is what made nodes late (see docs/notes/mindmap-ui.md).
PUSH_MIN_S = 0.05
RUN_LABELS = {"build_map": "Research", "expand": "Expand", "deepen": "Dive deeper", "counter": "Counter-evidence",
              "restructure": "Restructure", "chapters": "Chapters", "synthesize": "Synthesize",
              "message": "Message", "check_support": "Check support"}
EDITABLE_KINDS = [k for k in NodeKind.ALL if k != NodeKind.QUESTION]


def _citation_row(c: dict[str, Any]) -> dict[str, Any]:
    quote = " ".join((c.get("quote") or "").split())
    score = c.get("support_score")
    return {
        "id": c["id"], "title": c.get("title") or "Deleted document", "page": str(c.get("page") or ""),
        "quote": quote[:400] + ("…" if len(quote) > 400 else ""), "origin": c.get("origin") or "",
        "href": f"/documents/{c.get('document_id')}?page={c.get('page')}&quote=" + urllib.parse.quote(quote[:300]),
        "label": c.get("support_label") or "", "score": "" if score is None else f"{score:.2f}",
        "level": support_level(score), "rewrite": c.get("suggested_rewrite") or "",
        "authors": ", ".join((c.get("authors") or [])[:3]), "year": str(c.get("year") or ""),
    }


def _probe(owner_id: str, map_id: str) -> tuple[int | None, str | None]:
    with session_scope() as db:
        return live_map.probe(db, owner_id, map_id)


# what the user's undone edit was, in words (the undo log's action names)
UNDO_LABELS = {"add_child": "the new node", "add_sibling": "the new node", "update_node": "the node edit",
               "move_node": "the move", "move_nodes": "the move", "delete_subtree": "the deletion",
               "auto_layout": "the auto-layout", "attach_citation": "the attached citation",
               "delete_citation": "the citation removal", "accept_rewrite": "the accepted rewrite",
               "accept_proposal": "the regrouping"}


class MapState(AuthState):
    # the map
    map_id: str = ""
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
    _nodes: dict[str, dict[str, Any]] = {}
    _relations: list[dict[str, Any]] = []
    _live_ids: list[str] = []
    _live_count: int = 0
    _run_finding: str = ""  # what a run that found nothing says ("No counter-evidence found …")
    _cursor: str = ""
    _revision: int = 0
    _gen: int = 0

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

    @rx.var
    def live_label(self) -> str:
        return RUN_LABELS.get(self.live_kind, self.live_kind)

    # ---- loading -------------------------------------------------------------------------
    def _apply_view(self, view: dict[str, Any]) -> None:
        self.map_title, self.offline_map, self._revision = view["title"], view["offline"], view["revision"]
        by_node: dict[str, list[dict]] = {}
        for c in view["citations"]:
            by_node.setdefault(c["node_id"], []).append(c)
        self._nodes = {n["id"]: n for n in view["nodes"]}
        self._relations = view["relations"]
        self.proposals = [self._proposal_row(p) for p in view["proposals"]]
        self._rebuild()
        self._refresh_selected(by_node.get(self.selected_id, []))

    def _proposal_row(self, p: dict[str, Any]) -> dict[str, Any]:
        groups = []
        for g in p["payload"].get("groups", []):
            members = [self._nodes[i]["title"] or "(untitled)" for i in g.get("node_ids", []) if i in self._nodes]
            groups.append({"title": str(g.get("title") or ""), "members": members})
        return {"id": p["id"], "kind": "Chapters" if p["kind"] == "chapters" else "Restructure", "groups": groups}

    def _rebuild(self) -> None:
        live = self._live()
        live.graph = build_graph(self._nodes, self._relations, live_layout=self.live_run_id != "",
                                 live_ids=set(self._live_ids))
        live.node_count = len(self._nodes)

    def _reload(self) -> bool:
        """Read the whole map; False when it is gone (deleted, or never ours)."""
        try:
            with session_scope() as db:
                view = service.map_view(db, self.user_id, self.map_id)
        except MapNotFound:
            self.missing, self._nodes = True, {}
            self._live().graph = {"nodes": [], "edges": []}
            return False
        self._apply_view(view)
        return True

    def _refresh_selected(self, citations: list[dict] | None = None) -> None:
        n = self._nodes.get(self.selected_id)
        if n is None:
            self.selected_id, self.sel_citations = "", []
            return
        self.sel_title, self.sel_body, self.sel_kind = n["title"], n["body"], n["kind"]
        self.sel_origin, self.sel_is_root, self.sel_collapsed = n["created_by"], n["parent_id"] is None, n["collapsed"]
        if citations is None:
            with session_scope() as db:
                citations = [service.citation_view(c, d) for c, d in service.map_citations(db, self.map_id)
                             if c.node_id == n["id"]]
        self.sel_citations = [_citation_row(c) for c in citations]

    @rx.event
    def load(self):
        """on_load of /maps/<id>: the map, then follow its live run and other tabs' edits."""
        if not self._load_user():
            return
        self.offline_mode = is_offline()
        self.error = self.notice = ""
        self.missing, self.confirm_delete = False, False
        parts = [p for p in self.router.url.path.split("/") if p]
        new_id = parts[1] if len(parts) >= 2 and parts[0] == "maps" else ""
        if new_id != self.map_id:
            self.selected_id, self.search_hits, self.search_q = "", [], ""
            self._reset_run()
        self.map_id = new_id
        self.live_run_id, self._cursor, self._live_ids = "", "", []
        if not self._reload():
            return
        _rev, run_id = _probe(self.user_id, self.map_id)
        if run_id:
            self._follow(run_id)
        self._gen += 1
        return MapState.watch(self._gen)

    def _reset_run(self) -> None:
        self.live_run_id = self.live_kind = self._cursor = self.run_route = ""
        self.run_outcome = self.run_cost = ""
        self._live_count, self._live_ids = 0, []
        self._run_finding = ""
        live = self._live()
        live.run_note = live.run_text = ""

    def _follow(self, run_id: str) -> None:
        with session_scope() as db:
            op = db.get(Operation, run_id)
            kind = op.kind if op else ""
        self._reset_run()
        self.live_run_id, self.live_kind = run_id, kind
        self._note("Queued…")
        self._rebuild()

    # ---- the live consumer ----------------------------------------------------------------
    @rx.event(background=True)
    async def watch(self, gen: int):
        """Follow the map's active run (stream from the cursor) and other tabs' edits (revision)."""
        from bayes_app.redis_client import new_async_redis

        async with self:
            owner, map_id = self.user_id, self.map_id
            run_id, cursor = self.live_run_id, self._cursor or None
            known_rev = self._revision
        follower = RunFollower(new_async_redis(), run_id, cursor, block_ms=RUN_BLOCK_MS, min_gap_s=PUSH_MIN_S)
        r = follower.redis
        started, started_cursor = map_runs.started_key(map_id), f"{int(time.time() * 1000)}-0"
        last_reload = last_sync = last_probe = 0.0
        rev, active = known_rev, run_id or None
        try:
            while True:
                batch: list[events.RunEvent] = []
                if run_id:
                    batch = await follower.next()
                else:  # idle: a run started elsewhere wakes us at once; else poll every POLL_S
                    try:
                        res = await r.xread({started: started_cursor}, block=int(POLL_S * 1000), count=10)
                        for _key, entries in res or []:
                            started_cursor = entries[-1][0]
                    except Exception:  # noqa: BLE001 - Redis restarting: plain polling meanwhile
                        await asyncio.sleep(POLL_S)
                now = time.monotonic()
                if not batch:  # events flowing: the probe runs after they are shown (below)
                    rev, active = await asyncio.to_thread(_probe, owner, map_id)
                    last_probe = now
                new_run = active is not None and active != run_id and not batch
                # the run's own writes are counted into `revision` as their events are applied,
                # so only a revision beyond that is someone else's edit
                foreign = rev is not None and rev > known_rev and (not run_id or now - last_reload >= RELOAD_MIN_S)
                if not batch and not new_run and not foreign and rev is not None and now - last_sync < 1.0:
                    continue
                last_sync = now
                async with self:
                    if self._gen != gen or self.map_id != map_id:
                        return
                    if rev is None:
                        self.missing, self.error = True, "This map was deleted."
                        self._reset_run()
                        return
                    finished, view = False, self._view()
                    for ev in batch:
                        self._cursor = ev.id
                        if self.live_run_id and view.counted_write(ev):
                            self._revision += 1
                        finished = self._take(view.apply(ev)) or finished
                    self._keep(view)
                    if batch and not finished:
                        self._rebuild()  # the canvas refits itself when a new node lands off-view
                    if finished:
                        self._finish()
                        last_reload = now
                    elif new_run and active != self.live_run_id:
                        self._follow(active)
                    elif rev > self._revision and (foreign or not self.live_run_id):
                        self._reload()
                        last_reload = now
                    run_id, known_rev = self.live_run_id, self._revision
                    if (run_id, self._cursor or None) != (follower.run_id, follower.cursor):
                        follower.follow(run_id, self._cursor or None)
                if batch and time.monotonic() - last_probe >= 1.0:  # at least one probe a second
                    rev, active = await asyncio.to_thread(_probe, owner, map_id)
                    last_probe = time.monotonic()
        finally:
            await follower.aclose()

    def _view(self) -> LiveMap:
        """The map in memory as a live view (nodes shared, not copied)."""
        return LiveMap(self._nodes, self._relations, {p["id"] for p in self.proposals},
                       list(self._live_ids), self._live_count)

    def _keep(self, view: LiveMap) -> None:
        self._relations, self._live_ids, self._live_count = view.relations, view.live_ids, view.written

    def _take(self, change: live_map.Change) -> bool:
        """Show what one run event changed besides nodes and relations; True at the run's end."""
        if change.proposal is not None:
            self.proposals = [*self.proposals, self._proposal_row(change.proposal)]
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
        with session_scope() as db:
            op = db.get(Operation, run_id)
            status, charged = (op.status, op.charged_credits) if op else ("", None)
            reason = op.outcome_reason if op else ""
        self.run_outcome = status + (f" ({reason})" if status != RunStatus.SUCCEEDED and reason else "")
        self.run_cost = f"{display_credits(charged)} credits" if charged is not None else ""
        self.run_cost_exact = f"{format_credits(charged)} credits" if charged is not None else ""
        wrote = self._live_count > 0
        self.live_run_id, self._cursor, self._live_ids = "", "", []
        self._note(self._run_finding)
        if not self._reload():
            return
        if wrote:
            self._layout_if_needed()
            self._live().fit_signal += 1

    def _layout_if_needed(self) -> None:
        """Save the tidy layout when the stored positions differ (a run's new nodes sit near
        their parents until laid out). Idempotent across tabs."""
        if live_map.layout_differs(self._nodes):
            self._edit(service.auto_layout)

    # ---- edits -------------------------------------------------------------------------------
    def _edit(self, fn: Any, *args: Any, reload: bool = True, **kw: Any) -> Any:
        """Run one service edit; reload the map after it. None (and `error` set) on refusal."""
        if not self._load_user():
            return None
        try:
            with session_scope() as db:
                out = fn(db, self.user_id, self.map_id, *args, **kw)
        except MapNotFound as err:
            self.error = str(err)
            self._reload()
            return None
        except MapError as err:
            self.error = err.message
            return None
        self.error = ""
        if reload:
            self._reload()
        return out

    def _patch_node(self, node: dict[str, Any]) -> None:
        """Show an edited node without re-reading the map (the revision moved by exactly one)."""
        self._view().patch(node)
        with session_scope() as db:
            rev = service.revision(db, self.user_id, self.map_id)
        if rev == self._revision + 1:
            self._revision = rev
            self._rebuild()
        else:
            self._reload()

    def _insert_local(self, node: dict[str, Any], expand_parent: bool) -> None:
        """Show a node this tab just added without re-reading the map (`LiveMap.insert`) when
        the revision moved by exactly one; else re-read it."""
        with session_scope() as db:
            rev = service.revision(db, self.user_id, self.map_id)
        if rev != self._revision + 1 or not self._view().insert(node, expand_parent):
            self._reload()
            return
        self._revision = rev
        self._rebuild()

    @rx.event
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
        out = self._edit(service.update_node, node_id, reload=False, **{field: value})
        if out:
            self._patch_node(out)

    @rx.event
    def set_sel_title(self, value: str, node_id: str):
        self._save_field(node_id, "title", value)

    @rx.event
    def set_sel_body(self, value: str, node_id: str):
        self._save_field(node_id, "body", value)

    @rx.event
    def set_sel_kind(self, value: str):
        if self.selected_id and value != self.sel_kind:
            out = self._edit(service.update_node, self.selected_id, reload=False, kind=value)
            if out:
                self.sel_kind = value
                self._patch_node(out)

    def _focus_title(self):
        return rx.call_script("setTimeout(() => { const e = document.getElementById('node-title');"
                              " if (e) { e.focus(); e.select(); } }, 60)")

    def _added(self, out: dict[str, Any] | None, child: bool):
        if not out:
            return None
        self._insert_local(out, expand_parent=child)
        self.selected_id = out["id"]
        self._refresh_selected([])
        return self._focus_title()

    def _add_child(self):
        target = self.selected_id or next((i for i, n in self._nodes.items() if n["parent_id"] is None), "")
        if not target:
            return None
        return self._added(self._edit(service.add_child, target, reload=False), child=True)

    def _add_sibling(self):
        if not self.selected_id:
            return None
        if self.sel_is_root:
            return self._add_child()
        return self._added(self._edit(service.add_sibling, self.selected_id, reload=False), child=False)

    @rx.event
    def add_child(self):
        return self._add_child()

    @rx.event
    def add_sibling(self):
        return self._add_sibling()

    def _ask_delete(self) -> None:
        if self.selected_id and not self.sel_is_root:
            self.confirm_delete = True
        elif self.sel_is_root:
            self.error = "The root question cannot be deleted; delete the map instead."

    @rx.event
    def ask_delete(self):
        self._ask_delete()

    @rx.event
    def cancel_delete(self):
        self.confirm_delete = False

    @rx.event
    def delete_selected(self):
        self.confirm_delete = False
        if not self.selected_id:
            return
        parent = (self._nodes.get(self.selected_id) or {}).get("parent_id") or ""
        if self._edit(service.delete_subtree, self.selected_id) is not None:
            self.selected_id = parent
            self._refresh_selected()

    @rx.event
    def toggle(self, node_id: str):
        n = self._nodes.get(node_id)
        if n is not None:
            out = self._edit(service.update_node, node_id, reload=False, collapsed=not n["collapsed"])
            if out:
                self._patch_node(out)
                if node_id == self.selected_id:
                    self.sel_collapsed = out["collapsed"]

    @rx.event
    def toggle_selected(self):
        if self.selected_id:
            return MapState.toggle(self.selected_id)
        return None

    @rx.event
    def drag_stop(self, node_id: str, x: float, y: float, target_id: str):
        """A drag ended: dropped onto another node → re-parent under it; else keep the spot."""
        node = self._nodes.get(node_id)
        if node is None:
            return
        if target_id and target_id in self._nodes and target_id != node["parent_id"] and node["parent_id"]:
            if self._edit(service.move_node, node_id, target_id, reload=False) is not None:
                self._edit(service.auto_layout)
                self.notice = f"Moved under “{self._nodes[target_id]['title'][:60]}”."
            else:
                self._rebuild()  # refused (e.g. under its own child): snap back
            return
        out = self._edit(service.update_node, node_id, reload=False, position={"x": x, "y": y})
        if out:
            self._patch_node(out)

    @rx.event
    def layout(self):
        if self._edit(service.auto_layout) is not None:
            self._live().fit_signal += 1

    @rx.event
    def fit(self):
        self._live().fit_signal += 1

    @rx.event
    def undo(self):
        self._undo()

    def _undo(self) -> None:
        if not self._load_user():
            return
        with session_scope() as db:
            try:
                action = service.undo(db, self.user_id, self.map_id)
            except MapNotFound:
                action = None
        self.notice = (f"Undone: {UNDO_LABELS.get(action, action.replace('_', ' '))}." if action
                       else "Nothing to undo.")
        self._reload()

    @rx.event
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
    def check_support(self):
        if not self.selected_id:
            return
        if app_maps.model_judges_support():  # the model judges: a billed run, followed live
            if self._start("check_support", node_id=self.selected_id):
                self.notice = "Checking support with the model…"
            return
        out = self._edit(cit.check_support, self.selected_id)
        if out is not None:
            self.notice = "Support checked."

    @rx.event
    def accept_rewrite(self, citation_id: str):
        if self._edit(cit.accept_rewrite, citation_id) is not None:
            self.notice = "Rewrite accepted."

    @rx.event
    def remove_citation(self, citation_id: str):
        self._edit(cit.delete_citation, citation_id)

    @rx.event
    def set_search_q(self, value: str):
        self.search_q = value

    @rx.event
    def search_library(self, form: dict | None = None):
        from bayes_app.search import runtime
        from bayes_app.search.highlight import best_quote

        if form and "q" in form:
            self.search_q = form["q"]
        self.search_error = ""
        if not self._load_user() or not self.search_q.strip():
            self.search_hits = []
            return
        try:
            with session_scope() as db:
                hits = runtime.search_library(db, self.user_id, self.search_q, 8)
        except Exception as err:  # noqa: BLE001 - keep the editor alive
            self.search_error = f"Search is unavailable right now ({type(err).__name__})."
            self.search_hits = []
            return
        self.search_hits = [{"chunk_id": h.chunk_id, "title": h.title, "page": str(h.page),
                             "quote": best_quote(h.text, self.search_q) or h.text[:300]} for h in hits]
        if not hits:
            self.search_error = "No passages found."

    @rx.event
    def attach(self, chunk_id: str, quote: str):
        if not self.selected_id:
            self.error = "Select a node to cite this passage on."
            return
        if self._edit(cit.attach_citation, self.selected_id, chunk_id, quote) is not None:
            self.notice = "Citation attached."

    # ---- proposals -----------------------------------------------------------------------------
    @rx.event
    def decide(self, proposal_id: str, accept: bool):
        fn = service.accept_proposal if accept else service.reject_proposal
        if self._edit(fn, proposal_id) is not None:
            if accept:
                self._edit(service.auto_layout)
            self.notice = "Regrouping applied." if accept else "Proposal rejected."

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
        except RunRequestError as err:
            self.error = err.message
            return False
        except app_runs.QueueUnavailable:
            self.error = "The job queue is unavailable; try again."
            return False
        self.error = ""
        self._reset_run()
        self.live_run_id, self.live_kind = out["id"], kind
        self._note("Queued…")
        self._rebuild()
        return True

    @rx.event
    def research(self):
        q = self.research_q.strip()
        if self._start("build_map", prompt=q or None):
            self.research_q = ""

    @rx.event
    def run_on_node(self, kind: str):
        if kind in ("expand", "deepen", "counter") and not self.selected_id:
            self.error = "Select a node first."
            return
        node = self.selected_id or None
        if kind in ("restructure", "chapters"):
            node = None
        self._start(kind, node_id=node)

    @rx.event
    def send_message(self, form: dict | None = None):
        text = ((form or {}).get("message") or self.message_draft).strip()
        if not text:
            return
        if self._start("message", node_id=self.selected_id or None, prompt=text):
            self.message_draft = ""

    @rx.event
    def stop(self):
        if not self.live_run_id or not self._load_user():
            return
        try:
            app_runs.stop_owned(self.user_id, self.live_run_id, finished_ok=True)
        except app_runs.RunNotFound:
            pass
        self._note("Stopping…")


class MapLiveState(MapState):
    """What changes while a run writes: the canvas graph, the counters and the run's note/text.

    Kept apart from MapState because Reflex re-renders every component that reads a state
    whenever any of its vars changes: here a new node re-renders the canvas and two labels,
    not the ~50 toolbar/panel components that read MapState."""

    graph: dict[str, Any] = {"nodes": [], "edges": []}
    node_count: int = 0
    fit_signal: int = 0
    run_note: str = ""
    run_text: str = ""
