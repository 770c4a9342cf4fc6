"""The library in a real browser: upload a real paper, watch it index, search a phrase
from page 7, open the hit, and see page 7 with the phrase highlighted."""

import re
import time

from playwright.sync_api import expect

from tests.support import pdfs
from tests.support.browser import login

WORDS_UNDER_BOXES_JS = """() => {
  const boxes = Array.from(document.querySelectorAll('#pdf-view .pdf-box')).map((b) => b.getBoundingClientRect());
  return Array.from(document.querySelectorAll('.textLayer span')).filter((s) => {
    const r = s.getBoundingClientRect(); const y = (r.top + r.bottom) / 2;
    return boxes.some((b) => y > b.top && y < b.bottom && r.right > b.left && r.left < b.right);
  }).map((s) => s.textContent).join(' ');
}"""


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def test_upload_progress_search_and_open_highlighted_page(app_stack, page, make_user, browser):
    url = app_stack.url
    email, password = make_user()
    login(page, url, email, password)
    page.click("#nav-library")
    expect(page.locator("#no-documents")).to_be_visible()
    page.locator("#pdf-upload input[type=file]").set_input_files(str(pdfs.PASA))
    expect(page.locator(".upload-result")).to_contain_text("queued for indexing")
    status = page.locator(".doc-row .doc-status")
    expect(status).to_have_attribute("data-status", "indexed", timeout=180_000)
    expect(page.locator(".upload-result")).to_contain_text("indexed")  # the list follows the file
    expect(page.locator(".upload-result")).not_to_contain_text("queued")
    expect(page.locator(".doc-row .doc-title")).to_have_text(
        "PaSa: An LLM Agent for Comprehensive Academic Paper Search"
    )

    page.click("#nav-search")
    page.fill("#search-q", pdfs.PASA_P7_PHRASE)
    page.click("#search-go")
    first = page.locator(".search-result").first
    expect(first.locator(".result-page")).to_have_text("p. 7")
    expect(first.locator("mark.term").first).to_be_visible()
    first.locator(".open-at-page").click()

    expect(page).to_have_url(re.compile(r"/documents/[0-9a-f]{32}\?page=7"))
    expect(page.locator("#viewer-page")).to_have_text("7")
    expect(page.locator("#pdf-view")).to_have_attribute("data-quote-found", "yes")
    expect(page.locator("#pdf-view")).to_have_attribute("data-rendered", re.compile(r"^7@"), timeout=60_000)
    boxes = page.locator("#pdf-view .pdf-box")
    expect(boxes.first).to_be_in_viewport()
    # the boxes sit on the phrase: the text layer's words under them spell it. The text layer is
    # drawn after the canvas (`data-rendered` marks the canvas), so it is read until it is there.
    deadline, under = time.monotonic() + 15, page.evaluate(WORDS_UNDER_BOXES_JS)
    while _norm(pdfs.PASA_P7_PHRASE) not in _norm(under) and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        under = page.evaluate(WORDS_UNDER_BOXES_JS)
    assert _norm(pdfs.PASA_P7_PHRASE) in _norm(under), under
    doc_url = page.url

    # Next / Previous keep ?page= in the address; zoom scales the page; Back returns to search
    page.click("#next-page")
    expect(page.locator("#viewer-page")).to_have_text("8")
    expect(page).to_have_url(re.compile(r"\?page=8(&|$)"))
    page.click("#prev-page")
    expect(page).to_have_url(re.compile(r"\?page=7&quote="))
    frame = page.locator(".pdf-frame")
    width = frame.bounding_box()["width"]
    page.click("#zoom-in")
    expect(page.locator("#viewer-zoom")).to_have_text("125 %")
    page.wait_for_timeout(300)
    assert frame.bounding_box()["width"] > width * 1.2
    page.click("#viewer-back")
    expect(page).to_have_url(re.compile(r"/search"))

    # another user: sees no documents, and the viewer refuses A's document
    other = browser.new_context(viewport={"width": 1280, "height": 860})
    p2 = other.new_page()
    e2, pw2 = make_user()
    login(p2, url, e2, pw2)
    p2.goto(f"{url}/library")
    expect(p2.locator("#no-documents")).to_be_visible()
    p2.goto(doc_url)
    expect(p2.locator("#viewer-missing")).to_be_visible()
    doc_id = re.search(r"/documents/([0-9a-f]{32})", doc_url).group(1)
    r = p2.request.get(f"{url}/api/v1/documents/{doc_id}/file")
    assert r.status == 404  # B's session cookie does not open A's file
    r = page.request.get(f"{url}/api/v1/documents/{doc_id}/file")
    assert r.status == 200
    assert r.headers["content-type"] == "application/pdf"
    other.close()


def test_a_file_that_is_not_a_pdf_is_refused_with_a_reason(app_stack, page, make_user, tmp_path):
    """Picked or dropped, a .txt is not silently ignored; the drop zone lights up while a file
    is dragged over it."""
    url = app_stack.url
    email, password = make_user()
    login(page, url, email, password)
    page.click("#nav-library")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a paper")
    page.locator("#pdf-upload input[type=file]").set_input_files(str(notes))
    row = page.locator(".upload-result")
    expect(row).to_contain_text("notes.txt")
    expect(row).to_contain_text("only PDF files")

    zone = page.locator("#pdf-upload")
    before = zone.evaluate("el => getComputedStyle(el).backgroundColor")
    dt = page.evaluate_handle(
        "() => { const dt = new DataTransfer();"
        " dt.items.add(new File(['plain text'], 'dropped.txt', {type: 'text/plain'})); return dt; }"
    )
    zone.dispatch_event("dragenter", {"dataTransfer": dt})
    expect(zone).not_to_have_css("background-color", before)
    zone.dispatch_event("drop", {"dataTransfer": dt})
    expect(row).to_contain_text("dropped.txt")
    expect(row).to_contain_text("only PDF files")
    expect(zone).to_have_css("background-color", before)
