"""Accounts in a real browser: register, shell, logout, guarded pages, admin-only pages."""

import re
import uuid

import httpx
from playwright.sync_api import expect

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support.browser import login


def test_register_shell_logout_and_guard(app_stack, page):
    url = app_stack.url
    email = f"reader-{uuid.uuid4().hex[:8]}@example.com"
    page.goto(f"{url}/register")
    page.wait_for_load_state("networkidle")  # hydrated: the form's fields keep what is typed
    page.fill("#email", email)
    page.fill("#password", "quiet-river-2024")
    page.fill("#confirm", "quiet-river-2024")
    page.click("#submit")
    expect(page).to_have_url(re.compile(r"/maps/?$"))
    expect(page.locator("#user-email")).to_have_text(email)
    for section in ("maps", "library", "search", "credits"):
        expect(page.locator(f"#nav-{section}")).to_be_visible()
    expect(page.locator("#nav-admin")).to_have_count(0)  # hidden from non-admins

    page.click("#nav-library")
    expect(page.locator("#page-title")).to_have_text("Library")

    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    page.goto(f"{url}/library")
    expect(page).to_have_url(re.compile(r"/login\?next=/library"))
    expect(page.locator("#page-title")).to_have_text("Sign in")

    # signing in again lands on the page that was asked for
    page.fill("#email", email)
    page.fill("#password", "quiet-river-2024")
    page.click("#submit")
    expect(page).to_have_url(re.compile(r"/library/?$"))


def test_bad_input_shows_clear_messages(app_stack, page, make_user):
    url = app_stack.url
    email, password = make_user()
    login(page, url, email, "wrong-password-0", expect_home=False, via_form=True)
    expect(page.locator("#form-error")).to_contain_text("Wrong e-mail or password")
    expect(page).to_have_url(re.compile(r"/login"))

    page.goto(f"{url}/register")
    page.wait_for_load_state("networkidle")  # hydrated: the form's fields keep what is typed
    page.fill("#email", email)
    page.fill("#password", "quiet-river-2024")
    page.fill("#confirm", "quiet-river-2024")
    page.click("#submit")
    expect(page.locator("#form-error-live")).to_contain_text("already exists", timeout=20_000)
    # the error is shown beside the form as typed: nothing to type again
    expect(page).to_have_url(re.compile(r"/register/?$"))
    expect(page.locator("#email")).to_have_value(email)
    expect(page.locator("#password")).to_have_value("quiet-river-2024")
    expect(page.locator("#confirm")).to_have_value("quiet-river-2024")

    page.fill("#email", f"new-{uuid.uuid4().hex[:6]}@example.com")
    page.fill("#password", "short")
    page.fill("#confirm", "short")
    page.click("#submit")
    expect(page.locator("#form-error-live")).to_contain_text("at least 10 characters", timeout=20_000)
    expect(page.locator("#password")).to_have_value("short")
    page.fill("#password", "quiet-river-2024")
    page.fill("#confirm", "quiet-river-2025")
    page.click("#submit")
    expect(page.locator("#form-error-live")).to_contain_text("passwords differ", timeout=20_000)
    expect(page.locator("#confirm")).to_have_value("quiet-river-2025")


def test_admin_page_is_admin_only(app_stack, page, make_user):
    url = app_stack.url
    email, password = make_user()
    login(page, url, email, password, expect_home=False, via_form=True)
    expect(page).to_have_url(re.compile(r"/maps/?$"))
    page.goto(f"{url}/admin")
    expect(page).to_have_url(re.compile(r"/maps/?$"))  # refused and sent away
    expect(page.locator("#admin-users")).to_have_count(0)

    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    login(page, url, ADMIN_EMAIL, ADMIN_PASSWORD, expect_home=False, via_form=True)
    expect(page.locator("#nav-admin")).to_be_visible()
    page.click("#nav-admin")
    expect(page.locator("#admin-users")).to_contain_text(email)


def test_change_password_and_api_token(app_stack, page, make_user):
    import httpx

    url = app_stack.url
    email, password = make_user()
    login(page, url, email, password, expect_home=False, via_form=True)
    expect(page).to_have_url(re.compile(r"/maps/?$"))
    page.click("#nav-account")
    page.fill("#old_password", password)
    page.fill("#new_password", "brand-new-secret-7")
    page.fill("#confirm", "brand-new-secret-7")
    page.click("#change-password")
    expect(page.locator("#form-notice")).to_contain_text("Password changed")
    page.reload()
    expect(page.locator("#page-title")).to_have_text("Account")  # this browser stays signed in

    page.click("#create-token")  # no name: refused with a reason, no token made
    expect(page.locator("#token-error")).to_contain_text("Give the token a name")
    expect(page.locator("#new-token")).to_have_count(0)
    page.fill("#token-name", "laptop")
    page.click("#create-token")
    expect(page.locator("#token-error")).to_have_count(0)
    token = page.locator("#new-token").inner_text()
    me = httpx.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["email"] == email
    r = httpx.post(f"{url}/api/v1/auth/token", json={"email": email, "password": password})
    assert r.status_code == 401  # the old password no longer works
    # Revoke asks first: "Keep it" keeps the token working, confirming revokes it
    page.click(".token-revoke")
    expect(page.get_by_text("Revoke this token?")).to_be_visible()
    expect(page.get_by_role("alertdialog")).to_contain_text("laptop")
    page.click("#token-revoke-cancel")
    assert httpx.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    page.click(".token-revoke")
    page.click("#token-revoke-confirm")
    expect(page.locator(".token-revoke")).to_have_count(0)
    assert httpx.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_favicon_is_served(app_stack):
    r = httpx.get(f"{app_stack.url}/favicon.ico")
    assert r.status_code == 200
    assert r.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
