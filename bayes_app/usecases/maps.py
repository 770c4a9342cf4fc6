"""Map use cases: every edit or read of a map in its own transaction, and the ones that
span the database and the job queue (deleting a map with runs working on it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlmodel import Session

from bayes_app.db import session_scope, sessions
from bayes_app.maps import citations, export, service
from bayes_app.maps import live as live_map
from bayes_app.maps import runs as map_runs
from bayes_app.maps.outline import outline_rows
from bayes_app.maps.views import node_citation_views
from bayes_app.maps.watch import MapChange, MapWatcher
from bayes_app.redis_client import get_redis, new_async_redis
from bayes_app.runs import service as run_service
from bayes_app.settings import get_settings
from bayes_app.usecases import runs

T = TypeVar("T")
__all__ = ["MapChange", "MapWatcher", "outline_rows", "outcome_line"]  # the editor's watcher, view helpers
outcome_line = map_runs.outcome_line


P = ParamSpec("P")


def _use_case(fn: Callable[Concatenate[Session, P], T]) -> Callable[P, T]:
    """The maps-domain function `fn(db, …)` as a named use case `(…)`: one transaction, commit,
    or roll back and let its MapError/MapNotFound reach the caller."""

    def use_case(*args: P.args, **kw: P.kwargs) -> T:
        with session_scope() as db:
            return fn(db, *args, **kw)

    use_case.__name__, use_case.__qualname__, use_case.__doc__ = fn.__name__, fn.__name__, fn.__doc__
    return use_case


# Every map read and edit the front doors make, each in its own transaction (the edits commit
# with their undo entry and revision bump: see docs/architecture.md, "Map edits commit per call").
list_maps = _use_case(service.list_maps)
create_map = _use_case(service.create_map)
rename_map = _use_case(service.rename_map)
map_view = _use_case(service.map_view)
revision = _use_case(service.revision)
undo = _use_case(service.undo)
auto_layout = _use_case(service.auto_layout)
add_child = _use_case(service.add_child)
add_sibling = _use_case(service.add_sibling)
update_node = _use_case(service.update_node)
move_node = _use_case(service.move_node)
move_step = _use_case(service.move_step)
set_positions = _use_case(service.set_positions)
delete_subtree = _use_case(service.delete_subtree)
accept_proposal = _use_case(service.accept_proposal)
reject_proposal = _use_case(service.reject_proposal)
check_support = _use_case(citations.check_support)
attach_citation = _use_case(citations.attach_citation)
delete_citation = _use_case(citations.delete_citation)
accept_rewrite = _use_case(citations.accept_rewrite)
export_json = _use_case(export.as_json)
export_markdown = _use_case(export.markdown)
export_bibtex = _use_case(export.bibtex)
export_docx = _use_case(export.docx_bytes)
# the map's revision (None when it is gone) and its active run
probe = _use_case(live_map.probe)


def runs_of(user_id: str, map_id: str) -> list[dict[str, Any]]:
    """The views of the runs on the user's map, newest first."""
    with session_scope() as db:
        return [run_service.view(db, op) for op in map_runs.map_runs(db, user_id, map_id)]


def node_citations(user_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The citation views of one node of the user's map."""
    with session_scope() as db:
        service.get_map(db, user_id, map_id)
        return node_citation_views(db, user_id, map_id, node_id)


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
