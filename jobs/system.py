"""Small system actors: a round-trip probe used by the health tooling and the tests."""

from __future__ import annotations

import os
import time

import dramatiq

from bayes_app.redis_client import get_redis


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=10_000)
def echo(key: str, value: str) -> None:
    """Write `value` (and which process ran it) to Redis under `key` for 60 s."""
    get_redis().set(key, f"{value}|pid={os.getpid()}|t={time.time():.3f}", ex=60)
