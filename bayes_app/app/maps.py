"""Map use cases that span the database and the job queue."""

from __future__ import annotations

from bayes_app.app import runs
from bayes_app.db import sessions
from bayes_app.maps import runs as map_runs
from bayes_app.redis_client import get_redis
from bayes_app.settings import get_settings


def delete_map(user_id: str, map_id: str) -> list[str]:
    """Delete the map; its running runs are cancelled (`resource_deleted`) and settled.
    Returns their ids; MapNotFound when the map is not the user's."""
    ids = map_runs.delete_map(sessions, get_redis(), user_id, map_id)
    runs.settle_cancelled(ids)
    return ids


def model_judges_support() -> bool:
    """With a model configured, support is judged by a billed `check_support` run."""
    return get_settings().model_default != "offline"
