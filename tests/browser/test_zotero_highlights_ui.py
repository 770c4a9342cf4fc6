"""A Zotero highlight in a real browser: synced from the fake Web API, it shows in the viewer
at its rectangles (PDF points → the rendered page) in its colour, on its page only."""

from __future__ import annotations

import os

import httpx
from playwright.sync_api import expect

from tests.support.browser import login
from tests.support.fake_zotero_write import add_annotation
from tests.support.procs import wait_for
from tests.support.tiny_pdf import text_pdf
from tests.support.zotero_sync import new_ids


def test_a_zotero_highlight_renders_at_its_rectangles(app_stack, page, make_user, fake_zotero, client):
    uid, key = new_ids()
    z = fake_zotero.add_user(uid, key, username="hl")
    z.put_item(
        {
            "key": "HLITEM01",
            "itemType": "journalArticle",
            "title": "Highlighted paper",
            "creators": [],
            "collections": [],
            "tags": [],
            "relations": {},
        }
    )
    z.add_pdf("HLITEM01", "HLATT001", text_pdf("Highlighted paper", pages=2))
    rects = [[72.0, 700.0, 300.0, 712.0], [72.0, 686.0, 200.0, 698.0]]
    add_annotation(
        z,
        "HLATT001",
        "HLANN001",
        text="Highlighted paper",
        comment="check this",
        color="#ff6666",
        page_index=0,
        rects=rects,
    )
    add_annotation(z, "HLATT001", "HLANN002", text="second page", color="#5fb236", page_index=1)
    email, password = make_user()
    tok = client.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    api = httpx.Client(base_url=str(client.base_url), timeout=60, headers={"Authorization": f"Bearer {tok}"})
    assert api.post("/zotero/libraries", json={"api_key": key}).status_code == 201

    def indexed():
        docs = api.get("/documents").json()["documents"]
        return docs if docs and docs[0]["status"] == "indexed" else None

    doc = wait_for(indexed, 180, 0.5, what="the Zotero document to be indexed")[0]
    anns = api.get(f"/documents/{doc['id']}/annotations").json()["annotations"]
    assert [a["key"] for a in anns] == ["HLANN001", "HLANN002"]
    assert anns[0]["rects"] == rects

    login(page, app_stack.url, email, password)
    page.goto(f"{app_stack.url}/documents/{doc['id']}?page=1")
    boxes = page.locator('.zotero-box[data-annotation="HLANN001"]')
    expect(boxes).to_have_count(2, timeout=30_000)
    expect(page.locator('.zotero-box[data-annotation="HLANN002"]')).to_have_count(0)
    canvas = page.locator(".react-pdf__Page canvas").first
    expect(canvas).to_be_visible(timeout=30_000)
    pb = canvas.bounding_box()
    scale = pb["width"] / 612.0  # the page is US Letter, 612 × 842 points (tiny_pdf)
    for i, (x1, y1, x2, y2) in enumerate(rects):
        b = boxes.nth(i).bounding_box()
        assert abs(b["x"] - (pb["x"] + x1 * scale)) < 2, (b, pb)
        assert abs(b["y"] - (pb["y"] + (842 - y2) * scale)) < 2, (b, pb)
        assert abs(b["width"] - (x2 - x1) * scale) < 2
        assert abs(b["height"] - (y2 - y1) * scale) < 2
    assert boxes.first.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 102, 102)"
    if shots := os.environ.get("BAYES_SCREENSHOT_DIR"):
        page.screenshot(path=f"{shots}/zotero_highlight.png")

    page.click("#next-page")
    expect(page.locator('.zotero-box[data-annotation="HLANN002"]')).to_have_count(1)
    expect(boxes).to_have_count(0)


def test_map_zotero_menu_adds_highlights_and_sends_the_map(app_stack, page, make_user, fake_zotero, client):
    uid, key = new_ids()
    z = fake_zotero.add_user(uid, key, username="menu", write=True)
    z.put_item(
        {
            "key": "MNITEM01",
            "itemType": "journalArticle",
            "title": "Menu paper",
            "creators": [],
            "collections": [],
            "tags": [],
            "relations": {},
        }
    )
    z.add_pdf("MNITEM01", "MNATT001", text_pdf("Menu paper"))
    add_annotation(z, "MNATT001", "MNANN001", text="Menu paper shows a clear effect", comment="<b>my note</b>")
    email, password = make_user()
    tok = client.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    api = httpx.Client(base_url=str(client.base_url), timeout=60, headers={"Authorization": f"Bearer {tok}"})
    assert api.post("/zotero/libraries", json={"api_key": key}).status_code == 201
    wait_for(lambda: api.get("/documents").json()["documents"], 120, 0.5, what="the Zotero document")
    map_id = api.post("/mindmaps", json={"title": "Menu map", "question": "What works?"}).json()["id"]

    login(page, app_stack.url, email, password)
    page.goto(f"{app_stack.url}/maps/{map_id}")
    page.click("#btn-zotero")
    page.click("#zotero-add-highlights")
    expect(page.locator("#zotero-map-message")).to_contain_text("Added 1 highlight")
    expect(page.locator(".react-flow__node", has_text="Menu paper shows a clear effect")).to_be_visible()
    page.click("#zotero-send")
    expect(page.locator("#zotero-map-message")).to_contain_text("Sent to Zotero", timeout=30_000)
    notes = [d for d in z.items.values() if d["itemType"] == "note"]
    assert len(notes) == 2  # the map note and the child note on the cited item
    assert "&lt;b&gt;my note&lt;/b&gt;" in next(n for n in notes if not n.get("parentItem"))["note"]
    if shots := os.environ.get("BAYES_SCREENSHOT_DIR"):
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=f"{shots}/zotero_map_menu_1440.png")
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=f"{shots}/zotero_map_menu_390.png")
    page.click("#zotero-send")
    expect(page.locator("#zotero-map-message")).to_contain_text("2 unchanged", timeout=30_000)
