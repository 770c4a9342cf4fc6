"""A real library for map-run tests: PDFs stored and ingested (real embeddings, real index
process) into a given database for one user; plus the provenance check."""

from __future__ import annotations

import io
from pathlib import Path

from sqlmodel import Session, select

from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.library.ingest import ingest_document
from bayes_app.library.quotes import normalize, quote_in_text
from bayes_app.models import Chunk, Citation, Origin, PageText


def ingest(sessions, owner_id: str, files_root: Path, paths: list[Path]) -> list[str]:
    """Store and ingest `paths` for `owner_id` in-process; returns the document ids."""
    from bayes_app.search import runtime

    ids = []
    for p in paths:
        stored = storage.store_stream(files_root, io.BytesIO(p.read_bytes()), 200 << 20)
        with sessions() as db:
            doc, _ = lib.add_upload(db, owner_id, p.name, stored, None)
            db.commit()
            doc_id, gen = doc.id, doc.ingest_generation
        ingest_document(sessions, doc_id, gen, files_root=files_root, index=runtime.index(),
                        embedder=runtime.embedder())
        ids.append(doc_id)
    return ids


def assert_provenance(db: Session, map_id: str) -> int:
    """Every agent citation's quote is in its chunk, on its page, at its offsets. Returns how many."""
    cits = db.exec(select(Citation).where(Citation.map_id == map_id, Citation.origin == Origin.AGENT)).all()
    for c in cits:
        chunk = db.get(Chunk, c.chunk_id)
        assert chunk is not None and chunk.page == c.page and chunk.document_id == c.document_id
        assert quote_in_text(chunk.text, c.quote), (c.quote, chunk.text)
        page = db.get(PageText, (c.document_id, c.page))
        assert normalize(page.text[c.char_start:c.char_end]).text == normalize(c.quote).text
    return len(cits)
