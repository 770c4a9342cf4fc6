"""A new user's first five minutes, at 1440×900 and 390×844, on an app with the shipped
defaults (offline provider, the default starter grant, no admin action): sign up → add
papers → first question → first map, the first-run guide ticking off each step; no page
scrolls sideways on a phone; a credits refusal says what to do."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from bayes_app.accounts import service as accounts
from bayes_app.db import session_scope
from tests.support import pdfs
from tests.support.procs import AppStack, stack_env, stack_port, wait_for

ADMIN = ("root@example.com", "Xk4-" + uuid.uuid4().hex[:12])
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}

# Its own app with the defaults (see tests/browser/test_maps_ui.py for why own stack and browser).
pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def browser():
    from tests.support.browser import chromium

    yield from chromium()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, redis_server):
    data_dir = Path(tmp_path_factory.mktemp("firstrun"))
    port = stack_port()
    # nothing about credits or models is set: stack_env drops every BAYES_*/OPENAI_* variable
    env = stack_env(
        data_dir,
        port,
        REDIS_URL=redis_server.url_db(8),
        BAYES_ADMIN_EMAIL=ADMIN[0],
        BAYES_ADMIN_PASSWORD=ADMIN[1],
        BAYES_DEMO="0",
    )
    s = AppStack(data_dir=data_dir, env=env, port=port).start()
    yield s
    s.stop()


def _page(browser, size: str) -> Page:
    w, h = SIZES[size]
    pg = browser.new_context(viewport={"width": w, "height": h}).new_page()
    pg.set_default_timeout(30_000)
    return pg


def _overflow(page: Page) -> int:
    """CSS pixels the page scrolls sideways (scrollWidth beyond the viewport)."""
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def _nav(page: Page, size: str, section: str) -> None:
    """Use the navigation as a user would: the sidebar, or on a phone the menu."""
    if size == "phone":
        expect(page.locator("#sidebar")).to_be_hidden()
        page.click("#nav-menu")
        page.click(f"#mnav-{section}")
    else:
        expect(page.locator("#nav-menu")).to_be_hidden()
        page.click(f"#nav-{section}")


def _wait_indexed(url: str, email: str, password: str) -> None:
    api = url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}

    # every paper, not the first one: the map question is about PaSa, and the demo's smallest
    # paper (indexed first) has no passage on it, so a research started early fails no_passages
    def all_indexed() -> bool:
        docs = httpx.get(f"{api}/documents", headers=h).json()["documents"]
        return bool(docs) and all(d["status"] == "indexed" for d in docs)

    wait_for(all_indexed, 300, 1, what="every paper to be indexed")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_sign_up_first_question_first_map(stack, browser, size):
    url = stack.url
    page = _page(browser, size)
    email, password = f"new-{size}-{uuid.uuid4().hex[:6]}@example.org", "quiet-river-2024"
    page.goto(f"{url}/register")
    expect(page.locator("#password-rules")).to_contain_text("e-mail")  # the rules, before any submit
    assert _overflow(page) == 0
    page.fill("#email", email)
    page.fill("#password", password)
    page.fill("#confirm", password)
    page.click("#submit")
    expect(page).to_have_url(re.compile(r"/maps/?$"))

    # the guide, nothing done yet
    guide = page.locator("#first-run-guide")
    expect(guide).to_be_visible()
    expect(page.locator("#guide-progress")).to_have_text("0 of 3 done")
    assert _overflow(page) == 0

    # step 1: the demo papers (desktop) or an upload from the library (phone)
    if size == "desktop":
        page.click("#guide-demo")
        expect(page.locator("#guide-step-papers.guide-step-done")).to_be_visible()
        expect(page.locator("#guide-papers-count")).to_contain_text("2 in your library")
    else:
        page.click("#guide-upload")
        expect(page).to_have_url(re.compile(r"/library/?$"))
        page.locator("#pdf-upload input[type=file]").set_input_files(str(pdfs.PASA))
        expect(page.locator(".upload-result")).to_contain_text("queued for indexing")
        assert _overflow(page) == 0
    _wait_indexed(url, email, password)

    _first_question(page, size)
    _first_map(page, size)

    # all three done: the guide is gone
    _nav(page, size, "maps")
    expect(page.locator("#maps-table")).to_be_visible()
    expect(guide).to_have_count(0)
    page.context.close()


def _first_question(page, size: str) -> None:
    """Step 2: the first question, answered with the starter credits."""
    _nav(page, size, "maps")
    expect(page.locator("#guide-progress")).to_have_text("1 of 3 done")
    page.click("#guide-ask")
    expect(page).to_have_url(re.compile(r"/chat/?$"))
    page.fill("#chat-input", "What is PaSa?")
    page.click("#chat-send")
    expect(page.locator(".chat-message-assistant .chat-cost").last).to_contain_text("credits", timeout=120_000)
    expect(page.locator("#chat-live")).to_have_count(0, timeout=120_000)
    expect(page.locator("#chat-error")).to_have_count(0)
    answer = page.locator(".chat-answer").last
    expect(answer).to_be_in_viewport()
    assert _overflow(page) == 0


def _first_map(page, size: str) -> None:
    """Step 3: the first map, with the default settings; a node of it read and selected."""
    _nav(page, size, "maps")
    expect(page.locator("#guide-progress")).to_have_text("2 of 3 done")
    page.fill("#new-map-title", "How do LLM agents search for papers?")
    page.click("#new-map")
    expect(page).to_have_url(re.compile(r"/maps/[0-9a-f]{32}$"))
    if size == "phone":  # a phone's runs are in its one Actions menu (#40)
        page.click("#btn-phone-actions")
        page.click("#m-research")
    else:
        page.click("#btn-research")
    expect(page.locator("#run-outcome")).to_have_text(re.compile("succeeded", re.I), timeout=240_000)
    expect(page.locator("#map-error")).to_have_count(0)
    if size == "phone":  # a phone opens the map as its outline; a tapped row opens the node sheet in view
        expect(page.locator("#map-outline")).to_be_visible()
        assert page.locator('#map-outline [role="treeitem"]').count() > 3
        page.locator('#map-outline [role="treeitem"][aria-level="2"]').first.click()
        expect(page.locator("#node-panel")).to_be_in_viewport()
        assert _overflow(page) == 0
        page.click("#node-close")
        page.click("#view-canvas")
    expect(page.locator(".react-flow__node").nth(3)).to_be_attached(timeout=20_000)  # the canvas has drawn
    # a phone can read and select a node (one the canvas shows: it opens on the first level)
    page.wait_for_timeout(500)
    c = page.locator("#mindmap-canvas").bounding_box()
    shown = [
        n
        for n in page.locator(".react-flow__node").all()
        if (b := n.bounding_box())
        and b["x"] >= c["x"]
        and b["y"] >= c["y"]
        and b["x"] + b["width"] <= c["x"] + c["width"]
        and b["y"] + b["height"] <= c["y"] + c["height"]
    ]
    # at a readable zoom a phone's canvas holds the root (its first level is a pan away)
    assert len(shown) >= (1 if size == "phone" else 2)
    node = shown[-1]
    node.click()
    expect(page.locator(".mm-node.mm-selected")).to_have_count(1)
    assert _overflow(page) == 0


def test_no_page_scrolls_sideways_on_a_phone(stack, browser):
    url = stack.url
    email, password = f"p{uuid.uuid4().hex[:8]}@example.org", "quiet-river-2024"
    with session_scope(f"sqlite:///{stack.data_dir / 'bayes.db'}") as db:
        accounts.register(db, email, password)
    page = _page(browser, "phone")
    for path in ("/login", "/register"):
        page.goto(url + path)
        assert _overflow(page) == 0, path
    for who in ((email, password), ADMIN):
        page.goto(f"{url}/login")
        page.fill("#email", who[0])
        page.fill("#password", who[1])
        page.click("#submit")
        expect(page).to_have_url(re.compile(r"/maps/?$"))
        paths = ["/maps", "/chat", "/library", "/search", "/credits", "/account"]
        if who == ADMIN:
            paths.append("/admin")
        for path in paths:
            page.goto(url + path)
            expect(page.locator("#page-title")).to_be_visible()
            assert _overflow(page) == 0, f"{path} scrolls sideways for {who[0]}"
        page.click("#nav-menu")
        page.click("#mlogout")
        expect(page).to_have_url(re.compile(r"/login"))
    page.context.close()


@pytest.mark.parametrize("admin", [False, True])
def test_credits_refusal_says_what_to_do(stack, browser, admin):
    url = stack.url
    email, password = f"z{uuid.uuid4().hex[:8]}@example.org", "quiet-river-2024"
    with session_scope(f"sqlite:///{stack.data_dir / 'bayes.db'}") as db:
        accounts.register(db, email, password, is_admin=admin, signup_credits=0)
    page = _page(browser, "desktop")
    page.goto(f"{url}/login")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("#submit")
    expect(page).to_have_url(re.compile(r"/maps/?$"))
    page.goto(f"{url}/chat")
    page.fill("#chat-input", "Anything?")
    page.click("#chat-send")
    err = page.locator("#chat-error")
    expect(err).to_contain_text("Not enough credits")
    link = page.locator("#credits-hint-link")
    if admin:
        expect(err).to_contain_text("grant credits on the Admin page")
        link.click()
        expect(page).to_have_url(re.compile(r"/admin#grant$"))
        expect(page.locator("#grant-email")).to_be_visible()
    else:
        expect(err).to_contain_text("Ask an administrator for credits")
        link.click()
        expect(page).to_have_url(re.compile(r"/credits/?$"))
        expect(page.locator("#credits-balance")).to_have_text("0")
    page.context.close()
