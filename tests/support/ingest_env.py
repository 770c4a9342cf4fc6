"""A library to ingest into, for integration tests: a migrated SQLite database, a real index
server process, the small embedder and a registered owner (shared by the OCR and
cross-language tests)."""

from __future__ import annotations

import io
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlmodel import Session

from bayes_app.db import get_engine, migrate, session_scope
from tests.support.procs import free_port, start_index


@contextmanager
def ingest_env(tmp: Path, email: str) -> Iterator[dict[str, Any]]:
    """{"db_url", "owner", "index", "embedder"}; BAYES_DATA_DIR and DATABASE_URL point at `tmp`
    meanwhile (restored after)."""
    from bayes_app import settings
    from bayes_app.accounts import service
    from bayes_app.search.embeddings import get_embedder
    from bayes_app.search.index import IndexClient
    from bayes_app.search.runtime import collection_name, cross_collection_name

    db_url = f"sqlite:///{tmp / 'lib.db'}"
    migrate(db_url)
    port = free_port()
    proc = start_index(tmp / "index", port, tmp / "index.log")
    old = {k: os.environ.get(k) for k in ("BAYES_DATA_DIR", "DATABASE_URL")}
    os.environ.update(BAYES_DATA_DIR=str(tmp), DATABASE_URL=db_url)
    settings.get_settings.cache_clear()
    embedder = get_embedder("all-MiniLM-L6-v2")
    index = IndexClient(
        f"http://127.0.0.1:{port}",
        collection_name(embedder.name),
        cross_collection=cross_collection_name(embedder.name),
    )
    index.ensure_collection(dim=embedder.dim)
    try:
        with session_scope(db_url) as s:
            owner = service.register(s, email, "tangerine-sky-42").id
        yield {"db_url": db_url, "owner": owner, "index": index, "embedder": embedder}
    finally:
        index.close()
        os.killpg(proc.pid, signal.SIGKILL)
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        settings.get_settings.cache_clear()


def ingest(env: dict[str, Any], data: bytes, name: str, ocr_options=None, ocr_language: str = ""):
    """Upload and ingest one PDF into `env`'s library: (document id, IngestResult or IngestError)."""
    from bayes_app.library import ingest as ingestion
    from bayes_app.library import storage, uploads

    acc = uploads.accept(env["owner"], io.BytesIO(data), name, ocr_language=ocr_language)
    try:
        res = ingestion.ingest_document(
            lambda: Session(get_engine(env["db_url"])),
            acc.document_id,
            acc.generation,
            files_root=storage.default_store(),
            index=env["index"],
            embedder=env["embedder"],
            ocr_options=ocr_options,
        )
    except ingestion.IngestError as err:
        return acc.document_id, err
    return acc.document_id, res
