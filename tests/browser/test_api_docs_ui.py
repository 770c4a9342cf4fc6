"""The API's browsable docs (/api/v1/docs) in Chromium: Swagger UI loads from our own
origin under the site's Content-Security-Policy and lists the operations."""

from __future__ import annotations


def test_swagger_ui_lists_the_operations_without_csp_violations(app_stack, page):
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.goto(app_stack.url + "/api/v1/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    assert page.locator(".opblock").count() >= 60
    assert page.locator(".opblock-tag").filter(has_text="Mindmaps").count() == 1
    page.locator(".opblock-summary-path").filter(has_text="/api/v1/mindmaps").first.wait_for()
    assert not [p for p in problems if "Content Security Policy" in p or "failed:" in p], problems
