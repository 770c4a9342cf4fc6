"""Redis connections (sync for workers and scripts, asyncio for the web server)."""

from __future__ import annotations

import redis
import redis.asyncio as aioredis

from bayes_app.settings import get_settings

_sync: dict[str, redis.Redis] = {}


def get_redis(url: str | None = None) -> redis.Redis:
    """A shared sync client (connection-pooled, thread-safe) for the configured Redis."""
    url = url or get_settings().effective_redis_url
    if url not in _sync:
        _sync[url] = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=2,
            socket_timeout=5,
            health_check_interval=30,
        )
    return _sync[url]


def new_async_redis(url: str | None = None) -> aioredis.Redis:
    """A new asyncio client; the caller closes it (`await r.aclose()`)."""
    return aioredis.from_url(
        url or get_settings().effective_redis_url,
        decode_responses=True,
        socket_connect_timeout=2,
        socket_timeout=5,
    )
