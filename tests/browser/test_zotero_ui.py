"""Zotero in a real browser: connect with a key, watch the sync's progress, see the documents
appear in the Library with their Zotero collections, then "Sync now" with nothing changed."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.support.browser import login
from tests.support.fake_zotero import recorded_items, seed_recorded
from tests.support.tiny_pdf import text_pdf
from tests.support.zotero_sync import new_ids


def test_connect_watch_progress_and_see_documents(app_stack, page, make_user, fake_zotero):
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key, username="grace")
    seed_recorded(zlib, pdf_for=3)
    items = recorded_items()
    zlib.add_pdf(items[5]["key"], "WEBDAV03", text_pdf("only on webdav"), with_file=False)
    email, password = make_user()
    login(page, app_stack.url, email, password)
    page.click("#nav-library")
    expect(page.locator("#no-documents")).to_be_visible()

    # a wrong key: a clear message, nothing connected
    page.fill("#zotero-api-key", "wrongkey999")
    page.click("#zotero-connect")
    expect(page.locator("#zotero-error")).to_contain_text("does not accept this API key")
    expect(page.locator("#zotero-error")).to_contain_text("Key refused")  # refused, not unreachable
    expect(page.locator("#zotero-api-key")).to_have_value("wrongkey999")  # kept, to be corrected
    expect(page.locator("#zotero-key-help a")).to_have_attribute("href", "https://www.zotero.org/settings/keys")
    expect(page.locator(".zotero-library")).to_have_count(0)

    fake_zotero.latency_s = 0.3  # slow enough to watch the progress
    try:
        page.fill("#zotero-api-key", key)
        page.click("#zotero-connect")
        lib = page.locator(".zotero-library")
        expect(lib).to_have_count(1)
        expect(lib.locator(".zotero-name")).to_have_text("grace (my library)")
        expect(lib.locator(".zotero-progress")).to_contain_text("fetched", timeout=20_000)
        expect(lib.locator(".zotero-status")).to_have_attribute("data-status", "idle", timeout=90_000)
    finally:
        fake_zotero.latency_s = 0.0
    expect(lib.locator(".zotero-result")).to_contain_text("3 added")
    expect(lib.locator(".zotero-meta")).to_contain_text("library, files, notes")
    expect(lib.locator(".zotero-problems")).to_contain_text("1 item(s) without a usable PDF")

    # the documents appear in the Library with their Zotero metadata and collections, and index
    rows = page.locator(".doc-row")
    expect(rows).to_have_count(3, timeout=30_000)
    first = page.locator(".doc-row", has_text=items[1]["title"])
    expect(first).to_contain_text("Sherlock Holmes")
    for i in range(3):
        expect(rows.nth(i).locator(".doc-status")).to_have_attribute("data-status", "indexed", timeout=180_000)
    expect(page.locator("#collections")).to_contain_text("Non-English items / sherlock films")
    expect(lib.locator(".zotero-documents")).to_contain_text("3 of 3 documents indexed", timeout=30_000)
    assert key not in page.content()  # the key never comes back to the browser

    # sync now with nothing changed
    lib.locator(".zotero-sync-now").click()
    expect(lib.locator(".zotero-result")).to_contain_text("No changes.", timeout=30_000)
