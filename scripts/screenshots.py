"""Screenshots of every page at 1440×900 and 390×844 into docs/screenshots/, and the
horizontal-overflow check (document scrollWidth vs. the viewport) for each.

Walks the first-run path as a new user on a running app (sign up, demo papers, a question,
a map), so the pages show real content:

    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:3000 \
        [--admin-email E --admin-password P]   # also the Admin page
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import uuid
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.browser import launch_chromium  # noqa: E402

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
OUT = ROOT / "docs" / "screenshots"


def overflow(page: Page) -> int:
    """How many CSS pixels the page scrolls sideways (0 = none)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def settle(page: Page) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(600)


def wait_indexed(url: str, email: str, password: str, timeout: float = 600) -> str:
    """Wait until a paper of this user is indexed; returns its id."""
    api = url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        docs = httpx.get(f"{api}/documents", headers=h).json()["documents"]
        done = [d["id"] for d in docs if d["status"] == "indexed"]
        if done:
            return done[0]
        time.sleep(1)
    raise SystemExit("the demo papers were not indexed in time")


# what shows that a page's content has arrived (it loads over the websocket after the shell)
READY = {
    "library": lambda pg: expect(pg.locator(".doc-row .doc-title").first).to_be_visible(timeout=60_000),
    "viewer": lambda pg: expect(pg.locator("#pdf-view")).to_have_attribute(
        "data-rendered", re.compile(r"^\d+@\d+$"), timeout=60_000
    ),
    "chat": lambda pg: expect(pg.locator(".chat-answer").first).to_be_visible(timeout=60_000),
    "map": lambda pg: pg.wait_for_function(
        "() => window.__mindmapReady || document.querySelector('#map-outline [role=treeitem]')", timeout=60_000
    ),
    "maps": lambda pg: expect(pg.locator("#page-title")).to_have_text("Maps", timeout=60_000),
    "search": lambda pg: expect(pg.locator(".search-result").first).to_be_visible(timeout=60_000),
    "credits": lambda pg: expect(pg.locator("#page-title")).to_be_visible(timeout=60_000),
    "admin": lambda pg: expect(pg.locator("#admin-balances")).to_be_visible(timeout=60_000),
}


def first_run(page: Page, url: str, email: str, password: str, out: Path) -> dict[str, str]:
    """Sign up and do the three first steps; returns page paths worth a screenshot."""
    page.goto(f"{url}/register")
    page.fill("#email", email)
    page.fill("#password", password)
    page.fill("#confirm", password)
    page.click("#submit")
    expect(page.locator("#first-run-guide")).to_be_visible()
    page.click("#guide-demo")
    expect(page.locator("#guide-step-papers.guide-step-done")).to_be_visible()
    for size, (w, h) in SIZES.items():  # the first-run guide, one step done
        page.set_viewport_size({"width": w, "height": h})
        page.goto(f"{url}/maps")
        expect(page.locator("#guide-progress")).to_have_text("1 of 3 done")
        settle(page)
        page.screenshot(path=str(out / f"guide-{size}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})
    doc_id = wait_indexed(url, email, password)
    page.goto(f"{url}/chat")
    page.fill("#chat-input", "What is PaSa and how is it trained?")
    page.click("#chat-send")
    expect(page.locator(".chat-message-assistant .chat-cost").last).to_be_visible(timeout=120_000)
    expect(page.locator("#chat-live")).to_have_count(0, timeout=120_000)
    chat = page.url.replace(url, "")
    # the viewer as a chat source opens it: at the cited page, with the quote highlighted
    sources = page.locator(".chat-message-assistant .chat-open-source")
    viewer = sources.first.get_attribute("href") if sources.count() else f"/documents/{doc_id}?page=2"
    # a follow-up, then the first question edited: the earlier version is one click away
    page.fill("#chat-input", "Which datasets does it use?")
    page.click("#chat-send")
    expect(page.locator(".chat-answer")).to_have_count(2, timeout=120_000)
    expect(page.locator("#chat-live")).to_have_count(0, timeout=120_000)
    page.locator(".chat-edit").first.click()
    page.fill("#chat-edit-input", "What is PaSa, and how is its Crawler trained?")
    page.click("#chat-edit-save")
    page.click("#chat-edit-confirm")
    expect(page.locator("#chat-other-version")).to_be_visible(timeout=120_000)
    expect(page.locator("#chat-live")).to_have_count(0, timeout=120_000)
    page.goto(f"{url}/maps")
    page.fill("#new-map-title", "How do LLM agents search for papers?")
    page.click("#new-map")
    page.wait_for_url("**/maps/*")
    page.click("#btn-research")
    expect(page.locator("#run-outcome")).to_be_visible(timeout=180_000)
    editor = page.url.replace(url, "")
    return {"chat": chat, "map": editor, "viewer": viewer}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--admin-email")
    ap.add_argument("--admin-password")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    url = args.url.rstrip("/")
    email, password = f"new-{uuid.uuid4().hex[:6]}@example.org", "quiet-river-" + uuid.uuid4().hex[:6]
    results = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        anon = browser.new_context(viewport={"width": 1440, "height": 900})
        ctx = browser.new_context(viewport={"width": 1440, "height": 900})
        for c in (anon, ctx):
            c.set_default_timeout(120_000)  # a loaded machine answers slowly; waits are for content
        page = ctx.new_page()
        try:
            paths = first_run(page, url, email, password, out)
        except Exception:
            page.screenshot(path=str(out / "first-run-failed.png"))  # what the page showed instead
            raise
        pages = [
            ("login", "/login", anon),
            ("register", "/register", anon),
            ("maps", "/maps", ctx),
            ("chat", paths["chat"], ctx),
            ("map", paths["map"], ctx),
            ("library", "/library", ctx),
            ("search", "/search?q=agent", ctx),
            ("viewer", paths["viewer"], ctx),
            ("credits", "/credits", ctx),
            ("account", "/account", ctx),
            ("api-docs", "/api/v1/docs", anon),
        ]
        if args.admin_email:
            admin = browser.new_context(viewport={"width": 1440, "height": 900})
            admin.set_default_timeout(120_000)
            ap_ = admin.new_page()
            ap_.goto(f"{url}/login")
            ap_.fill("#email", args.admin_email)
            ap_.fill("#password", args.admin_password)
            ap_.click("#submit")
            expect(ap_.locator("#page-title")).to_have_text("Maps")
            pages.append(("admin", "/admin", admin))
        for name, path, c in pages:
            for size, (w, h) in SIZES.items():
                pg = c.new_page()  # a new tab per size: a tab keeps choices made for its first width
                pg.set_viewport_size({"width": w, "height": h})
                pg.goto(url + path)
                if name in READY:  # the page's content, not its loading state
                    READY[name](pg)
                settle(pg)
                over = overflow(pg)
                pg.screenshot(path=str(out / f"{name}-{size}.png"))
                results.append((name, size, over))
                pg.close()
        browser.close()
    print(f"{'page':10} {'size':8} {'sideways scroll (px)':>20}")
    for name, size, over in results:
        print(f"{name:10} {size:8} {over:>20}")
    if any(o > 0 for *_, o in results):
        raise SystemExit("some pages scroll sideways")


if __name__ == "__main__":
    main()
