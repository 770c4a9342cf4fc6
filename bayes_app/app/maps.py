"""Map use cases: every edit or read of a map in its own transaction, and the ones that
span the database and the job queue (deleting a map with runs working on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlmodel import Session

from bayes_app.app import runs
from bayes_app.db import session_scope, sessions
from bayes_app.maps import live, service
from bayes_app.maps import runs as map_runs
from bayes_app.runs import service as run_service
from bayes_app.redis_client import get_redis
from bayes_app.settings import get_settings


T = TypeVar("T")


def transact(fn: Callable[..., T], *args: Any, **kw: Any) -> T:
    """One maps-domain call (`fn(db, ...)`) in one transaction: commit, or roll back on error."""
    with session_scope() as db:
        return fn(db, *args, **kw)


def runs_of(user_id: str, map_id: str) -> list[dict[str, Any]]:
    """The views of the runs on the user's map, newest first."""
    with session_scope() as db:
        return [run_service.view(db, op) for op in map_runs.map_runs(db, user_id, map_id)]


def call(fn: Callable[..., T], user_id: str, map_id: str, *args: Any, **kw: Any) -> T:
    """One map service call (`fn(db, user_id, map_id, ...)`: an edit, a view, the revision)
    in one transaction; its MapError/MapNotFound reach the caller."""
    with session_scope() as db:
        return fn(db, user_id, map_id, *args, **kw)


def list_maps(user_id: str) -> list[dict[str, Any]]:
    with session_scope() as db:
        return service.list_maps(db, user_id)


def create_map(user_id: str, title: str, question: str = "") -> dict[str, Any]:
    with session_scope() as db:
        return service.create_map(db, user_id, title, question)


def node_citations(user_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The citation views of one node of the user's map."""
    def read(db: Session, user_id: str, map_id: str) -> list[dict[str, Any]]:
        service.get_map(db, user_id, map_id)
        return [service.citation_view(c, d) for c, d in service.map_citations(db, map_id) if c.node_id == node_id]
    return call(read, user_id, map_id)


def probe(user_id: str, map_id: str) -> tuple[int | None, str | None]:
    """(revision or None when the map is gone, the newest active run on it) — see maps.live."""
    with session_scope() as db:
        return live.probe(db, user_id, map_id)


def delete_map(user_id: str, map_id: str) -> list[str]:
    """Delete the map; its running runs are cancelled (`resource_deleted`) and settled.
    Returns their ids; MapNotFound when the map is not the user's."""
    ids = map_runs.delete_map(sessions, get_redis(), user_id, map_id)
    runs.settle_cancelled(ids)
    return ids


def model_judges_support() -> bool:
    """With a model configured, support is judged by a billed `check_support` run."""
    return get_settings().model_default != "offline"
