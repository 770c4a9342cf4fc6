"""Scanned pages through real ingestion (pdfium, Tesseract, the embedder, the index server):
a text PDF with a scanned page is searchable and highlightable on that page; OCR has its own
progress phase; a photo-only PDF fails with a plain message; BAYES_OCR=0 leaves scans alone."""

from __future__ import annotations

import io
import os
import signal

import pypdfium2 as pdfium
import pytest
from sqlmodel import Session, select

from bayes_app.db import get_engine, migrate, session_scope
from bayes_app.models import DocStatus, Document, PageText
from tests.support import scans
from tests.support.procs import free_port, start_index

# a sentence of pasa.pdf page 3, which the mixed PDF carries only as an image
PHRASE = "assist researchers in collecting relevant research papers for complex scholarly queries"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from bayes_app import settings
    from bayes_app.accounts import service
    from bayes_app.search.embeddings import get_embedder
    from bayes_app.search.index import IndexClient
    from bayes_app.search.runtime import collection_name, cross_collection_name

    tmp = tmp_path_factory.mktemp("ocr")
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
            owner = service.register(s, "scanner@example.com", "tangerine-sky-42").id
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


def _ingest(env, data: bytes, name: str, ocr_on: bool = True):
    from bayes_app.library import ingest, storage, uploads

    acc = uploads.accept(env["owner"], io.BytesIO(data), name)
    try:
        res = ingest.ingest_document(
            lambda: Session(get_engine(env["db_url"])),
            acc.document_id,
            acc.generation,
            files_root=storage.default_store(),
            index=env["index"],
            embedder=env["embedder"],
            ocr_options=ingest.OcrOptions() if ocr_on else None,
        )
    except ingest.IngestError as err:
        return acc.document_id, err
    return acc.document_id, res


def test_a_scanned_page_in_a_text_pdf_is_searched_cited_and_highlighted(env):
    from bayes_app.library import highlight
    from bayes_app.search import hybrid

    doc_id, res = _ingest(env, scans.mixed_pdf("pasa.pdf", {3}, pages=4), "mixed.pdf")
    assert res.status == DocStatus.INDEXED
    with session_scope(env["db_url"]) as s:
        doc = s.get(Document, doc_id)
        assert (doc.ocr_pages, doc.page_count, doc.language) == (1, 4, "en")
        ocr_pages = {p.page for p in s.exec(select(PageText).where(PageText.document_id == doc_id)) if p.ocr_words}
        assert ocr_pages == {3}
        hits = hybrid.search(s, env["index"], env["embedder"], env["owner"], PHRASE, k=5, document_ids=[doc_id])
    assert hits and hits[0].page == 3, [(h.page, h.text[:60]) for h in hits]
    assert "collecting relevant research papers" in " ".join(hits[0].text.split())

    page, rects, note = highlight.locate(doc_id, doc.file_sha256, 1, PHRASE)
    assert page == 3 and note.startswith("The quoted passage is on page 3") and 1 <= len(rects) <= 4
    # the boxes lie where the words are on the original page (pdfium's boxes of its text layer)
    from bayes_app.library import pdf
    from bayes_app.library.quotes import locate_quote_loose

    original = str(scans.PAPERS / "pasa.pdf")
    text = pdfium.PdfDocument(original)[2].get_textpage().get_text_range()
    truth = pdf.text_rects(original, 3, *locate_quote_loose(text, PHRASE))
    got = [tuple(float(r[k].rstrip("%")) / 100 for k in ("left", "top", "width", "height")) for r in rects]
    got = [(x, y, x + w, y + h) for x, y, w, h in got]
    inter = sum(
        max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
        for a in got
        for b in truth
    )
    assert inter / sum((b[2] - b[0]) * (b[3] - b[1]) for b in truth) >= 0.8


def test_ocr_reports_its_own_phase_page_by_page(env):
    from bayes_app.library import ingest, pdf, scanned

    data = scans.image_pdf([("pasa.pdf", 3), ("pasa.pdf", 4)], dpi=200)
    calls = []
    with pdf.pdf_document(data) as document:
        pages = list(pdf.iter_layouts(document, require_text=False))
        words = {}
        scanned.recognise_pages(
            document,
            pages,
            words,
            ingest.OcrOptions(dpi=200),
            lambda status, done, total, **kw: calls.append((status, done, total)),
        )
    assert calls == [("recognising", 0, 2), ("recognising", 1, 2), ("recognising", 2, 2)]
    assert set(words) == {1, 2} and all(pdf.page_has_text(p.text) for p in pages)


def test_a_photo_only_pdf_fails_with_a_plain_message(env):
    doc_id, err = _ingest(env, scans.photo_pdf(), "photo.pdf")
    assert err.code == "no_text" and "not even by text recognition" in err.message
    with session_scope(env["db_url"]) as s:
        assert s.exec(select(PageText).where(PageText.document_id == doc_id)).first() is None


def test_with_ocr_off_a_scan_is_refused_as_before(env):
    doc_id, err = _ingest(env, scans.image_pdf([("pasa.pdf", 4)], dpi=150), "scan.pdf", ocr_on=False)
    assert err.code == "no_text" and "scanned" in err.message
