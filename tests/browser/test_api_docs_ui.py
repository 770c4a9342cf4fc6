"""The API's browsable docs (/api/v1/docs) in Chromium: Swagger UI loads from our own
origin under the site's Content-Security-Policy, lists the operations and shows an
operation's parameters and media types."""

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
    # an operation opens with its query parameters and its bearer lock
    search = page.locator("#operations-Library-get_search")
    search.locator(".opblock-summary").click()
    for name in ("q", "k", "document_id", "include_roles", "all_roles"):
        search.locator(f"tr[data-param-name='{name}']").wait_for(timeout=10_000)
    assert search.locator(".authorization__btn").count() >= 1
    events = page.locator("#operations-Runs-get_runs_run_id_events")
    events.locator(".opblock-summary").click()
    events.locator("tr[data-param-name='Last-Event-ID']").wait_for(timeout=10_000)
    assert "text/event-stream" in events.inner_text()
    assert not [p for p in problems if "Content Security Policy" in p or "failed:" in p], problems
