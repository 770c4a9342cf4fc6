"""An in-process map lab: a real redis-server and index process in a temp dir, a migrated SQLite
database, a user with credits, the given PDFs ingested (real embeddings), and map runs executed
in this process with any provider factory. Used by `benchmarks/map_quality.py` and the map
quality tests."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from sqlmodel import Session

from tests.support.procs import RedisServer, free_port, restore_env, start_index

MODEL = "gpt-4o-mini"


class MapLab:
    def __init__(self, papers: list[Path], workdir: Path | None = None, credits: int = 1_000) -> None:
        self.papers, self.credits = papers, credits
        self._tmp = tempfile.TemporaryDirectory(prefix="bayes-maplab-") if workdir is None else None
        self.dir = Path(self._tmp.name) if self._tmp else workdir
        self.redis: RedisServer | None = None
        self.index_proc: subprocess.Popen | None = None
        self.listener: Any = None
        self.doc_ids: list[str] = []

    # ---- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> MapLab:
        from bayes_app import db, settings
        from bayes_app.runs import control
        from bayes_app.search import runtime

        self.redis = RedisServer(self.dir / "redis").start()
        port = free_port()
        self.index_proc = start_index(self.dir / "index", port, self.dir / "index.log")
        self._saved = {k: os.environ.get(k) for k in ("QDRANT_URL", "BAYES_DATA_DIR", "DATABASE_URL", "REDIS_URL")}
        self.db_url = f"sqlite:///{self.dir / 'lab.db'}"
        os.environ.update(
            QDRANT_URL=f"http://127.0.0.1:{port}",
            BAYES_DATA_DIR=str(self.dir),
            DATABASE_URL=self.db_url,
            REDIS_URL=self.redis.url_db(0),
        )
        settings.get_settings.cache_clear()
        runtime.reset()
        db.migrate(self.db_url)
        self.r = redis.Redis.from_url(self.redis.url_db(0), decode_responses=True)
        self.listener = control.AbortListener(lambda: redis.Redis.from_url(self.redis.url_db(0), decode_responses=True))
        self.listener.start()
        self.listener.subscribed.wait(5)
        self._make_user()
        if self.papers:
            from tests.support.maplib import ingest

            self.doc_ids = ingest(self.sessions, self.user_id, self.dir / "files", self.papers)
        return self

    def __exit__(self, *exc: object) -> None:
        from bayes_app import db, settings
        from bayes_app.search import runtime

        if self.listener is not None:
            self.listener.stop()
        runtime.reset()
        db.get_engine(self.db_url).dispose()
        restore_env(self._saved)
        settings.get_settings.cache_clear()
        if self.index_proc is not None:
            self.index_proc.terminate()
            try:
                self.index_proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.index_proc.pid, signal.SIGKILL)
        if self.redis is not None:
            self.redis.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def sessions(self) -> Session:
        from bayes_app.db import get_engine

        return Session(get_engine(self.db_url), expire_on_commit=False)

    def _make_user(self) -> None:
        from bayes_app.accounts import service as accounts
        from bayes_app.credits import ledger, pricing
        from bayes_app.models import MICRO

        with self.sessions() as db:
            pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
            pricing.set_price(db, "offline", 150_000, 75_000, 600_000)
            db.commit()
            user = accounts.register(db, f"lab{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
            db.commit()
            ledger.grant(db, user, self.credits * MICRO, f"grant:{user.id}", "lab")
            db.commit()
            self.user_id = user.id

    # ---- runs --------------------------------------------------------------------------------
    def create_map(self, title: str, question: str | None = None) -> str:
        from bayes_app.maps import service

        with self.sessions() as db:
            return service.create_map(db, self.user_id, title, question)["id"]

    def run(
        self,
        kind: str,
        map_id: str,
        provider_factory: Callable[[], Any],
        node_id: str | None = None,
        prompt: str | None = None,
        model: str = "offline",
    ) -> tuple[str, list[Any]]:
        """Execute one map run to the end in this process; (run id, its events)."""
        from bayes_app import registry
        from bayes_app.maps.runs import start_map_run
        from bayes_app.runs import events, executor
        from bayes_app.runs import service as run_service

        registry.register()  # the map run kinds
        with self.sessions() as db:
            op = start_map_run(db, self.user_id, kind, map_id, node_id, prompt, model=model, output_tokens=2000)
        res = asyncio.run(
            executor.execute(
                op.id, r=self.r, sessions=self.sessions, listener=self.listener, provider_factory=provider_factory
            )
        )
        assert res.started, res
        assert run_service.settle(self.sessions, self.r, op.id) == "finalized"
        return op.id, events.read_range(self.r, op.id, None, count=100_000)
