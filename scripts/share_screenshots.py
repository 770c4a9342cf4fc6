"""Screenshots of sharing at 1440×900 and 390×844 into docs/screenshots/: the Share dialog on the
owner's map page, the Maps page's "Shared with me" and the member's view of the shared map.
Starts its own app (benchmarks/mapstack.app) with two accounts:

    .venv/bin/python scripts/share_screenshots.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mapstack import app, make_user  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.support.browser import launch_chromium, login  # noqa: E402

SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
OUT = ROOT / "docs" / "screenshots"


def main() -> None:
    import httpx

    with app() as (stack, db_url), sync_playwright() as pw:
        _, o_email, o_pw = make_user(db_url)
        _, m_email, m_pw = make_user(db_url)
        api = httpx.Client(base_url=stack.url + "/api/v1", timeout=60)
        oh = {
            "Authorization": "Bearer "
            + api.post("/auth/token", json={"email": o_email, "password": o_pw}).json()["token"]
        }
        m = api.post("/mindmaps", json={"title": "Do small language models match large ones?"}, headers=oh).json()
        for title in ("Cost of training", "Accuracy on narrow tasks", "Open questions"):
            api.post(f"/mindmaps/{m['id']}/nodes", json={"parent_id": m["root_id"], "title": title}, headers=oh)
        api.post(f"/mindmaps/{m['id']}/members", json={"email": m_email, "role": "editor"}, headers=oh)
        browser = launch_chromium(pw)
        for size, (w, h) in SIZES.items():
            owner = browser.new_context(viewport={"width": w, "height": h}).new_page()
            member = browser.new_context(viewport={"width": w, "height": h}).new_page()
            login(owner, stack.url, o_email, o_pw)
            login(member, stack.url, m_email, m_pw)
            owner.goto(f"{stack.url}/maps/{m['id']}")
            member.goto(f"{stack.url}/maps/{m['id']}")
            expect(owner.locator("#map-presence")).to_contain_text(m_email, timeout=15_000)
            owner.click("#btn-share")
            expect(owner.locator(".share-member-email")).to_have_text(m_email)
            owner.wait_for_timeout(500)
            owner.screenshot(path=str(OUT / f"share-dialog-{size}.png"))
            expect(member.locator("#map-role")).to_be_visible()
            member.wait_for_timeout(500)
            member.screenshot(path=str(OUT / f"map-shared-{size}.png"))
            member.goto(f"{stack.url}/maps")
            expect(member.locator("#shared-maps")).to_be_visible()
            member.wait_for_timeout(500)
            member.screenshot(path=str(OUT / f"maps-shared-{size}.png"))
            over = member.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            print(f"{size}: Maps page sideways overflow {over} px")
            owner.context.close()
            member.context.close()
        browser.close()


if __name__ == "__main__":
    main()
