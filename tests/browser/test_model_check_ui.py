"""Check model connection in a real browser: the Admin page names the configured model and, on
the button, says in words that the scripted OpenAI-compatible server answers (then that it
refuses the key); screenshots at 1440x900 and 390x844 (docs/screenshots/admin-model-check-*)."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import expect

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.support.browser import login
from tests.support.fake_openai import Script

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_the_admin_checks_the_model_connection(app_stack, browser, fake_llm):
    for name, (w, h) in {"desktop": (1440, 900), "phone": (390, 844)}.items():
        context = browser.new_context(viewport={"width": w, "height": h})
        page = context.new_page()
        page.set_default_timeout(30_000)
        login(page, app_stack.url, ADMIN_EMAIL, ADMIN_PASSWORD, expect_home=False)
        page.goto(f"{app_stack.url}/admin")
        panel = page.locator("#model-connection")
        expect(page.locator("#model-setup")).to_contain_text(fake_llm.base_url)
        page.click("#model-check")
        expect(page.locator("#model-check-result")).to_contain_text("The model answers", timeout=60_000)
        assert "sk-test-secret" not in panel.inner_text()
        panel.scroll_into_view_if_needed()
        if os.environ.get("BAYES_SCREENSHOTS", "1") != "0":
            page.screenshot(path=str(SHOTS / f"admin-model-check-{name}.png"))
        if name == "phone":
            assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
            fake_llm.script(Script.error(401, message="Incorrect API key provided", times=-1, match=None))
            page.click("#model-check")
            expect(page.locator("#model-check-result")).to_contain_text("refused the key", timeout=60_000)
            fake_llm.reset()
        context.close()
