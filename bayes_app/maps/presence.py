"""Who is viewing a map: short-lived heartbeats in Redis (no database rows). An open map page
beats every BEAT_S; a viewer whose last beat is older than TTL_S is gone (closed tab, lost
connection) without any cleanup. One sorted set per map: member = user id, score = expiry."""

from __future__ import annotations

import json
import time
from typing import cast

import redis

TTL_S = 10.0
BEAT_S = 3.0


def _key(map_id: str) -> str:
    return f"map:{map_id}:presence"


def beat(r: redis.Redis, map_id: str, user_id: str, email: str) -> None:
    """The user has the map open now (their name is shown to the other viewers for TTL_S)."""
    now = time.time()
    key = _key(map_id)
    pipe = r.pipeline()
    pipe.zadd(key, {json.dumps([user_id, email]): now + TTL_S})
    pipe.zremrangebyscore(key, "-inf", now)
    pipe.expire(key, int(TTL_S * 6))
    pipe.execute()


def leave(r: redis.Redis, map_id: str, user_id: str, email: str) -> None:
    """The user closed the map (a courtesy: without it their beat simply expires)."""
    r.zrem(_key(map_id), json.dumps([user_id, email]))


def viewers(r: redis.Redis, map_id: str) -> list[dict[str, str]]:
    """The users viewing the map now, by e-mail."""
    now = time.time()
    out: dict[str, str] = {}
    for raw in cast(list[str], r.zrangebyscore(_key(map_id), now, "+inf")):
        user_id, email = json.loads(raw)
        out[user_id] = email
    return [{"user_id": u, "email": e} for u, e in sorted(out.items(), key=lambda kv: kv[1])]
