"""Map use cases: every edit or read of a map in its own transaction, and the ones that
span the database and the job queue (deleting a map with runs working on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from bayes_app.db import session_scope, sessions
from bayes_app.maps import access, history, members, presence, service
from bayes_app.maps import runs as map_runs
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.presence import BEAT_S
from bayes_app.maps.views import node_citation_views
from bayes_app.models import Role
from bayes_app.redis_client import get_redis
from bayes_app.runs import service as run_service
from bayes_app.settings import get_settings
from bayes_app.usecases import runs

__all__ = ["BEAT_S", "EDIT", "OWN", "READ", "MapError", "MapNotFound"]  # for the front doors
T = TypeVar("T")
READ, EDIT, OWN = Role.VIEWER, Role.EDITOR, Role.OWNER  # what a front door asks of the caller's role


def call(fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """One maps-domain call (`fn(db, *args)`: an edit, a view, the revision, a listing) in one
    transaction: commit, or roll back and let its MapError/MapNotFound reach the caller."""
    with session_scope() as db:
        return fn(db, *args, **kw)


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
    try:
        map_runs.announce_edit(get_redis(), map_id)
    except Exception:  # noqa: BLE001 - a hint only; the edit is committed
        pass


def role(user_id: str, map_id: str) -> str:
    """The user's role on the map (MapNotFound for a non-member)."""
    with session_scope() as db:
        return access.role_of(db, user_id, map_id)


def list_maps(user_id: str) -> dict[str, list[dict[str, Any]]]:
    """The user's own maps (`mindmaps`, role owner) and the maps shared with them (`shared`)."""
    with session_scope() as db:
        own = [{**m, "role": Role.OWNER} for m in service.list_maps(db, user_id)]
        return {"mindmaps": own, "shared": members.shared_with(db, user_id)}


def members_of(user_id: str, map_id: str) -> dict[str, Any]:
    """The map's owner and members, for any member of it."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        return {"owner": members.owner_view(db, m), "members": members.list_members(db, map_id)}


def node_history(user_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """Who changed the node and what each edit set, for any member."""
    return call_as(user_id, map_id, READ, history.node_history, node_id)


def here(user_id: str, email: str, map_id: str) -> list[dict[str, str]]:
    """A member's heartbeat on the map's page; returns who is viewing it now (MapNotFound once
    the map is no longer shared with them: the page leaves it)."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, READ)
    r = get_redis()
    presence.beat(r, map_id, user_id, email)
    return presence.viewers(r, map_id)


def viewers(user_id: str, map_id: str) -> list[dict[str, str]]:
    """Who is viewing the map now, for any member."""
    require(user_id, map_id, READ)
    return presence.viewers(get_redis(), map_id)


def require(user_id: str, map_id: str, need: str) -> None:
    """MapNotFound / 403 `forbidden_role` unless the user's role on the map allows `need`."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, need)


def view(user_id: str, map_id: str) -> dict[str, Any]:
    """The whole map for any member, with the caller's `role`."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        return {**service.map_view(db, m.owner_id, map_id), "role": access.role_of(db, user_id, map_id)}


def add_member(user_id: str, map_id: str, email: object, role_name: object) -> dict[str, Any]:
    """The owner shares the map with the account of `email` as viewer or editor."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.OWNER)
        return members.add_member(db, user_id, map_id, email, role_name)


def set_member_role(user_id: str, map_id: str, member_id: str, role_name: object) -> dict[str, Any]:
    """The owner changes a member's role."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.OWNER)
        return members.set_role(db, map_id, member_id, role_name)


def remove_member(user_id: str, map_id: str, member_id: str) -> None:
    """The owner removes a member, or a member leaves (removes themselves)."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.VIEWER if member_id == user_id else Role.OWNER)
        members.remove_member(db, map_id, member_id)


def runs_of(user_id: str, map_id: str) -> list[dict[str, Any]]:
    """The views of the runs the user started on the map (any member), newest first."""
    with session_scope() as db:
        access.authorize(db, user_id, map_id, Role.VIEWER)
        return [run_service.view(db, op) for op in map_runs.map_runs(db, user_id, map_id)]


def node_citations(user_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The citation views of one node of a map the user may read."""
    with session_scope() as db:
        m = access.authorize(db, user_id, map_id, Role.VIEWER)
        return node_citation_views(db, m.owner_id, map_id, node_id)


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
