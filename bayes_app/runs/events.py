"""A run's event log: the Redis Stream `op:{id}:events`.

Entries are `{type, data}` (data = JSON). Observers replay from a cursor (exclusive XRANGE)
and then follow with XREAD BLOCK; the entry id is the SSE event id. Entries outlive the run
for `KEEP_S` so a late reader still sees the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import redis
import redis.asyncio as aioredis

EVENT_TYPES = (
    "thinking",
    "metadata",
    "text",
    "tool",
    "grounding",
    "memory",
    "usage",
    "status",
    "error",
    "done",
    "node",
    "relation",
    "proposal",
    "agent",
    "route",  # node … route: map runs
    "progress",  # {"done", "total"}: runs that work through a list (a table's papers)
    "cells",  # a table's cells of one paper, as stored
)
MAXLEN = 10_000
KEEP_S = 7 * 24 * 3600
START = "0-0"


def stream_key(op_id: str) -> str:
    return f"op:{op_id}:events"


@dataclass(frozen=True, slots=True)
class RunEvent:
    id: str
    type: str
    data: Any

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "data": self.data}


def _fields(type_: str, data: Any) -> dict[str, str]:
    if type_ not in EVENT_TYPES:
        raise ValueError(f"unknown event type {type_!r}")
    return {"type": type_, "data": json.dumps(data, ensure_ascii=False, default=str)}


def _decode(entry_id: Any, fields: dict[Any, Any]) -> RunEvent:
    def s(v: Any) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)

    f = {s(k): s(v) for k, v in fields.items()}
    try:
        data = json.loads(f.get("data", "null"))
    except ValueError:
        data = f.get("data")
    return RunEvent(s(entry_id), f.get("type", ""), data)


def append(r: redis.Redis, op_id: str, type_: str, data: Any, key: str | None = None) -> str:
    """XADD one event (MAXLEN ~ 10000); returns its entry id.

    With `key` (unique per event of the run) the append is idempotent: a retry after a lost
    reply (Redis restarted between applying the XADD and answering) returns the entry
    already written instead of adding it twice.
    """
    stream = stream_key(op_id)
    fields: dict[Any, Any] = _fields(type_, data)
    if key is not None:
        script = r.register_script(_APPEND_ONCE)
        entry_id: Any = script(keys=[stream], args=[fields["type"], fields["data"], key, MAXLEN, KEEP_S])
    else:
        pipe = r.pipeline(transaction=False)
        pipe.xadd(stream, fields, maxlen=MAXLEN, approximate=True)
        pipe.expire(stream, KEEP_S)
        entry_id = pipe.execute()[0]
    return entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)


# The run's writer is serial and retries at once, so the event it retries is among the last
# few entries (another writer may have appended a status or `done` in between).
_APPEND_ONCE = """
for _, entry in ipairs(redis.call('xrevrange', KEYS[1], '+', '-', 'COUNT', 16)) do
  local f = entry[2]
  for i = 1, #f, 2 do
    if f[i] == 'k' and f[i + 1] == ARGV[3] then return entry[1] end
  end
end
local id = redis.call('xadd', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'type', ARGV[1], 'data', ARGV[2], 'k', ARGV[3])
redis.call('expire', KEYS[1], ARGV[5])
return id
"""


_APPEND_DONE = """
if redis.call('set', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  local id = redis.call('xadd', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'type', 'done', 'data', ARGV[1])
  redis.call('expire', KEYS[1], ARGV[2])
  return id
end
return false
"""


def append_done(r: redis.Redis, op_id: str, data: Any) -> str | None:
    """Append the terminal `done` event exactly once per run (atomic check-and-XADD);
    None when it was already there."""
    fields = _fields("done", data)
    entry_id: Any = r.eval(_APPEND_DONE, 2, stream_key(op_id), f"op:{op_id}:done", fields["data"], KEEP_S, MAXLEN)
    if not entry_id:
        return None
    return entry_id.decode() if isinstance(entry_id, bytes) else entry_id


def _after(cursor: str | None) -> str:
    """The exclusive XRANGE start after `cursor` (`-` for the beginning)."""
    return "-" if not cursor or cursor == START else f"({cursor}"


def valid_cursor(cursor: str | None) -> str | None:
    """`cursor` if it looks like a stream id (`ms-seq` or `ms`), else None."""
    if not cursor:
        return None
    head, _, tail = cursor.strip().partition("-")
    return cursor.strip() if head.isdigit() and (not tail or tail.isdigit()) else None


def read_range(r: redis.Redis, op_id: str, after: str | None = None, count: int = 1000) -> list[RunEvent]:
    entries = cast(list[tuple[Any, dict[Any, Any]]], r.xrange(stream_key(op_id), _after(after), "+", count=count))
    return [_decode(i, f) for i, f in entries]


def follow(
    r: redis.Redis,
    op_id: str,
    after: str | None = None,
    block_ms: int = 1000,
    stop_at_done: bool = True,
    idle_timeout_s: float | None = None,
) -> Iterator[RunEvent]:
    """Events after `after`: replay, then block for new ones; ends after `done`."""
    import time

    cursor = after or START
    deadline = time.monotonic() + idle_timeout_s if idle_timeout_s else None
    while True:
        batch = read_range(r, op_id, cursor)
        if not batch:
            res = cast(list[Any] | None, r.xread({stream_key(op_id): cursor}, block=block_ms, count=1000))
            batch = [_decode(i, f) for _k, entries in (res or []) for i, f in entries]
        for ev in batch:
            cursor = ev.id
            yield ev
            if stop_at_done and ev.type == "done":
                return
        if batch and deadline:
            deadline = time.monotonic() + idle_timeout_s  # type: ignore[operator]
        if deadline and time.monotonic() > deadline:
            return


async def read_after_async(r: aioredis.Redis, op_id: str, cursor: str | None, block_ms: int = 1000) -> list[RunEvent]:
    """One round: the entries after `cursor` (exclusive), else XREAD BLOCK for new ones."""
    key = stream_key(op_id)
    raw = await r.xrange(key, _after(cursor), "+", count=1000)
    batch = [_decode(i, f) for i, f in raw]
    if not batch:
        res = await r.xread({key: cursor or START}, block=block_ms, count=1000)
        batch = [_decode(i, f) for _k, entries in (res or []) for i, f in entries]
    return batch
