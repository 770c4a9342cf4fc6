"""One follower of a run's event stream, shared by every live view (the HTTP event stream,
the chat page, the map editor).

A follower reads batches after its cursor: the entries already there at once, else it waits
up to `block_ms` for new ones (an empty batch means "nothing for a while", which callers use
for keep-alives and probes). A Redis outage never ends a view: the read waits `retry_s` and
answers an empty batch, and the next read resumes from the same cursor. With `min_gap_s`, a
burst of entries is delivered in fewer, larger batches: a batch that would follow the last
one sooner than that waits out the gap and takes what arrived meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from bayes_app.runs import events
from bayes_app.runs.events import RunEvent

RETRY_S = 0.5  # wait after a failed read (Redis restarting) before answering an empty batch


class RunFollower:
    """Batches of one run's events after a cursor, over one async Redis connection."""

    def __init__(
        self,
        redis: Any,
        run_id: str = "",
        cursor: str | None = None,
        *,
        block_ms: int = 1000,
        min_gap_s: float = 0.0,
        retry_s: float = RETRY_S,
    ) -> None:
        self.redis = redis
        self.run_id, self.cursor = run_id, cursor
        self.block_ms, self.min_gap_s, self.retry_s = block_ms, min_gap_s, retry_s
        self.failures = 0  # reads that failed in a row (0 once a read succeeds)
        self._last = 0.0  # monotonic time the last non-empty batch was delivered

    def follow(self, run_id: str, cursor: str | None = None) -> None:
        """Switch to `run_id` (from `cursor`; None = its first entry)."""
        self.run_id, self.cursor = run_id, cursor

    async def _read(self, block_ms: int) -> list[RunEvent] | None:
        try:
            batch = await events.read_after_async(self.redis, self.run_id, self.cursor, block_ms=block_ms)
        except Exception:  # noqa: BLE001 - Redis restarting: the caller gets an empty batch
            self.failures += 1
            return None
        self.failures = 0
        if batch:
            self.cursor = batch[-1].id
        return batch

    async def next(self) -> list[RunEvent]:
        """The next batch (empty after `block_ms` with nothing new, or after a failed read)."""
        batch = await self._read(self.block_ms)
        if batch is None:
            await asyncio.sleep(self.retry_s)
            return []
        if batch and self.min_gap_s:
            wait = self.min_gap_s - (time.monotonic() - self._last)
            if wait > 0:  # a burst: one delivery for what arrives within the gap
                await asyncio.sleep(wait)
                batch += await self._read(1) or []
            self._last = time.monotonic()
        return batch

    async def until_done(self) -> AsyncIterator[list[RunEvent]]:
        """Batches until the one holding `done` (that one included); empty ones while idle."""
        while True:
            batch = await self.next()
            yield batch
            if any(ev.type == "done" for ev in batch):
                return

    async def aclose(self) -> None:
        await self.redis.aclose()
