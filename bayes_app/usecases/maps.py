"""Map use cases: every edit or read of a map in its own transaction, and the ones that
span the database and the job queue (deleting a map with runs working on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from bayes_app.db import session_scope, sessions
from bayes_app.maps import live as live_map
from bayes_app.maps import runs as map_runs
from bayes_app.maps import service
from bayes_app.maps.views import node_citation_views
from bayes_app.maps.watch import MapChange, MapWatcher
from bayes_app.redis_client import get_redis, new_async_redis
from bayes_app.runs import service as run_service
from bayes_app.settings import get_settings
from bayes_app.usecases import runs

T = TypeVar("T")
__all__ = ["MapChange", "MapWatcher"]  # the editor's watcher and what it yields


def call(fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """One maps-domain call (`fn(db, *args)`: an edit, a view, the revision, a listing) in one
    transaction: commit, or roll back and let its MapError/MapNotFound reach the caller."""
    with session_scope() as db:
        return fn(db, *args, **kw)


def runs_of(user_id: str, map_id: str) -> list[dict[str, Any]]:
    """The views of the runs on the user's map, newest first."""
    with session_scope() as db:
        return [run_service.view(db, op) for op in map_runs.map_runs(db, user_id, map_id)]


def node_citations(user_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The citation views of one node of the user's map."""
    with session_scope() as db:
        service.get_map(db, user_id, map_id)
        return node_citation_views(db, user_id, map_id, node_id)


def probe(user_id: str, map_id: str) -> tuple[int | None, str | None]:
    """The map's revision (None when it is gone) and its active run."""
    with session_scope() as db:
        return live_map.probe(db, user_id, map_id)


def watcher(user_id: str, map_id: str, run_id: str, cursor: str | None, revision: int) -> MapWatcher:
    """The changes of the user's open map, from where the editor stands (close it with aclose)."""
    return MapWatcher(new_async_redis(), map_id, lambda: probe(user_id, map_id), run_id, cursor, revision)


def delete_map(user_id: str, map_id: str) -> list[str]:
    """Delete the map; its running runs are cancelled (`resource_deleted`) and settled.
    Returns their ids; MapNotFound when the map is not the user's."""
    ids = map_runs.delete_map(sessions, get_redis(), user_id, map_id)
    runs.settle_cancelled(ids)
    return ids


def model_judges_support() -> bool:
    """With a model configured, support is judged by a billed `check_support` run."""
    return get_settings().model_default != "offline"
