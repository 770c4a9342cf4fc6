"""Scanned papers in the browser: a PDF made here of images of PaSa's pages (no text layer) is
read by OCR in the worker; the viewer opened at a quote from a scanned page highlights the
words on the page image (≥ 80 % of the original text layer's character boxes, projected onto
the rendered page, are covered); the library shows "OCR: n of m pages" with the language, and
the upload form's OCR language choice is the one used."""

from __future__ import annotations

import re
import time
import urllib.parse
import uuid

import httpx
import pytest
from playwright.sync_api import expect
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.models import PageText
from tests.support import citations as cit
from tests.support import pdfs, scans
from tests.support.browser import login
from tests.support.overlap import MEASURE_JS, check

PAGES = (3, 4)  # of pasa.pdf, scanned at 300 dpi into pages 1 and 2


def _letters(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", s.lower())


@pytest.fixture(scope="module")
def scanned(app_stack, app_db_url) -> dict:
    """A user whose library holds the scanned PDF, indexed with OCR: email, password, doc id,
    and the citations (sentences of the original pages) OCR read letter for letter."""
    from bayes_app.accounts import service

    email, password = f"o{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as s:
        service.register(s, email, password)
    data = scans.image_pdf([("pasa.pdf", n) for n in PAGES], dpi=300)
    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60) as c:
        token = c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
        h = {"Authorization": f"Bearer {token}"}
        r = c.post("/documents", files={"file": ("scan.pdf", data, "application/pdf")}, headers=h)
        assert r.status_code == 202, r.text
        doc_id = r.json()["id"]
        deadline = time.time() + 600
        while (doc := c.get(f"/documents/{doc_id}", headers=h).json())["status"] != "indexed":
            assert doc["status"] != "failed", doc
            assert time.time() < deadline, doc
            time.sleep(1)
    assert (doc["ocr_pages"], doc["page_count"], doc["ocr_language"]) == (2, 2, "eng")
    with session_scope(app_db_url) as s:
        ocr_text = {p.page: p.text for p in s.exec(select(PageText).where(PageText.document_id == doc_id))}
    # sentences of the original pages (their text-layer boxes are the truth) that the model
    # could quote from the OCR'd passages: OCR read them letter for letter
    chosen = []
    for k, number in enumerate(PAGES, 1):
        for c in cit.sentences(pdfs.PASA, [number], 6):
            if _letters(c.quote) in _letters(ocr_text[k]):
                chosen.append((k, c))
    assert len(chosen) >= 4, chosen
    assert {k for k, _ in chosen} == {1, 2}, chosen
    return {"email": email, "password": password, "doc_id": doc_id, "citations": chosen, "headers": h}


@pytest.mark.parametrize("viewport", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_quote_on_a_scanned_page_is_highlighted_over_its_words(app_stack, browser, scanned, viewport):
    phone = viewport[0] < 500
    context = browser.new_context(
        viewport={"width": viewport[0], "height": viewport[1]}, is_mobile=phone, has_touch=phone
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        login(page, app_stack.url, scanned["email"], scanned["password"])
        for k, c in scanned["citations"]:
            query = urllib.parse.urlencode({"page": k, "quote": c.quote})
            page.goto(f"{app_stack.url}/documents/{scanned['doc_id']}?{query}")
            view = page.locator("#pdf-view")
            expect(view).to_have_attribute("data-quote-found", "yes")
            expect(view).to_have_attribute("data-rendered", re.compile(rf"^{k}@\d+$"), timeout=60_000)
            ((number, start, end),) = c.parts
            chars = cit.char_boxes(pdfs.PASA, number, start, end)
            check(page.evaluate(MEASURE_JS, k), chars, f"scan p.{k} {c.quote[:50]!r}", min_cover=0.8)
    finally:
        context.close()


def test_the_library_shows_ocr_pages_and_the_chosen_language(app_stack, browser, scanned):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        login(page, app_stack.url, scanned["email"], scanned["password"])
        page.goto(f"{app_stack.url}/library")
        first = page.locator(f'.doc-row:has(a[href="/documents/{scanned["doc_id"]}"])')
        expect(first.locator(".doc-ocr")).to_have_text("OCR: 2 of 2 pages (English)")
        # the next upload's scanned pages are read as German, as chosen in the form
        page.click("#ocr-language")
        page.get_by_role("option", name="German").click()
        expect(page.locator("#ocr-language")).to_have_text("German")
        page.locator("#pdf-upload input[type=file]").set_input_files(
            files=[
                {
                    "name": "german-choice.pdf",
                    "mimeType": "application/pdf",
                    "buffer": scans.image_pdf([("pasa.pdf", 5)], dpi=150),
                }
            ]
        )
        expect(page.locator(".upload-result")).to_contain_text("queued for indexing")
        docs = httpx.get(f"{app_stack.url}/api/v1/documents", headers=scanned["headers"]).json()["documents"]
        [new] = [d for d in docs if d["filename"] == "german-choice.pdf"]
        assert new["ocr_language_choice"] == "deu"
        row = page.locator(f'.doc-row:has(a[href="/documents/{new["id"]}"])')
        expect(row.locator(".doc-ocr")).to_have_text("OCR: 1 of 1 pages (German)", timeout=300_000)
    finally:
        context.close()
