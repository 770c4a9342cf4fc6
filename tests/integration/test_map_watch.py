"""The map editor's watcher (`maps.watch.MapWatcher`) against a real redis-server, driven
directly: a run's events as changes, a run started elsewhere waking it at once, another
tab's edit, and the map's deletion."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import redis

from bayes_app.maps.runs import announce_started
from bayes_app.maps.watch import MapWatcher
from bayes_app.redis_client import new_async_redis
from bayes_app.runs import events

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


@pytest.fixture
def r(redis_server):
    client = redis.Redis.from_url(redis_server.url_db(13), decode_responses=True)
    yield client
    client.flushdb()


class Map:
    """What the probe reads: the map's revision (None once deleted) and its active run."""

    def __init__(self) -> None:
        self.revision: int | None = 3
        self.active: str | None = None

    def probe(self) -> tuple[int | None, str | None]:
        return self.revision, self.active


def _watcher(redis_server, m: Map, run_id: str = "", cursor: str | None = None) -> MapWatcher:
    return MapWatcher(new_async_redis(redis_server.url_db(13)), "m1", m.probe, run_id, cursor, 3, poll_s=0.2)


def test_the_followed_runs_events_come_as_changes_after_the_cursor(redis_server, r) -> None:
    run, m = uuid.uuid4().hex, Map()
    m.active = run
    first = events.append(r, run, "status", {"status": "RUNNING"})
    events.append(r, run, "node", {"id": "n1"})
    events.append(r, run, "node", {"id": "n2"})

    async def main() -> list[str]:
        w = _watcher(redis_server, m, run, first)
        try:
            async for change in w.changes():
                assert change.revision == 3
                assert not change.new_run
                assert not change.foreign
                ids = [ev.data["id"] for ev in change.batch]
                w.seen(run, change.batch[-1].id, 3)
                return ids
        finally:
            await w.aclose()
        return []

    assert asyncio.run(main()) == ["n1", "n2"]


def test_a_run_started_elsewhere_wakes_the_idle_watcher_at_once(redis_server, r) -> None:
    m, run = Map(), uuid.uuid4().hex

    async def main() -> tuple[float, str | None, bool]:
        w = MapWatcher(new_async_redis(redis_server.url_db(13)), "m1", m.probe, "", None, 3, poll_s=3.0)
        try:
            changes = w.changes()
            first = await anext(changes)  # the first probe: where the map stands
            assert first.batch == []
            assert not first.new_run
            w.seen("", None, 3)
            t0 = time.monotonic()
            m.active = run
            await asyncio.to_thread(announce_started, r, "m1", run)
            change = await anext(changes)
            return time.monotonic() - t0, change.active, change.new_run
        finally:
            await w.aclose()

    waited, active, new_run = asyncio.run(main())
    assert active == run
    assert new_run
    assert waited < 1.5  # not the 3 s poll


def test_another_tabs_edit_and_the_maps_deletion(redis_server) -> None:
    m = Map()

    async def main() -> list[tuple[int | None, bool]]:
        w = _watcher(redis_server, m)
        seen: list[tuple[int | None, bool]] = []
        try:
            async for change in w.changes():
                seen.append((change.revision, change.foreign))
                if change.revision is None:
                    break
                if change.foreign:  # the editor re-read the map: it stands at the new revision
                    w.seen("", None, change.revision, reloaded_at=change.at)
                    m.revision = None  # then the map is deleted
                else:
                    w.seen("", None, 3)
                    m.revision = 4  # another tab edits it
        finally:
            await w.aclose()
        return seen

    assert asyncio.run(main()) == [(3, False), (4, True), (None, False)]
