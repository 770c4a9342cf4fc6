"""The map editor's watcher: what changed on a map while it is open, as a stream of changes.

It follows the map's active run from its stream cursor (nodes appear as the writer commits
them; bursts coalesced by `runs.follower.RunFollower`), wakes at once when a run starts
elsewhere (the map's `started` stream), and probes the map's revision counter (one indexed
SELECT every `poll_s` while no run is live, at least once a second during one) so another
tab's edits show within a second. With a `beat` it also keeps the caller's presence on the map
every `beat_s` (who else is viewing it; None: the map is no longer the caller's to see). It
decides when there is something to show; the editor
applies each `MapChange` and tells the watcher where it now stands (`seen`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from bayes_app.maps.presence import BEAT_S
from bayes_app.maps.runs import started_key
from bayes_app.runs.events import RunEvent
from bayes_app.runs.follower import RunFollower

Probe = Callable[[], tuple[int | None, str | None]]  # (revision or None when gone, active run)
Beat = Callable[[], list[str] | None]  # presence heartbeat: the others viewing the map (None: gone)
POLL_S = 0.25  # revision poll while no run is live
RUN_BLOCK_MS = 250  # XREAD BLOCK while a run is live
RELOAD_MIN_S = 1.0  # during a run, full reloads for foreign edits at most this often
SYNC_S = 1.0  # with nothing new, a change (the probe's result) at least this often
# During a burst of writes, at most one change per PUSH_MIN_S: each costs the browser a render,
# and a backlog of renders (not the wait) is what made nodes late (see docs/notes/mindmap-ui.md).
PUSH_MIN_S = 0.05


@dataclass(frozen=True)
class MapChange:
    """Something to show. `batch`: the followed run's new events; `revision`: the map's (None:
    the map is gone); `active`: its active run; `new_run`: a run other than the followed one
    started; `foreign`: edits beyond the editor's revision to reload; `at`: when (monotonic);
    `viewers`: who else is viewing the map, when a heartbeat just said (else None)."""

    batch: list[RunEvent]
    revision: int | None
    active: str | None
    new_run: bool
    foreign: bool
    at: float
    viewers: list[str] | None = None


class MapWatcher:
    """Changes of one open map. `probe` reads (revision, active run) and blocks (it runs in a
    thread); `run_id`/`cursor`/`revision` are where the editor stands when it starts."""

    def __init__(
        self,
        redis: Any,
        map_id: str,
        probe: Probe,
        run_id: str = "",
        cursor: str | None = None,
        revision: int = 0,
        *,
        poll_s: float = POLL_S,
        block_ms: int = RUN_BLOCK_MS,
        min_gap_s: float = PUSH_MIN_S,
        reload_min_s: float = RELOAD_MIN_S,
        beat: Beat | None = None,
        beat_s: float = BEAT_S,
    ) -> None:
        self.follower = RunFollower(redis, run_id, cursor, block_ms=block_ms, min_gap_s=min_gap_s)
        self.redis, self.probe = redis, probe
        self.poll_s, self.reload_min_s = poll_s, reload_min_s
        self.started = started_key(map_id)
        self.started_cursor = f"{int(time.time() * 1000)}-0"
        self.run_id, self.known_rev = run_id, revision
        self.rev: int | None = revision
        self.active: str | None = run_id or None
        self.last_reload = self.last_sync = self.last_probe = self.last_beat = 0.0
        self.beat, self.beat_s = beat, beat_s

    def seen(self, run_id: str, cursor: str | None, revision: int, reloaded_at: float | None = None) -> None:
        """The editor applied a change: it follows `run_id` from `cursor` and stands at
        `revision` (`reloaded_at`: the change's time, when it re-read the whole map)."""
        self.run_id, self.known_rev = run_id, revision
        if reloaded_at is not None:
            self.last_reload = reloaded_at
        if (run_id, cursor) != (self.follower.run_id, self.follower.cursor):
            self.follower.follow(run_id, cursor)

    async def _probe(self) -> None:
        self.rev, self.active = await asyncio.to_thread(self.probe)
        self.last_probe = time.monotonic()

    async def _wait_for_a_start(self) -> None:
        """Idle: a run started elsewhere wakes us at once; else back after `poll_s`."""
        try:
            res = await self.redis.xread({self.started: self.started_cursor}, block=int(self.poll_s * 1000), count=10)
            for _key, entries in res or []:
                self.started_cursor = entries[-1][0]
        except Exception:  # noqa: BLE001 - Redis restarting: plain polling meanwhile
            await asyncio.sleep(self.poll_s)

    async def changes(self) -> AsyncIterator[MapChange]:
        """Every change to show, for as long as the caller iterates (it calls `seen` after each)."""
        while True:
            batch: list[RunEvent] = []
            if self.run_id:
                batch = await self.follower.next()
            else:
                await self._wait_for_a_start()
            now = time.monotonic()
            viewers: list[str] | None = None
            if self.beat is not None and now - self.last_beat >= self.beat_s:
                self.last_beat = now
                viewers = await asyncio.to_thread(self.beat)
                if viewers is None:  # no longer the caller's to see: the map is gone for them
                    yield MapChange([], None, None, False, False, now)
                    continue
            if not batch:  # events flowing: the probe runs after they are shown (below)
                await self._probe()
            new_run = self.active is not None and self.active != self.run_id and not batch
            # the run's own writes are counted into the editor's revision as their events are
            # applied, so only a revision beyond that is someone else's edit
            foreign = (
                self.rev is not None
                and self.rev > self.known_rev
                and (not self.run_id or now - self.last_reload >= self.reload_min_s)
            )
            quiet = not batch and not new_run and not foreign and viewers is None
            if quiet and self.rev is not None and now - self.last_sync < SYNC_S:
                continue
            self.last_sync = now
            yield MapChange(batch, self.rev, self.active, new_run, foreign, now, viewers)
            if batch and time.monotonic() - self.last_probe >= 1.0:  # at least one probe a second
                await self._probe()

    async def aclose(self) -> None:
        """Close the follower's Redis connection."""
        await self.follower.aclose()
