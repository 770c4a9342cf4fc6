"""Structure in the browser: a quote from figure text is highlighted on the PDF page, a quote
that is not in the document opens the page with a plain note, the weak-results banner, role
labels, and the expandable reference list in the Library."""

from __future__ import annotations

import re
import time
from urllib.parse import quote as urlquote

import httpx
from playwright.sync_api import expect

from tests.integration.test_library import upload, wait_done
from tests.support import pdfs
from tests.support.browser import login

FIGURE_QUOTE = "Crawler Paper Queue User Query Selector"


def _setup(app_stack, make_user, page) -> str:
    email, password = make_user()
    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60) as c:
        tok = c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
        c.headers["Authorization"] = f"Bearer {tok}"
        doc = upload(c, pdfs.PASA.read_bytes(), "pasa.pdf").json()
        assert wait_done(c, doc["id"])["status"] == "indexed"
    login(page, app_stack.url, email, password)
    return doc["id"]


def _boxes_over(page, page_number: int) -> list[dict]:
    """Visible highlight boxes (pdfium's boxes drawn over the page) with their page-relative
    position as fractions of the rendered page."""
    return page.evaluate(
        """(n) => {
      const pageEl = document.querySelector(`.react-pdf__Page[data-page-number="${n}"]`);
      const r = pageEl.getBoundingClientRect();
      return Array.from(document.querySelectorAll('.pdf-box'))
        .filter((el) => el.getClientRects().length && getComputedStyle(el).display !== 'none')
        .map((el) => { const b = el.getBoundingClientRect();
          return {x: (b.left - r.left) / r.width, y: (b.top - r.top) / r.height,
                  w: b.width / r.width, h: b.height / r.height}; });
    }""",
        page_number,
    )


def test_figure_text_quote_is_highlighted_and_missing_quote_says_so(app_stack, page, make_user):
    doc_id = _setup(app_stack, make_user, page)
    url = app_stack.url

    page.goto(f"{url}/documents/{doc_id}?page=2&quote={urlquote(FIGURE_QUOTE)}")
    expect(page.locator("#viewer-page")).to_have_text("2")
    expect(page.locator("#pdf-view")).to_have_attribute("data-rendered", re.compile(r"^2@"), timeout=60_000)
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('.pdf-box'))
        .some((el) => el.getClientRects().length && getComputedStyle(el).display !== 'none')""",
        timeout=30_000,
    )
    boxes = _boxes_over(page, 2)
    assert boxes
    # Figure 1 fills the top of page 2 (y 0.08-0.12 of the page in pdfium's boxes)
    assert all(0.05 < b["y"] < 0.2 for b in boxes), boxes
    # the whole label row ("Crawler" at the left of the figure … "Selector" at the right)
    assert max(b["x"] + b["w"] for b in boxes) - min(b["x"] for b in boxes) > 0.45, boxes
    expect(page.locator("#quote-note")).to_have_count(0)
    expect(page.get_by_text("Highlighted: “")).to_be_visible()

    # a caption quote is highlighted too
    caption = "Figure 1: Architecture of PaSa. The system consists of two LLM agents"
    page.goto(f"{url}/documents/{doc_id}?page=2&quote={urlquote(caption)}")
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('.pdf-box'))
        .some((el) => el.getClientRects().length && getComputedStyle(el).display !== 'none')""",
        timeout=60_000,
    )
    expect(page.locator("#pdf-view")).to_have_attribute("data-rendered", re.compile(r"^2@"), timeout=60_000)
    # judged once drawn: the page box grows while the page renders (positions are its fractions)
    deadline = time.monotonic() + 30
    boxes = _boxes_over(page, 2)
    while not (boxes and all(0.2 < b["y"] < 0.32 for b in boxes)) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        boxes = _boxes_over(page, 2)
    assert boxes, boxes
    assert all(0.2 < b["y"] < 0.32 for b in boxes), boxes

    # a quote on another page than the link says: the right page opens, with a note
    page.goto(f"{url}/documents/{doc_id}?page=1&quote={urlquote(pdfs.PASA_P7_PHRASE)}")
    expect(page.locator("#viewer-page")).to_have_text("7")
    expect(page.locator("#quote-note")).to_contain_text("on page 7")

    # a quote that is nowhere in the document: said plainly, and the page still opens
    page.goto(f"{url}/documents/{doc_id}?page=3&quote={urlquote('<b>quantum teleportation of cats</b>')}")
    expect(page.locator("#quote-note")).to_contain_text("could not be found")
    expect(page.locator("#viewer-page")).to_have_text("3")
    expect(page.locator('.react-pdf__Page[data-page-number="3"] canvas')).to_be_visible(timeout=60_000)
    assert page.locator("b", has_text="quantum teleportation").count() == 0  # text, never markup


def test_weak_banner_role_labels_and_reference_list(app_stack, page, make_user):
    _setup(app_stack, make_user, page)
    url = app_stack.url
    page.goto(f"{url}/search?q={urlquote('qwxzzv blorf')}")
    expect(page.locator("#weak-results")).to_have_text("No strong matches; closest passages:")
    expect(page.locator(".search-result").first).to_be_visible()

    page.goto(f"{url}/search?q={urlquote(FIGURE_QUOTE)}")
    expect(page.locator(".search-result").first).to_be_visible()
    expect(page.locator("#weak-results")).to_have_count(0)
    expect(page.locator(".result-role", has_text="Figure text").first).to_be_visible()

    page.click("#nav-library")
    button = page.locator(".doc-references")
    expect(button).to_have_text(re.compile(r"References \(37\)"))
    button.click()
    entries = page.locator(".reference-entry")
    expect(entries).to_have_count(37)
    expect(entries.filter(has_text="Agile: A novel framework of llm agents")).to_have_count(1)
