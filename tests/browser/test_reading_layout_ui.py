"""Reading on a phone and a desktop: the library as cards on a phone (a table on a desktop),
the viewer fitted to the width with zoom buttons (and, on a phone, taps and a pinch), chat
source chips on one line, and the admin page's rounded balances and its own Processes heading
(nothing scrolls sideways)."""

from __future__ import annotations

import re
import time
import uuid

import httpx
import pytest
from playwright.sync_api import expect

from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support import pdfs
from tests.support.browser import login
from tests.support.fake_openai import Script

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


@pytest.fixture(scope="module")
def reader(app_stack, app_db_url) -> tuple[str, str, str]:
    """A user with credits and PaSa indexed: (email, password, document id)."""
    from bayes_app.accounts import service

    email, password = f"l{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as db:
        user_id = service.register(db, email, password).id
    with session_scope(app_db_url) as db:
        ledger.grant(db, user_id, 5 * MICRO, f"g:{email}", "test")
    api = app_stack.url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    doc = httpx.post(
        f"{api}/documents",
        headers=h,
        timeout=60,
        files={"file": ("pasa.pdf", pdfs.PASA.read_bytes(), "application/pdf")},
    ).json()
    deadline = time.monotonic() + 240
    while httpx.get(f"{api}/documents/{doc['id']}", headers=h).json()["status"] != "indexed":
        assert time.monotonic() < deadline, "the paper did not finish indexing"
        time.sleep(0.5)
    return email, password, doc["id"]


def _page(browser, size: str):
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h}, is_mobile=size == "phone", has_touch=size == "phone")
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    return pg


def _sideways(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_library_cards_and_viewer_fit(app_stack, browser, reader, size):
    email, password, doc_id = reader
    page = _page(browser, size)
    vw = SIZES[size][0]
    try:
        login(page, app_stack.url, email, password)
        page.goto(f"{app_stack.url}/library")
        row = page.locator(".doc-row").first
        expect(row.locator(".doc-status")).to_have_attribute("data-status", "indexed")
        title, status = row.locator(".doc-title").bounding_box(), row.locator(".doc-status").bounding_box()
        authors = row.locator(".doc-title + div, .doc-title ~ div").first.bounding_box()
        if size == "phone":
            expect(page.locator("#documents thead")).to_be_hidden()
            card = row.bounding_box()
            assert card["width"] >= vw * 0.75, card  # one card across the screen, not a squeezed row
            # title, authors and status stacked in the card, all inside the screen
            assert title["y"] < status["y"]
            assert status["x"] + status["width"] <= vw
            assert authors["width"] >= vw * 0.5, authors  # names are not cut into 2-letter pieces
            # the card is shown whole (not clipped by the table's scroll area) and its lines do
            # not overlap: year and pages come below the authors
            table = page.locator("#documents").bounding_box()
            assert table["height"] >= card["height"], (table, card)
            assert table["y"] <= card["y"], (table, card)
            assert row.locator(".doc-year").bounding_box()["y"] >= authors["y"] + authors["height"] - 1
        else:
            expect(page.locator("#documents thead")).to_be_visible()
            assert abs(title["y"] - status["y"]) < 40  # one table row
        assert _sideways(page) <= 0

        page.goto(f"{app_stack.url}/documents/{doc_id}?page=3")
        view = page.locator("#pdf-view")
        expect(view).to_have_attribute("data-rendered", re.compile(r"^3@\d+$"))
        box = view.bounding_box()
        canvas = page.locator(".react-pdf__Page canvas").first.bounding_box()
        assert canvas["width"] <= box["width"]
        assert canvas["width"] >= min(860, box["width"]) - 4
        assert box["x"] + box["width"] <= vw
        assert _sideways(page) <= 0
        page.click("#zoom-in")
        page.click("#zoom-in")
        expect(page.locator("#viewer-zoom")).to_have_text("150 %")
        fitted = canvas["width"]
        expect(view).to_have_attribute("data-rendered", re.compile(rf"^3@{round(fitted * 1.5)}$"))
        assert page.locator(".react-pdf__Page canvas").first.bounding_box()["width"] > fitted * 1.4
        assert _sideways(page) <= 0  # the zoomed page pans inside its box, the page does not
        if size == "phone":
            assert view.evaluate("v => v.scrollWidth > v.clientWidth")
            # the buttons answer taps; a two-finger pinch zooms the page (drawn again at the new
            # width), not the whole screen
            page.tap("#zoom-out")
            page.tap("#zoom-out")
            expect(page.locator("#viewer-zoom")).to_have_text("100 %")
            expect(view).to_have_attribute("data-rendered", re.compile(rf"^3@{round(fitted)}$"))
            _pinch(page, view, 80, 160)
            expect(page.locator("#viewer-zoom")).to_have_text("200 %")
            expect(view).to_have_attribute("data-rendered", re.compile(rf"^3@{round(fitted * 2)}$"))
            assert page.evaluate("visualViewport.scale") == 1
            assert _sideways(page) <= 0
            _pinch(page, view, 200, 100)
            expect(page.locator("#viewer-zoom")).to_have_text("100 %")
            expect(view).to_have_attribute("data-rendered", re.compile(rf"^3@{round(fitted)}$"))
    finally:
        page.context.close()


def _pinch(page, target, start: float, end: float, steps: int = 8) -> None:
    """Two fingers on `target`'s centre, moved from `start` to `end` px apart (CDP touch events)."""
    b = target.bounding_box()
    cx, cy = b["x"] + b["width"] / 2, b["y"] + min(b["height"], 600) / 2
    cdp = page.context.new_cdp_session(page)

    def touch(kind: str, gap: float) -> None:
        points = (
            [] if kind == "touchEnd" else [{"x": cx - gap / 2, "y": cy, "id": 0}, {"x": cx + gap / 2, "y": cy, "id": 1}]
        )
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", start)
    for k in range(1, steps + 1):
        touch("touchMove", start + (end - start) * k / steps)
    touch("touchEnd", end)
    cdp.detach()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_chat_source_chips_stay_on_one_line(app_stack, browser, reader, fake_llm, size):
    email, password, _ = reader
    page = _page(browser, size)
    try:
        login(page, app_stack.url, email, password)
        page.goto(f"{app_stack.url}/chat")
        m = f"C{uuid.uuid4().hex[:8]}"
        fake_llm.script(
            Script.tool_call("search_knowledge_base", {"query": "PaSa paper search agent"}, match=m),
            Script(text="PaSa is a paper search agent [1].", match=m),
        )
        page.fill("#chat-input", f"What is PaSa? {m}")
        page.click("#chat-send")
        expect(page.locator("#chat-live")).to_have_count(0, timeout=60_000)
        source = page.locator(".chat-message-assistant .chat-source").first
        expect(source).to_be_visible()
        for chip in (source.locator(".source-page"), source.locator(".chat-open-source")):
            b = chip.bounding_box()
            line = chip.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 20")
            assert b["height"] <= line * 1.3, (chip.inner_text(), b)  # one line, not a letter a line
            assert b["x"] + b["width"] <= SIZES[size][0]
        assert _sideways(page) <= 0
    finally:
        page.context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_admin_balances_rounded_and_processes_heading(app_stack, app_db_url, browser, size):
    from bayes_app.accounts import service

    email = f"a{uuid.uuid4().hex[:10]}@example.com"
    with session_scope(app_db_url) as db:
        user_id = service.register(db, email, "pw-" + uuid.uuid4().hex[:12], signup_credits=0).id
    with session_scope(app_db_url) as db:
        ledger.grant(db, user_id, 34_967_038, f"g:{email}", "odd")
    page = _page(browser, size)
    try:
        login(page, app_stack.url, ADMIN_EMAIL, ADMIN_PASSWORD)
        page.goto(f"{app_stack.url}/admin")
        row = page.locator("#admin-balances tr", has_text=email)
        expect(row.locator(".balance-balance")).to_have_text("34.97")
        expect(row.locator(".balance-balance")).to_have_attribute("title", "34.967038")
        expect(row.locator(".balance-available")).to_have_text("34.97")
        # Processes has its own heading, above (not under) the credit dashboard's
        procs, credits = page.locator("#admin-processes-heading"), page.locator("#admin-credits-heading")
        expect(procs).to_have_text("Processes")
        y_panel = page.locator("#admin-processes-panel").bounding_box()["y"]
        assert procs.bounding_box()["y"] < y_panel < credits.bounding_box()["y"]
        assert _sideways(page) <= 0
    finally:
        page.context.close()
