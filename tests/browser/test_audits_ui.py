"""Check a draft in the browser: upload a Markdown draft, watch the progress, open a flagged
citation's evidence in the viewer at its page (highlighted), filter to problems, export the
DOCX; screenshots at desktop and phone sizes (docs/screenshots/check-*.png)."""

from __future__ import annotations

import io
import re
import textwrap
import time
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.support import audit_drafts
from tests.support.browser import login
from tests.support.tiny_pdf import text_pdf

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="module")
def author(app_stack, app_db_url, tmp_path_factory):
    """A user whose library holds a few SciFact abstracts, and a draft citing them."""
    from bayes_app.accounts import service
    from bayes_app.credits import ledger
    from bayes_app.db import session_scope
    from bayes_app.models import MICRO

    papers, items = audit_drafts.scifact_set(
        counts={"correct": 2, "wrong": 2, "contradicted": 0, "uncited": 1, "missing": 1}, library_size=4
    )
    email, password = f"d{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as s:
        user = service.register(s, email, password)
        ledger.grant(s, user, 5 * MICRO, f"grant:{user.id}", "test")  # test users start at 0 credits
    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60) as c:
        c.headers["Authorization"] = (
            "Bearer " + c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
        )
        ids = {}
        for p in papers:
            r = c.post(
                "/documents",
                files={
                    "file": (f"sf{p.id}.pdf", text_pdf(p.title[:90], textwrap.wrap(p.abstract, 95)), "application/pdf")
                },
            )
            ids[p.id] = r.json()["id"]
        deadline = time.time() + 400
        while time.time() < deadline and any(
            c.get(f"/documents/{i}").json()["status"] != "indexed" for i in ids.values()
        ):
            time.sleep(1)
        for p in papers:
            body = {"title": p.title, "authors": [a.split(",")[0] for a in p.authors], "year": p.year, "doi": p.doi}
            assert c.patch(f"/documents/{ids[p.id]}", json=body).status_code == 200
    draft = tmp_path_factory.mktemp("draft") / "draft.md"
    draft.write_text(audit_drafts.markdown(items), encoding="utf-8")
    return email, password, draft


def test_upload_watch_open_evidence_and_export(app_stack, browser, author):
    email, password, draft = author
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = ctx.new_page()
    login(page, app_stack.url, email, password)
    page.goto(app_stack.url + "/check")
    page.locator("#draft-upload input[type=file]").set_input_files(str(draft))
    expect(page.locator("#audit-filename")).to_have_text("draft.md", timeout=30_000)
    expect(page.locator("#audit-status")).to_have_text("succeeded", timeout=240_000)
    sentences = page.locator(".audit-sentence")
    expect(sentences).to_have_count(6)
    flagged = page.locator(".audit-sentence.flagged")
    assert flagged.count() >= 3  # two wrong papers, one missing (and maybe the uncited finding)
    page.screenshot(path=str(SHOTS / "check-desktop.png"), full_page=False)
    # only problems
    page.locator("#audit-only-problems").click()
    expect(page.locator(".audit-sentence")).to_have_count(flagged.count())
    # a flagged citation's evidence opens the viewer at its page, highlighted
    chip = page.locator(".audit-chip[data-verdict=unsupported]").first
    chip.click()
    link = page.locator(".audit-evidence-link").first
    expect(link).to_be_visible()
    href = link.get_attribute("href") or ""
    assert re.search(r"/documents/\w+\?page=1&quote=", href)
    link.click()
    expect(page).to_have_url(re.compile(r"/documents/\w+\?page=1&quote="))
    expect(page.locator("#pdf-view")).to_have_attribute("data-quote-found", "yes", timeout=60_000)
    # export the DOCX: a comment on each flagged sentence
    page.goto(app_stack.url + "/check")
    expect(page.locator("#audit-status")).to_have_text("succeeded", timeout=30_000)
    with page.expect_download() as dl:
        page.locator("#audit-export-docx").click()
    import docx

    data = Path(dl.value.path()).read_bytes()
    comments = list(docx.Document(io.BytesIO(data)).comments)
    assert len(comments) >= page.locator(".audit-sentence.flagged").count()
    # phone size: no sideways scroll
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    p2 = phone.new_page()
    login(p2, app_stack.url, email, password)
    p2.goto(app_stack.url + "/check")
    expect(p2.locator("#audit-status")).to_have_text("succeeded", timeout=30_000)
    p2.screenshot(path=str(SHOTS / "check-phone.png"), full_page=False)
    assert p2.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    phone.close()
    ctx.close()
