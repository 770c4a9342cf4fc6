"""Worker liveness: each worker process keeps a short-lived heartbeat key in Redis."""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any, cast

import redis

HEARTBEAT_PREFIX = "bayes:worker:"
HEARTBEAT_TTL_S = 15
HEARTBEAT_EVERY_S = 5


def heartbeat_key(pid: int | None = None) -> str:
    return f"{HEARTBEAT_PREFIX}{socket.gethostname()}:{pid or os.getpid()}"


def publish_heartbeat(r: redis.Redis, queues: list[str]) -> None:
    """Record that this worker process is alive (expires unless renewed)."""
    r.set(heartbeat_key(), json.dumps({"ts": time.time(), "queues": sorted(queues)}), ex=HEARTBEAT_TTL_S)


def clear_heartbeat(r: redis.Redis) -> None:
    r.delete(heartbeat_key())


def live_workers(r: redis.Redis) -> list[dict[str, Any]]:
    """Heartbeats of worker processes seen within the TTL."""
    out = []
    for key in r.scan_iter(match=HEARTBEAT_PREFIX + "*", count=100):
        raw = cast("bytes | str | None", r.get(key))  # the sync client's reply
        if raw:
            info = json.loads(raw)
            info["id"] = key.removeprefix(HEARTBEAT_PREFIX)
            out.append(info)
    return out
