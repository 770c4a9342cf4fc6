"""Database engine and sessions: SQLite (WAL) by default, PostgreSQL via DATABASE_URL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

from bayes_app.settings import PROJECT_ROOT, get_settings

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def _sqlite_pragmas(dbapi_conn: Any, _record: object) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def make_engine(url: str) -> Engine:
    """Create an engine with the right settings for the backend the URL names."""
    if url.startswith("sqlite"):
        db_path = url.removeprefix("sqlite:///")
        if db_path and db_path != ":memory:":
            Path(db_path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, pool_pre_ping=True)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def get_engine(url: str | None = None) -> Engine:
    """The process-wide engine for `url` (default: the configured database)."""
    url = url or get_settings().effective_database_url
    with _lock:
        if url not in _engines:
            _engines[url] = make_engine(url)
        return _engines[url]


def dispose_engines() -> None:
    with _lock:
        for e in _engines.values():
            e.dispose()
        _engines.clear()


def sessions() -> Session:
    """A new session (not yet in a transaction): the one factory the services that open their
    own sessions are given (run lifecycle, ingestion, Zotero sync)."""
    return Session(get_engine(), expire_on_commit=False)


@contextmanager
def atomic(db: Session) -> Iterator[Session]:
    """Commit `db` when the block ends; roll it back and re-raise when the block raises, so a
    caller that handles the error keeps a usable session (the domain services that are given
    a session use this; the sessions they open themselves roll back by closing)."""
    try:
        yield db
        db.commit()
    except BaseException:
        db.rollback()
        raise


@contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    with Session(get_engine(url), expire_on_commit=False) as session, atomic(session):
        yield session


def ping(url: str | None = None) -> None:
    """Raise if the database cannot answer a trivial query."""
    with get_engine(url).connect() as conn:
        conn.execute(text("SELECT 1"))


def migrate(url: str | None = None) -> None:
    """Apply Alembic migrations up to head."""
    from alembic.config import Config

    from alembic import command

    cfg = Config(str(PROJECT_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    cfg.attributes["database_url"] = url or get_settings().effective_database_url
    command.upgrade(cfg, "head")
