"""A tab that signs out, or where another user signs in, receives nothing of the previous
user: every websocket frame after the logout (and after the switch) is recorded and searched
for the previous user's e-mail, API token, document and map titles, and an admin's dashboard."""

from __future__ import annotations

import os
import re
import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support.browser import login
from tests.support.tiny_pdf import text_pdf


class Frames:
    """Every websocket frame the page receives, from the moment it is attached."""

    def __init__(self, page: Page) -> None:
        self.frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload) -> None:
        self.frames.append(payload if isinstance(payload, str) else payload.decode("utf-8", "replace"))

    def mark(self) -> int:
        return len(self.frames)

    def since(self, mark: int) -> str:
        return "\n".join(self.frames[mark:])


def _seed(url: str, email: str, password: str, tag: str) -> tuple[str, str, str]:
    """A document, a map and a table, through the API; returns their titles."""
    api = f"{url}/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    doc_title, map_title = f"Secret paper {tag}", f"Secret map {tag}"
    doc = httpx.post(
        f"{api}/documents",
        headers=h,
        timeout=60,
        files={"file": (f"{doc_title}.pdf", text_pdf(doc_title), "application/pdf")},
    )
    assert doc.status_code in (200, 201, 202), doc.text
    httpx.patch(f"{api}/documents/{doc.json()['id']}", headers=h, json={"title": doc_title})
    httpx.post(f"{api}/mindmaps", headers=h, json={"title": map_title}).raise_for_status()
    table_title = f"Secret table {tag}"
    column = {"key": "n", "question": "How many participants?", "type": "number"}
    body = {"title": table_title, "document_ids": [doc.json()["id"]], "columns": [column]}
    httpx.post(f"{api}/tables", headers=h, json=body).raise_for_status()
    return doc_title, map_title, table_title


def _visit(page: Page, url: str, path: str, title: str) -> None:
    page.goto(f"{url}{path}")
    expect(page.locator("#page-title")).to_have_text(title)


def test_logout_and_user_switch_send_nothing_of_the_previous_user(app_stack, page, make_user):
    url = app_stack.url
    frames = Frames(page)
    a_email, a_password = make_user()
    b_email, b_password = make_user()
    doc_title, map_title, table_title = _seed(url, a_email, a_password, uuid.uuid4().hex[:8])

    login(page, url, a_email, a_password, via_form=True)
    expect(page.get_by_text(map_title)).to_be_visible()
    _visit(page, url, "/library", "Library")
    expect(page.get_by_text(doc_title).first).to_be_visible()
    _visit(page, url, "/account", "Account")
    page.fill("#token-name", "laptop")
    page.click("#create-token")
    token = page.locator("#new-token").inner_text()
    assert token.startswith("bat_")
    _visit(page, url, "/tables", "Tables")
    expect(page.get_by_text(table_title)).to_be_visible()
    _visit(page, url, "/check", "Check a draft")
    _visit(page, url, "/maps", "Maps")
    expect(page.get_by_text(map_title)).to_be_visible()
    page.wait_for_timeout(500)  # let the page's last deltas arrive before the recording mark
    secrets = (a_email, token, doc_title, map_title, table_title)
    recorded = frames.since(0)
    assert all(s in recorded for s in (a_email, doc_title, map_title, table_title))  # the recording works

    mark = frames.mark()
    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    page.reload()
    expect(page.locator("#page-title")).to_have_text("Sign in")
    page.wait_for_load_state("networkidle")
    after_logout = frames.since(mark)
    assert after_logout, "no frame was recorded after the logout"
    assert [s for s in secrets if s in after_logout] == [], after_logout[:3000]

    mark = frames.mark()
    login(page, url, b_email, b_password, via_form=True)
    expect(page.locator("#user-email")).to_have_text(b_email)
    pages = (("/library", "Library"), ("/account", "Account"), ("/tables", "Tables"), ("/check", "Check a draft"))
    for path, title in (*pages, ("/maps", "Maps")):
        _visit(page, url, path, title)
    page.wait_for_load_state("networkidle")
    after_switch = frames.since(mark)
    assert b_email in after_switch
    assert [s for s in secrets if s in after_switch] == []
    # the page the new user sees holds nothing of the previous one either
    assert map_title not in page.content()


def test_admin_dashboard_is_not_sent_after_the_admin_signs_out(app_stack, page, make_user):
    url = app_stack.url
    frames = Frames(page)
    other_email, _ = make_user()
    login(page, url, ADMIN_EMAIL, ADMIN_PASSWORD, via_form=True)
    _visit(page, url, "/admin", "Admin")
    expect(page.locator("#admin-users")).to_contain_text(other_email)
    assert other_email in frames.since(0)

    mark = frames.mark()
    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    page.reload()
    expect(page.locator("#page-title")).to_have_text("Sign in")
    page.wait_for_load_state("networkidle")
    after = frames.since(mark)
    assert after
    assert other_email not in after
    assert ADMIN_EMAIL not in after


def _new_token(page: Page, name: str) -> str:
    page.fill("#token-name", name)
    page.click("#create-token")
    token = page.locator("#new-token").inner_text()
    assert token.startswith("bat_")
    return token


def _screenshots(page: Page, name: str) -> None:
    """With SCREENSHOT_DIR set, the page at 1440×900 and 390×844 (for looking at, not checked)."""
    out = os.environ.get("SCREENSHOT_DIR")
    if not out:
        return
    for label, (w, h) in (("desktop", (1440, 900)), ("phone", (390, 844))):
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(300)
        page.screenshot(path=f"{out}/{name}-{label}.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 860})


def _me(url: str, token: str) -> int:
    return httpx.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code


def test_password_change_revokes_tokens_and_sign_out_everywhere(app_stack, page, browser, make_user):
    url = app_stack.url
    email, password = make_user()
    login(page, url, email, password, via_form=True)
    _visit(page, url, "/account", "Account")
    expect(page.locator("#password-effects")).to_contain_text("revokes all your API tokens")
    _screenshots(page, "account")
    old_token = _new_token(page, "before")
    assert _me(url, old_token) == 200
    page.fill("#old_password", password)
    page.fill("#new_password", "brand-new-secret-7")
    page.fill("#confirm", "brand-new-secret-7")
    page.click("#change-password")
    expect(page.locator("#form-notice")).to_contain_text("API tokens revoked")
    assert _me(url, old_token) == 401  # minted before the change: revoked with it

    other = browser.new_context().new_page()  # a second browser, signed in too
    login(other, url, email, "brand-new-secret-7", via_form=True)
    token = _new_token(page, "after")
    page.click("#sign-out-everywhere")
    expect(page.get_by_role("alertdialog")).to_contain_text("this one included")
    page.click("#sign-out-everywhere-confirm")
    expect(page).to_have_url(re.compile(r"/login\?notice=signed_out_everywhere"))
    expect(page.locator("#form-notice")).to_contain_text("Signed out everywhere")
    assert _me(url, token) == 401
    page.goto(f"{url}/account")
    expect(page).to_have_url(re.compile(r"/login\?next=/account"))  # this browser's session ended
    other.goto(f"{url}/library")
    expect(other).to_have_url(re.compile(r"/login\?next=/library"))  # and the other one's
    other.context.close()
