"""Browser-test helpers shared by tests/browser/ (Playwright on Debian's Chromium)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from playwright.sync_api import Browser, Page, Playwright, expect

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch_chromium(p: Playwright) -> Browser:
    """Headless Debian Chromium (never a downloaded browser)."""
    return p.chromium.launch(
        executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
    )


def chromium() -> Iterator[Browser]:
    """A Chromium with its own sync Playwright, for a fixture's lifetime (`yield from chromium()`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def login(page: Page, url: str, email: str, password: str, *, expect_home: bool = True, via_form: bool = False) -> None:
    """Sign in and, by default, open the home page (/maps). With `via_form` through the login
    form, as the tests of signing in do; otherwise with the request that form sends, made from
    the page's own browser context (its cookie jar takes the HttpOnly session cookie): the same
    session, one page load less for every test that only needs to be signed in."""
    if via_form:
        page.goto(f"{url}/login")
        page.fill("#email", email)
        page.fill("#password", password)
        page.click("#submit")
    else:
        signed_in = page.request.post(f"{url}/api/v1/session/login", data={"email": email, "password": password})
        assert signed_in.ok, f"sign-in failed: {signed_in.status} {signed_in.text()}"
        if expect_home:
            page.goto(f"{url}/maps")
    if expect_home:
        expect(page).to_have_url(re.compile(r"/maps/?$"))
