"""The index directory: one qdrant-edge shard per collection, the process lock, background
flushes and idle-time optimisation."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import qdrant_edge as qe

from bayes_app.search.index_server.convert import to_edge_config
from bayes_app.search.index_server.errors import ApiError, IndexLockedError, not_found

log = logging.getLogger("bayes.index_server")


FLUSH_INTERVAL_S = 30.0  # longest a dirty shard waits for a flush while writes go on
FLUSH_QUIET_S = 1.0  # flush this long after the last write
# Below ~6.7k 384-d vectors (the engine's 10 MB indexing threshold) optimize has nothing
# to index, and a plain scan of that many costs 1-2 ms.
OPTIMIZE_MIN_CHANGES = 5_000  # points written/deleted since the last optimize
OPTIMIZE_IDLE_S = 600.0  # optimize() blocks the process: only after this long without requests
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,254}$")

# --------------------------------------------------------------------------- storage


class Collection:
    """One collection = one EdgeShard. Writes are serialised; readers count as users so a
    deleted collection is closed and removed only after its last in-flight request."""

    def __init__(self, name: str, path: Path, shard: qe.EdgeShard, meta: dict[str, Any]) -> None:
        self.name, self.path, self.shard, self.meta = name, path, shard, meta
        self.write_lock = threading.Lock()
        self.dirty = False
        self.changes_since_optimize = 0
        self.last_write = 0.0
        self.last_flush = time.monotonic()
        self.optimizing = False
        self._ref_lock = threading.Lock()
        self._users = 0
        self._deleted = False
        self.closed = False

    def acquire(self) -> bool:
        with self._ref_lock:
            if self._deleted or self.closed:
                return False
            self._users += 1
            return True

    def release(self) -> None:
        with self._ref_lock:
            self._users -= 1
            dispose = self._deleted and self._users == 0
        if dispose:
            self._dispose()

    def mark_deleted(self) -> None:
        with self._ref_lock:
            self._deleted = True
            dispose = self._users == 0
        if dispose:
            self._dispose()

    def _dispose(self) -> None:
        try:
            self.shard.close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)

    def update(self, op: Any, changes: int) -> None:
        """Apply one update (appended to the WAL before this returns)."""
        with self.write_lock:
            self.shard.update(op)
            self.dirty = True
            self.last_write = time.monotonic()
            self.changes_since_optimize += changes

    def flush(self) -> None:
        with self.write_lock:
            if self.dirty and not self.closed:
                self.dirty = False
                t0 = time.perf_counter()
                self.shard.flush()
                if (took := time.perf_counter() - t0) > 0.1:
                    log.info("flushed %s in %.2fs", self.name, took)
            self.last_flush = time.monotonic()


def _take_dir_lock(root: Path) -> int:
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise IndexLockedError(
            f"index directory {root} is in use by another process (pid {owner}); "
            "only one index server may own it (point QDRANT_URL at that server instead)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(data))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class Store:
    """All collections under one directory, owned exclusively by this process."""

    def __init__(
        self,
        root: Path,
        *,
        flush_interval: float = FLUSH_INTERVAL_S,
        flush_quiet: float = FLUSH_QUIET_S,
        optimize_min_changes: int = OPTIMIZE_MIN_CHANGES,
        optimize_idle: float = OPTIMIZE_IDLE_S,
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = _take_dir_lock(self.root)  # before any shard is opened
        self.flush_interval = flush_interval
        self.flush_quiet = flush_quiet
        self.optimize_min_changes = optimize_min_changes
        self.optimize_idle = optimize_idle
        self.last_request = time.monotonic()  # set by every API request
        self._dir = self.root / "collections"
        self._dir.mkdir(exist_ok=True)
        self._collections: dict[str, Collection] = {}
        self._registry_lock = threading.Lock()
        self._stop = threading.Event()
        self._load()
        self._threads = [
            threading.Thread(target=self._flush_loop, name="index-flush", daemon=True),
            threading.Thread(target=self._optimize_loop, name="index-optimize", daemon=True),
        ]
        for t in self._threads:
            t.start()

    # -- registry

    def _load(self) -> None:
        for d in sorted(self._dir.iterdir()):
            meta_path = d / "meta.json"
            if not meta_path.exists():
                log.info("removing unfinished or deleted collection directory %s", d)
                shutil.rmtree(d, ignore_errors=True)
                continue
            meta = orjson.loads(meta_path.read_bytes())
            t0 = time.perf_counter()
            shard = qe.EdgeShard.load(str(d / "shard"))
            coll = Collection(meta["name"], d, shard, meta)
            coll.changes_since_optimize = self.optimize_min_changes  # WAL replay may leave work
            self._collections[meta["name"]] = coll
            log.info("loaded collection %s in %.2fs", meta["name"], time.perf_counter() - t0)

    def names(self) -> list[str]:
        return sorted(self._collections)

    def exists(self, name: str) -> bool:
        return name in self._collections

    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[Collection]:
        """The collection, kept open for the duration of the block; 404 if absent."""
        coll = self._collections.get(name)
        if coll is None or not coll.acquire():
            raise not_found(f"Collection `{name}` doesn't exist!")
        try:
            yield coll
        finally:
            coll.release()

    def create(self, name: str, body: dict[str, Any]) -> bool:
        if not _NAME_RE.match(name):
            raise ApiError(422, f"Validation error in path parameters: [name: invalid collection name {name!r}]")
        config, echoed = to_edge_config(body)
        with self._registry_lock:
            if name in self._collections:
                raise ApiError(409, f"Wrong input: Collection `{name}` already exists!")
            path = self._dir / uuid.uuid4().hex
            shard = qe.EdgeShard.create(str(path / "shard"), config)
            meta = {"name": name, "created_at": datetime.now(UTC).isoformat(), "params": echoed}
            _write_json_atomic(path / "meta.json", meta)
            self._collections[name] = Collection(name, path, shard, meta)
        log.info("created collection %s", name)
        return True

    def delete(self, name: str) -> bool:
        with self._registry_lock:
            coll = self._collections.get(name)
            if coll is None:
                return False
            (coll.path / "meta.json").unlink(missing_ok=True)  # durable intent: GC'd at next start
            del self._collections[name]
        coll.mark_deleted()
        log.info("deleted collection %s", name)
        return True

    # -- background work

    def _flush_loop(self) -> None:
        while not self._stop.wait(0.5):
            now = time.monotonic()
            for coll in list(self._collections.values()):
                due = now - coll.last_write >= self.flush_quiet or now - coll.last_flush >= self.flush_interval
                if coll.dirty and due and coll.acquire():
                    try:
                        coll.flush()
                    except Exception:
                        log.exception("flush of %s failed", coll.name)
                    finally:
                        coll.release()

    def _optimize_loop(self) -> None:
        while not self._stop.wait(0.5):
            for coll in list(self._collections.values()):
                if self._stop.is_set():
                    return
                idle = time.monotonic() - self.last_request >= self.optimize_idle
                if coll.changes_since_optimize >= self.optimize_min_changes and idle and coll.acquire():
                    try:
                        self._optimize(coll)
                    finally:
                        coll.release()

    @staticmethod
    def _optimize(coll: Collection) -> None:
        coll.changes_since_optimize = 0  # writes during the run count towards the next one
        coll.optimizing = True
        t0 = time.perf_counter()
        try:
            changed = coll.shard.optimize()
            if changed:
                log.info("optimized %s in %.1fs", coll.name, time.perf_counter() - t0)
        except Exception:
            log.exception("optimize of %s failed", coll.name)
        finally:
            coll.optimizing = False

    def close(self) -> None:
        """Flush every collection, close the shards and release the directory lock."""
        self._stop.set()
        with self._registry_lock:
            colls = list(self._collections.values())
            self._collections.clear()
        for coll in colls:
            try:
                coll.flush()
                with coll.write_lock:
                    coll.closed = True
                    coll.shard.close()
            except Exception:
                log.exception("closing %s failed", coll.name)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
            log.info("closed %s (%d collections flushed)", self.root, len(colls))
