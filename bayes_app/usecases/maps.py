"""Map use cases: every edit or read of a map in its own transaction, and the ones that
span the database and the job queue (deleting a map with runs working on it)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, overload

from pydantic import TypeAdapter
from sqlmodel import Session

from bayes_app.db import session_scope, sessions
from bayes_app.maps import access, citations, csl, export, export_tex, history, members, presence, service
from bayes_app.maps import live as live_map
from bayes_app.maps import runs as map_runs
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.live import Change as LiveChange
from bayes_app.maps.live import LiveMap, build_graph
from bayes_app.maps.outline import outline_rows
from bayes_app.maps.presence import BEAT_S
from bayes_app.maps.views import node_citation_views
from bayes_app.maps.watch import Beat, MapChange, MapWatcher
from bayes_app.models import Role
from bayes_app.redis_client import get_redis, new_async_redis
from bayes_app.runs import service as run_service
from bayes_app.settings import get_settings
from bayes_app.sharing import collections as shared_cols
from bayes_app.sharing import map_documents as map_docs
from bayes_app.usecases import runs
from bayes_app.usecases.schemas.maps import (
    CitationOut,
    Layout,
    MapSummary,
    MapView,
    NodeOut,
    Point,
    ProposalOut,
    ScopeChoice,
)
from bayes_app.usecases.schemas.runs import RunOut
from bayes_app.usecases.schemas.sharing import (
    HistoryEntry,
    MapDocuments,
    MapLists,
    MemberList,
    MemberOut,
    NodeChange,
    Viewer,
)

# for the front doors: roles, errors, the editor's watcher, its in-memory map and view helpers
__all__ = [
    "BEAT_S",
    "EDIT",
    "OWN",
    "READ",
    "LiveChange",
    "LiveMap",
    "MapChange",
    "MapError",
    "MapNotFound",
    "MapWatcher",
    "build_graph",
    "outcome_line",
    "outline_rows",
]
T = TypeVar("T")
READ, EDIT, OWN = Role.VIEWER, Role.EDITOR, Role.OWNER  # what a front door asks of the caller's role
GRANTABLE = Role.GRANTABLE  # the roles an owner gives a member
outcome_line = map_runs.outcome_line


P = ParamSpec("P")
R = TypeVar("R")


@overload
def _on_map(
    need: str, fn: Callable[Concatenate[Session, str, str, P], R], out: None = None
) -> Callable[Concatenate[str, str, P], R]: ...


@overload
def _on_map(
    need: str, fn: Callable[Concatenate[Session, str, str, P], Any], out: type[T]
) -> Callable[Concatenate[str, str, P], T]: ...


def _on_map(
    need: str, fn: Callable[Concatenate[Session, str, str, P], Any], out: Any = None
) -> Callable[Concatenate[str, str, P], Any]:
    """The maps-domain function `fn(db, owner_id, map_id, …)` as the use case
    `(user_id, map_id, …)` for any user whose role on the map allows `need` (see `call_as`);
    its result as the schema `out` (a model or e.g. `list[CitationOut]`), built in the session."""
    adapter = TypeAdapter(out) if out is not None else None

    def in_session(db: Session, *args: Any, **kw: Any) -> Any:
        result = fn(db, *args, **kw)
        return adapter.validate_python(result) if adapter is not None else result

    def use_case(user_id: str, map_id: str, /, *args: P.args, **kw: P.kwargs) -> Any:
        return call_as(user_id, map_id, need, in_session, *args, **kw)

    use_case.__name__, use_case.__qualname__, use_case.__doc__ = fn.__name__, fn.__name__, fn.__doc__
    return use_case


# Every map read and edit the front doors make, each in its own transaction (the edits commit
# with their undo entry and revision bump: see docs/architecture.md, "Map edits commit per call"),
# allowed by the caller's role on the map (owner, editor, viewer: maps/access.py).


def create_map(user_id: str, title: str, question: str = "", collection_id: str | None = None) -> MapSummary:
    """A new map of the user's, scoped to `collection_id` when given: one of their collections or
    one shared with them (NotFound otherwise: nothing created)."""
    with session_scope() as db:
        if collection_id:
            shared_cols.readable_collection(db, user_id, collection_id)
        return MapSummary.model_validate(service.create_map(db, user_id, title, question, collection_id))


def scope_choices(user_id: str) -> list[ScopeChoice]:
    """The collections a new map may be scoped to: the user's own, then those shared with them."""
    from bayes_app.library import documents as lib

    with session_scope() as db:
        own = [ScopeChoice(id=c["id"], name=c["name"]) for c in lib.list_collections(db, user_id)]
        shared = [
            ScopeChoice(id=c["id"], name=f"{c['name']} (shared by {c['owner_email']})")
            for c in shared_cols.shared_with(db, user_id)
        ]
        return own + shared


def _auto_layout(db: Session, owner_id: str, map_id: str) -> Layout:
    """Lay the map out as a tidy tree; the nodes' new positions."""
    positions = service.auto_layout(db, owner_id, map_id)
    return Layout(positions={k: Point(x=x, y=y) for k, (x, y) in positions.items()})


rename_map = _on_map(OWN, service.rename_map, MapSummary)
revision = _on_map(READ, service.revision)  # an int
undo = _on_map(EDIT, service.undo)  # the caller's own last edit (per-user undo): its action name or None
auto_layout = _on_map(EDIT, _auto_layout)
add_child = _on_map(EDIT, service.add_child, NodeOut)
add_sibling = _on_map(EDIT, service.add_sibling, NodeOut)
update_node = _on_map(EDIT, service.update_node, NodeOut)
move_node = _on_map(EDIT, service.move_node, NodeOut)
move_step = _on_map(EDIT, service.move_step, NodeOut)
set_positions = _on_map(EDIT, service.set_positions)  # how many nodes moved
delete_subtree = _on_map(EDIT, service.delete_subtree)  # the deleted node ids
accept_proposal = _on_map(EDIT, service.accept_proposal, ProposalOut)
reject_proposal = _on_map(EDIT, service.reject_proposal, ProposalOut)
check_support = _on_map(EDIT, citations.check_support, list[CitationOut])
attach_citation = _on_map(EDIT, citations.attach_citation, CitationOut)
delete_citation = _on_map(EDIT, citations.delete_citation)
accept_rewrite = _on_map(EDIT, citations.accept_rewrite, NodeOut)
export_json = _on_map(READ, export.as_json, MapView)
export_markdown = _on_map(READ, export.markdown)
export_bibtex = _on_map(READ, export_tex.bibtex)
export_docx = _on_map(READ, export.docx_bytes)
export_latex = _on_map(READ, export_tex.latex)
export_style = csl.check_style  # the reference style's name, or ValueError in the user's words
EXPORT_STYLES = {name: label for name, (label, _file) in csl.STYLES.items()}


def probe(user_id: str, map_id: str) -> tuple[int | None, str | None]:
    """(the map's revision, the user's newest active run on it); (None, None) once the map is
    gone for this user (deleted, or no longer shared with them)."""
    try:
        return call_as(user_id, map_id, READ, live_map.probe_for, user_id)
    except MapNotFound:
        return None, None


def call_as(user_id: str, map_id: str, need: str, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """`fn(db, owner_id, map_id, *args)` for a caller whose role on the map allows `need`
    (`Role.VIEWER` reads, `Role.EDITOR` edits, `Role.OWNER` title/delete/members), in one
    transaction, with the caller recorded as the edit's author. MapNotFound for a non-member,
    MapError 403 `forbidden_role` for a role too low."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, need)
        with access.acting_as(user_id):
            out = fn(db, m.owner_id, map_id, *args, **kw)
    if need != READ:
        _announce_edit(map_id)
    return out


def _announce_edit(map_id: str) -> None:
    """Wake the map's open pages at once (best effort: without Redis they see it at their next poll)."""
    with contextlib.suppress(Exception):  # a hint only; the edit is committed
        map_runs.announce_edit(get_redis(), map_id)


def role(user_id: str, map_id: str) -> str:
    """The user's role on the map (MapNotFound for a non-member)."""
    with session_scope() as db:
        return access.role_of(db, user_id, map_id)


def list_maps(user_id: str) -> MapLists:
    """The user's own maps (`mindmaps`, role owner) and the maps shared with them (`shared`)."""
    with session_scope() as db:
        own = [{**m, "role": Role.OWNER} for m in service.list_maps(db, user_id)]
        return MapLists.model_validate({"mindmaps": own, "shared": members.shared_with(db, user_id)})


def members_of(user_id: str, map_id: str) -> MemberList:
    """The map's owner and members, for any member of it."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        return MemberList.model_validate(
            {"owner": members.owner_view(db, m), "members": members.list_members(db, map_id)}
        )


node_history = _on_map(READ, history.node_history, list[NodeChange])  # who changed the node, newest first


def map_history(user_id: str, map_id: str) -> list[HistoryEntry]:
    """The map's changes, newest first, for its owner and editors (403 for a viewer)."""
    return call_as(
        user_id, map_id, EDIT, lambda db, owner, mid: _entries.validate_python(history.map_history(db, owner, mid))
    )


_entries = TypeAdapter(list[HistoryEntry])
revert = _on_map(EDIT, service.revert)  # the owner: any edit; an editor: their own; its action name


def map_documents(user_id: str, map_id: str) -> MapDocuments:
    """The share dialog's papers: what the map's members can open and their runs may read."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.OWNER)
        return MapDocuments.model_validate(map_docs.list_readable(db, user_id, m))


def add_map_document(user_id: str, map_id: str, document_id: object) -> MapDocuments:
    """The owner makes one of their documents readable to the map's members and their runs."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.OWNER)
        map_docs.add_document(db, user_id, m, document_id)
        return MapDocuments.model_validate(map_docs.list_readable(db, user_id, m))


def remove_map_document(user_id: str, map_id: str, document_id: str) -> MapDocuments:
    """The owner takes an added document back (one the map cites stays readable)."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.OWNER)
        map_docs.remove_document(db, m, document_id)
        return MapDocuments.model_validate(map_docs.list_readable(db, user_id, m))


_viewers = TypeAdapter(list[Viewer])


def here(user_id: str, email: str, map_id: str) -> list[Viewer]:
    """A member's heartbeat on the map's page; returns who is viewing it now (MapNotFound once
    the map is no longer shared with them: the page leaves it)."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, READ)
    r = get_redis()
    presence.beat(r, map_id, user_id, email)
    return _viewers.validate_python(presence.viewers(r, map_id))


def viewers(user_id: str, map_id: str) -> list[Viewer]:
    """Who is viewing the map now, for any member."""
    require(user_id, map_id, READ)
    return _viewers.validate_python(presence.viewers(get_redis(), map_id))


def require(user_id: str, map_id: str, need: str) -> None:
    """MapNotFound / 403 `forbidden_role` unless the user's role on the map allows `need`."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, need)


def map_view(user_id: str, map_id: str) -> MapView:
    """The whole map for any member, with the caller's `role`."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        view = {**service.map_view(db, m.owner_id, map_id), "role": access.role_of(db, user_id, map_id)}
        # proposals about papers the caller cannot open are the owner's alone
        view["proposals"] = [p for p in view["proposals"] if map_docs.proposal_visible(db, user_id, m, p["payload"])]
        return MapView.model_validate(view)


def add_member(user_id: str, map_id: str, email: object, role_name: object) -> MemberOut:
    """The owner shares the map with the account of `email` as viewer or editor."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.OWNER)
        return MemberOut.model_validate(members.add_member(db, user_id, map_id, email, role_name))


def set_member_role(user_id: str, map_id: str, member_id: str, role_name: object) -> MemberOut:
    """The owner changes a member's role."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.OWNER)
        return MemberOut.model_validate(members.set_role(db, map_id, member_id, role_name))


def remove_member(user_id: str, map_id: str, member_id: str) -> None:
    """The owner removes a member, or a member leaves (removes themselves)."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.VIEWER if member_id == user_id else Role.OWNER)
        members.remove_member(db, map_id, member_id)


def runs_of(user_id: str, map_id: str) -> list[RunOut]:
    """The runs the user started on the map (any member), newest first."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.VIEWER)
        return [RunOut.model_validate(run_service.view(db, op)) for op in map_runs.map_runs(db, user_id, map_id)]


def node_citations(user_id: str, map_id: str, node_id: str) -> list[CitationOut]:
    """The citations of one node of a map the user may read."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        return [CitationOut.model_validate(c) for c in node_citation_views(db, m.owner_id, map_id, node_id)]


def watcher(
    user_id: str, map_id: str, run_id: str, cursor: str | None, revision: int, beat: Beat | None = None
) -> MapWatcher:
    """The changes of the user's open map, from where the editor stands (close it with aclose);
    `beat` keeps the user's presence on it (see `here`)."""
    return MapWatcher(new_async_redis(), map_id, lambda: probe(user_id, map_id), run_id, cursor, revision, beat=beat)


def delete_map(user_id: str, map_id: str) -> list[str]:
    """Delete the map; its running runs are cancelled (`resource_deleted`) and settled.
    Returns their ids; MapNotFound when the map is not the user's, 403 for a member."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.OWNER)
    ids = map_runs.delete_map(sessions, get_redis(), user_id, map_id)
    runs.settle_cancelled(ids)
    return ids


def model_judges_support() -> bool:
    """With a model configured, support is judged by a billed `check_support` run."""
    return get_settings().model_default != "offline"
