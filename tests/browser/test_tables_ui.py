"""Extraction tables in a real browser: make a table over a collection, fill it live, open a
cell's quote at its page (highlighted), edit a cell, export the CSV with the edit in it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import expect

from tests.integration.test_library import upload, wait_done
from tests.support.browser import login
from tests.support.table_papers import PAPERS, fund, paper_pdf

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _seed(url: str, email: str, password: str) -> None:
    c = httpx.Client(base_url=url + "/api/v1", timeout=60)
    c.headers["Authorization"] = (
        "Bearer " + c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    )
    coll = c.post("/collections", json={"name": "Trials"}).json()
    for p in PAPERS[:2]:
        doc = upload(c, paper_pdf(p), p.title[:20] + ".pdf").json()
        assert wait_done(c, doc["id"])["status"] == "indexed"
        c.patch(f"/documents/{doc['id']}", json={"collection_ids": [coll["id"]]})
    c.close()


def _click_cell(page, col: int, row: int) -> None:
    """Click a cell of the canvas grid: column `col` after the paper column, data row `row`."""
    grid = page.locator("#table-grid canvas").first
    box = grid.bounding_box()
    x = box["x"] + 4 + 40 + 260 + 220 * col + 110  # row markers, the paper column, then 220 px columns
    y = box["y"] + 36 + 44 * row + 22
    page.mouse.click(x, y)


def test_make_fill_open_edit_export(app_stack, app_db_url, page, make_user):
    url = app_stack.url
    email, password = make_user()
    fund(app_db_url, email)
    _seed(url, email, password)
    login(page, url, email, password)
    page.goto(f"{url}/tables")
    expect(page.locator("#tables-empty")).to_be_visible()
    expect(page.locator(".new-column")).to_have_count(3)  # the preset columns
    page.fill("#table-title", "Trial sizes")
    page.click("#table-create")
    expect(page).to_have_url(re.compile(r"/tables/[0-9a-f]{32}$"))
    expect(page.locator("#table-heading")).to_have_text("Trial sizes")

    page.click("#table-fill")
    expect(page.locator("#table-fill-note")).to_have_text("Filled.", timeout=120_000)
    expect(page.locator(".screening")).to_contain_text("2 screened")

    # papers sort by title: "School exercise…" before "Sleep duration…"
    _click_cell(page, 0, 0)
    expect(page.locator("#cell-value")).to_have_text(str(PAPERS[0].participants))
    expect(page.locator("#cell-quote")).to_contain_text("1,248 adolescents")
    link = page.locator("#cell-open")
    expect(link).to_have_attribute("href", re.compile(r"/documents/[0-9a-f]{32}\?page=1&quote=A\+total"))

    page.fill("#cell-edit", "1250")
    page.click("#cell-save")
    expect(page.locator("#cell-value")).to_have_text("1250 ✎")
    csv = page.request.get(f"{url}/api/v1/tables/{page.url.rsplit('/', 1)[1]}/export.csv")
    assert csv.status == 200
    assert "1250" in csv.text()
    assert "edited" in csv.text()

    # the owner shares the table from its page; the member reads it, then is removed
    table_id = page.url.rsplit("/", 1)[1]
    member_email, member_password = make_user()
    page.fill("#table-share-email", "nobody-here@example.com")
    page.click("#table-share")
    expect(page.locator("#table-share-error")).to_be_visible()
    page.fill("#table-share-email", member_email)
    page.click("#table-share")
    expect(page.locator(".table-member")).to_contain_text(member_email)
    expect(page.locator(".table-member")).to_contain_text("viewer")
    member = httpx.Client(base_url=url + "/api/v1", timeout=60)
    token = member.post("/auth/token", json={"email": member_email, "password": member_password}).json()["token"]
    member.headers["Authorization"] = f"Bearer {token}"
    assert member.get(f"/tables/{table_id}").json()["role"] == "viewer"
    page.locator(".table-member").get_by_role("button", name="Remove member").click()
    expect(page.locator(".table-member")).to_have_count(0)
    assert member.get(f"/tables/{table_id}").status_code == 404
    member.close()

    # what a user sees, at both sizes (docs/screenshots/table-*.png); the phone never scrolls sideways
    page.screenshot(path=str(SHOTS / "table-desktop.png"))
    phone = page.context.new_page()
    phone.set_viewport_size({"width": 390, "height": 844})
    phone.goto(page.url)
    expect(phone.locator("#table-heading")).to_have_text("Trial sizes")
    expect(phone.locator("#table-grid canvas").first).to_be_visible()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=str(SHOTS / "table-phone.png"))
    phone.close()

    link.click()
    expect(page).to_have_url(re.compile(r"/documents/[0-9a-f]{32}\?page=1"))
    expect(page.locator("#pdf-view")).to_have_attribute("data-quote-found", "yes", timeout=60_000)
