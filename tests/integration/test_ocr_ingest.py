"""Scanned pages through real ingestion (pdfium, Tesseract, the embedder, the index server):
a text PDF with a scanned page is searchable and highlightable on that page; OCR has its own
progress phase; a photo-only PDF fails with a plain message; BAYES_OCR=0 leaves scans alone."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.library import structure
from bayes_app.models import Chunk, DocStatus, Document, PageText
from tests.support import scans
from tests.support.ingest_env import ingest as ingest_into
from tests.support.ingest_env import ingest_env

# a sentence of pasa.pdf page 3, which the mixed PDF carries only as an image
PHRASE = "assist researchers in collecting relevant research papers for complex scholarly queries"
ABSTRACT = "We introduce PaSa, an advanced Paper Search agent powered by large language models"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with ingest_env(tmp_path_factory.mktemp("ocr"), "scanner@example.com") as e:
        yield e


def _ingest(env, data: bytes, name: str, ocr_on: bool = True, ocr_language: str = ""):
    from bayes_app.library import ingest

    return ingest_into(env, data, name, ingest.OcrOptions() if ocr_on else None, ocr_language)


def test_a_scanned_page_in_a_text_pdf_is_searched_cited_and_highlighted(env):
    from bayes_app.library import highlight
    from bayes_app.search import hybrid

    doc_id, res = _ingest(env, scans.mixed_pdf("pasa.pdf", {3}, pages=4), "mixed.pdf")
    assert res.status == DocStatus.INDEXED
    with session_scope(env["db_url"]) as s:
        doc = s.get(Document, doc_id)
        assert (doc.ocr_pages, doc.page_count, doc.language) == (1, 4, "en")
        assert (doc.ocr_lang, doc.ocr_lang_choice) == ("eng", "")  # followed the detected language
        ocr_pages = {p.page for p in s.exec(select(PageText).where(PageText.document_id == doc_id)) if p.ocr_words}
        assert ocr_pages == {3}
        hits = hybrid.search(s, env["index"], env["embedder"], env["owner"], PHRASE, k=5, document_ids=[doc_id])
        # issue 39: each page's own sentence is found on its page by default search: the text
        # page's abstract, and the scanned page's body (structure analysis as on a text layer)
        abstract = hybrid.search(s, env["index"], env["embedder"], env["owner"], ABSTRACT, k=3, document_ids=[doc_id])
        roles = {c.page: set() for c in s.exec(select(Chunk).where(Chunk.document_id == doc_id))}
        for c in s.exec(select(Chunk).where(Chunk.document_id == doc_id)):
            roles[c.page].add(c.role)
    assert hits, [(h.page, h.text[:60]) for h in hits]
    assert hits[0].page == 3, [(h.page, h.text[:60]) for h in hits]
    assert "collecting relevant research papers" in " ".join(hits[0].text.split())
    assert hits[0].role in structure.QUOTABLE  # not "figure" as a whole
    assert structure.Role.BODY in roles[3]
    assert abstract, [(h.page, h.role) for h in abstract]
    assert abstract[0].page == 1, [(h.page, h.role) for h in abstract]
    assert abstract[0].role in structure.QUOTABLE, [(h.page, h.role) for h in abstract]

    page, rects, note = highlight.locate(doc_id, doc.file_sha256, 1, PHRASE)
    assert page == 3
    assert note.startswith("The quoted passage is on page 3")
    assert 1 <= len(rects) <= 4
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


def test_a_scanned_paper_takes_its_printed_title_and_year(env):
    """Issue 39: a scan has no text layer and no info Title: the title and year are those OCR
    read on its first page (the arXiv stamp), never its file name or the file's date."""
    doc_id, res = _ingest(env, scans.image_pdf([("pasa.pdf", 1)]), "scanned-curriculum-agents.pdf")
    assert res.status == DocStatus.INDEXED
    with session_scope(env["db_url"]) as s:
        doc = s.get(Document, doc_id)
        assert doc.title == "PaSa: An LLM Agent for Comprehensive Academic Paper Search"
        assert doc.year == 2025
        assert {c.role for c in s.exec(select(Chunk).where(Chunk.document_id == doc_id))} & structure.QUOTABLE


@pytest.mark.usefixtures("env")
def test_ocr_reports_its_own_phase_page_by_page():
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
    assert set(words) == {1, 2}
    assert all(pdf.page_has_text(p.text) for p in pages)


def test_a_photo_only_pdf_fails_with_a_plain_message(env):
    doc_id, err = _ingest(env, scans.photo_pdf(), "photo.pdf")
    assert err.code == "no_text"
    assert "not even by text recognition" in err.message
    with session_scope(env["db_url"]) as s:
        assert s.exec(select(PageText).where(PageText.document_id == doc_id)).first() is None


def test_with_ocr_off_a_scan_is_refused_as_before(env):
    doc_id, err = _ingest(env, scans.image_pdf([("pasa.pdf", 4)], dpi=150), "scan.pdf", ocr_on=False)
    assert err.code == "no_text"
    assert "scanned" in err.message


def test_the_ocr_language_chosen_at_upload_is_used_and_shown(env):
    from bayes_app.library import documents, uploads
    from bayes_app.usecases import library as app_lib

    doc_id, res = _ingest(env, scans.image_pdf([("pasa.pdf", 4)], dpi=200), "chosen.pdf", ocr_language="fra")
    assert res.status == DocStatus.INDEXED
    with session_scope(env["db_url"]) as s:
        doc = s.get(Document, doc_id)
        assert (doc.ocr_pages, doc.ocr_lang, doc.ocr_lang_choice) == (1, "fra+eng", "fra")
        view = documents.list_documents(s, env["owner"])
    shown = app_lib.document_out(next(v for v in view if v.id == doc_id))  # as the pages and the API show it
    assert (shown.ocr_pages, shown.ocr_language, shown.ocr_language_choice) == (1, "fra+eng", "fra")
    # a language Tesseract has no data for is refused before anything is stored
    with pytest.raises(uploads.UploadRejected) as err:
        _ingest(env, scans.image_pdf([("pasa.pdf", 5)], dpi=150), "klingon.pdf", ocr_language="tlh")
    assert err.value.status == 422
    assert "eng" in err.value.message
    assert "auto" in err.value.message
