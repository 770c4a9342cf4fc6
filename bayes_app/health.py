"""Health of the components the app depends on: database, Redis, workers, vector index, the
object store (when BAYES_STORAGE_URL is set), and
(under `make run`) the supervised processes: degraded while one is not running and for a
few seconds after one crashed and was restarted."""

from __future__ import annotations

import time
from typing import Any

from bayes_app import db
from bayes_app.redis_client import get_redis
from bayes_app.workers import live_workers


def _short(err: Exception) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0][:200]}" if str(err) else type(err).__name__


def check_health(database_url: str | None = None, redis_url: str | None = None) -> dict[str, Any]:
    """Return {"status": "ok"|"degraded", "broken": [...], "components": {...}}."""
    comps: dict[str, dict[str, Any]] = {}
    try:
        db.ping(database_url)
        comps["database"] = {"status": "ok"}
    except Exception as err:  # noqa: BLE001 - any failure means "down"
        comps["database"] = {"status": "down", "error": _short(err)}

    redis_ok = False
    try:
        r = get_redis(redis_url)
        r.ping()
        redis_ok = True
        comps["redis"] = {"status": "ok"}
    except Exception as err:  # noqa: BLE001
        comps["redis"] = {"status": "down", "error": _short(err)}

    if redis_ok:
        workers = live_workers(get_redis(redis_url))
        recycling = [] if workers else _planned_worker_restarts()
        if workers or recycling:
            # a worker recycled on purpose is replaced by the supervisor: no outage (36.10)
            comps["workers"] = {
                "status": "ok",
                "count": len(workers),
                **({"restarting": recycling} if recycling else {}),
            }
        else:
            comps["workers"] = {"status": "down", "count": 0, "error": "no worker heartbeat seen in the last 15 s"}
    else:
        comps["workers"] = {"status": "unknown", "count": 0, "error": "Redis is down"}

    try:
        import httpx2  # the app's own HTTP client (httpx is qdrant-client's and Reflex's)

        from bayes_app.settings import get_settings

        settings = get_settings()
        key = settings.effective_qdrant_api_key
        resp = httpx2.get(
            f"{settings.effective_qdrant_url}/collections", timeout=2.0, headers={"api-key": key} if key else None
        )
        resp.raise_for_status()
        comps["index"] = {"status": "ok"}
    except Exception as err:  # noqa: BLE001
        comps["index"] = {"status": "down", "error": _short(err)}

    from bayes_app.library import storage

    try:
        store = storage.default_store()
        if isinstance(store, storage.S3Store):  # the local store is the data dir itself
            store.ping()
            comps["storage"] = {"status": "ok", "url": store.describe()}
    except Exception as err:  # noqa: BLE001
        comps["storage"] = {"status": "down", "error": _short(err)}

    procs = supervised_processes()
    if procs is not None:
        comps["processes"] = procs

    broken = [name for name, c in comps.items() if c["status"] != "ok"]
    return {"status": "degraded" if broken else "ok", "broken": broken, "components": comps}


def _planned_worker_restarts() -> list[str]:
    """Worker programs that announced a planned restart within its grace period."""
    from bayes_app.procs import planned
    from bayes_app.settings import get_settings

    return sorted(p for p in planned.recent(get_settings().data_path, time.time()) if p.startswith("worker"))


def public_view(report: dict[str, Any]) -> dict[str, Any]:
    """What anyone may see: the status alone (components, process ids, uptimes and crash
    counts are for administrators)."""
    return {"status": report["status"]}


def supervised_processes() -> dict[str, Any] | None:
    """The supervisor's report for this data dir; None when the app was not started by
    `make run` (no supervisor socket)."""
    from bayes_app.procs.config import paths
    from bayes_app.procs.status import report
    from bayes_app.settings import get_settings

    settings = get_settings()
    if not paths(settings.data_path).socket.exists():
        return None
    try:
        return report(settings.data_path, settings.secret())
    except Exception as err:  # noqa: BLE001
        return {"status": "unknown", "error": _short(err)}
