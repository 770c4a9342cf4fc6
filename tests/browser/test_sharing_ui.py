"""Two users, two browser contexts, one map: the owner shares it from the Share dialog, the
member finds it under "Shared with me", both edit it and see each other's edits live, each
sees the other in the map's presence, and removal ejects the member's open page."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Page, expect

from tests.support.browser import login

NODE = ".react-flow__node"


def _node(page: Page, title: str):
    return page.locator(NODE).filter(has_text=title)


def _context(browser, width: int = 1280, height: int = 860) -> Page:
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    return page


def test_two_users_edit_one_map_live(app_stack, make_user, browser):
    url = app_stack.url
    (o_email, o_pw), (m_email, m_pw) = make_user(), make_user()
    owner, member = _context(browser), _context(browser)
    try:
        login(owner, url, o_email, o_pw)
        owner.fill("#new-map-title", "Team question")
        owner.click("#new-map")
        owner.wait_for_url(re.compile(r".*/maps/[0-9a-f]+$"))
        map_id = owner.url.rstrip("/").rsplit("/", 1)[-1]
        expect(owner.locator(NODE)).to_have_count(1)

        # share it as editor from the Share dialog
        owner.click("#btn-share")
        expect(owner.locator("#share-none")).to_be_visible()
        owner.fill("#share-email", "nobody@example.com")
        owner.click("#share-add")
        expect(owner.locator("#share-error")).to_have_text("No account with this e-mail.")
        owner.fill("#share-email", m_email)
        owner.select_option("#share-role", "editor")
        owner.click("#share-add")
        expect(owner.locator(".share-member-email")).to_have_text(m_email)
        owner.keyboard.press("Escape")

        # the member finds it under "Shared with me" and opens it
        login(member, url, m_email, m_pw)
        expect(member.locator("#shared-maps .shared-owner")).to_have_text(o_email)
        expect(member.locator("#shared-maps .shared-role")).to_have_text("editor")
        member.click("#shared-maps .shared-open")
        member.wait_for_url(f"**/maps/{map_id}")
        expect(member.locator("#map-role")).to_contain_text("editor")
        expect(member.locator(NODE)).to_have_count(1)

        # presence: each sees the other
        expect(owner.locator("#map-presence")).to_contain_text(m_email, timeout=10_000)
        expect(member.locator("#map-presence")).to_contain_text(o_email, timeout=10_000)

        # both edit; both see both edits
        owner.locator(NODE).first.click()
        owner.click("#btn-add-child")
        owner.fill("#node-title", "Owner's theme")
        t0 = time.monotonic()
        expect(_node(member, "Owner's theme")).to_be_visible(timeout=5_000)
        owner_to_member = time.monotonic() - t0
        member.locator(NODE).first.click()
        member.click("#btn-add-child")
        member.fill("#node-title", "Member's theme")
        expect(_node(owner, "Member's theme")).to_be_visible(timeout=5_000)
        expect(_node(member, "Owner's theme")).to_be_visible()
        assert owner_to_member < 3.0

        # made a viewer, the member's open page loses the edit tools at once and keeps export
        owner.click("#btn-share")
        owner.locator(".share-member-role").select_option("viewer")
        expect(member.locator("#map-role")).to_contain_text("viewer", timeout=5_000)
        expect(member.locator("#btn-add-child")).to_have_count(0)
        expect(member.locator("#export-md")).to_be_visible()

        # the owner removes the member: the member's open page leaves the map with a plain message
        owner.locator(".share-member-remove").click()
        expect(owner.locator("#share-none")).to_be_visible()
        expect(member.locator("#map-missing")).to_contain_text("This map is no longer shared with you.", timeout=10_000)
        expect(member.locator(NODE)).to_have_count(0)
        member.goto(f"{url}/maps")
        expect(member.locator("#shared-maps")).to_have_count(0)
    finally:
        owner.context.close()
        member.context.close()


def test_share_dialog_papers_members_can_open(app_stack, make_user, app_db_url, browser):
    """Issue 36.1: the owner picks, in the Share dialog, which of their papers the map's members
    can open and their runs may read; taking one back removes it from the list."""
    import uuid

    from sqlmodel import select

    from bayes_app.db import session_scope
    from bayes_app.models import Document, User

    email, pw = make_user()
    title = f"Private draft {uuid.uuid4().hex[:6]}"
    with session_scope(app_db_url) as db:
        uid = db.exec(select(User.id).where(User.email == email)).one()
        db.add(Document(owner_id=uid, filename="d.pdf", file_sha256=uuid.uuid4().hex, title=title, status="indexed"))
    page = _context(browser, 1440, 900)
    try:
        login(page, app_stack.url, email, pw)
        page.fill("#new-map-title", "Papers question")
        page.click("#new-map")
        page.wait_for_url(re.compile(r".*/maps/[0-9a-f]+$"))
        page.click("#btn-share")
        expect(page.locator("#share-docs-none")).to_be_visible()
        page.select_option("#share-doc-pick", label=title)
        page.click("#share-doc-add")
        expect(page.locator(".share-doc-title")).to_have_text(title)
        page.screenshot(path="/tmp/sec_a-share-papers-1440.png")
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path="/tmp/sec_a-share-papers-390.png")
        page.locator(".share-doc-remove").click()
        expect(page.locator("#share-docs-none")).to_be_visible()
    finally:
        page.context.close()
