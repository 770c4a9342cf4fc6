"""The mindmap in a real browser, against the whole app (web + worker + index + Redis).

The app here runs the OFFLINE provider paced by BAYES_OFFLINE_WORD_DELAY_MS, so a
research run takes ~20 s and can be watched, reloaded and stopped mid-way (an own stack
for this module; with the scripted model server on main, a Script with `tokens_per_s`
does the same)."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect
from sqlmodel import select

from bayes_app.accounts import service as accounts
from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO, Citation, MapNode, Mindmap, Run
from tests.support import pdfs
from tests.support.browser import login
from tests.support.canvas_view import settle
from tests.support.procs import AppStack, stack_env, stack_port

# a research run of ~10 nodes lasts long enough to reload and stop it mid-way (~10 s a node after
# the 4th, which arrives after ~14 s)
WORD_DELAY_MS = "50"
NODE = ".react-flow__node"

# Its own app (offline, paced), run with the `stack` tests before the others; hence also its
# own browser, closed at the end of the module (a live sync Playwright would break
# asyncio.run() in later tests).
pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def browser():
    from tests.support.browser import chromium

    yield from chromium()


@pytest.fixture(scope="module")
def map_stack(tmp_path_factory, redis_server):
    data_dir = Path(tmp_path_factory.mktemp("mapapp"))
    port = stack_port()
    env = stack_env(
        data_dir,
        port,
        REDIS_URL=redis_server.url_db(3),
        BAYES_ADMIN_EMAIL="root@example.com",
        BAYES_ADMIN_PASSWORD="Xk4-" + uuid.uuid4().hex[:12],
        BAYES_DEMO="0",
        BAYES_OFFLINE_WORD_DELAY_MS=WORD_DELAY_MS,
    )
    stack = AppStack(data_dir=data_dir, env=env, port=port).start()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def map_db(map_stack) -> str:
    return f"sqlite:///{map_stack.data_dir / 'bayes.db'}"


def _user(map_stack, map_db, with_library: bool) -> tuple[str, str]:
    email, password = f"m{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(map_db) as db:
        user = accounts.register(db, email, password)
        ledger.grant(db, user, 20 * MICRO, f"grant:{user.id}", "test")
    if with_library:
        with httpx.Client(base_url=map_stack.url + "/api/v1", timeout=60) as c:
            h = {
                "Authorization": "Bearer "
                + c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
            }
            r = c.post(
                "/documents", files={"file": (pdfs.REVIEW.name, pdfs.REVIEW.read_bytes(), "application/pdf")}, headers=h
            )
            assert r.status_code == 202, r.text
            deadline = time.time() + 300
            while time.time() < deadline:
                docs = c.get("/documents", headers=h).json()["documents"]
                if docs and all(d["status"] == "indexed" for d in docs):
                    break
                time.sleep(1)
            else:
                raise AssertionError(f"not indexed: {docs}")
    return email, password


@pytest.fixture(scope="module")
def researcher(map_stack, map_db) -> tuple[str, str]:
    """One user with the review paper indexed (shared by the tests of this module)."""
    return _user(map_stack, map_db, with_library=True)


def _new_map(page, title: str) -> str:
    page.fill("#new-map-title", title)
    page.click("#new-map")
    expect(page).to_have_url(re.compile(r"/maps/[0-9a-f]{32}$"))
    expect(page.locator(NODE)).to_have_count(1)
    return page.url.rsplit("/", 1)[1]


def _node(page, text: str):
    return page.locator(NODE, has_text=text)


def _count(page) -> int:
    return page.locator(NODE).count()


def _db_nodes(map_db: str, map_id: str) -> list[MapNode]:
    with session_scope(map_db) as db:
        return list(db.exec(select(MapNode).where(MapNode.map_id == map_id)))


def test_research_run_live_reload_and_stop(map_stack, map_db, researcher, page):
    url = map_stack.url
    login(page, url, *researcher)
    map_id = _new_map(page, "How are molecular prediction models explained?")
    expect(page.locator("#offline-badge")).to_be_visible()
    page.click("#btn-research")
    expect(page.locator("#run-live")).to_be_visible()
    # nodes appear while the run is still going
    expect(page.locator(NODE).nth(3)).to_be_visible(timeout=90_000)
    expect(page.locator("#run-live")).to_be_visible()
    seen = _count(page)
    # reload mid-run: the persisted map is there and it keeps growing live
    page.reload()
    expect(page.locator("#run-live")).to_be_visible()
    expect(page.locator(NODE).nth(seen - 1)).to_be_visible()
    after_reload = _count(page)
    expect(page.locator(NODE).nth(after_reload)).to_be_visible(timeout=30_000)
    assert page.locator("#run-live").is_visible(), "the run ended before Stop could be tested"
    # Stop: CANCELLED, the credits charged are shown, every node written so far stays
    page.click("#btn-stop")
    expect(page.locator("#run-outcome")).to_contain_text("CANCELLED", timeout=30_000)
    expect(page.locator("#run-cost")).to_contain_text("credits")
    kept = len(_db_nodes(map_db, map_id))
    assert kept >= after_reload + 1
    with session_scope(map_db) as db:
        op = db.exec(select(Run).where(Run.resource_id == map_id)).one()
        assert op.status == "CANCELLED"
        assert op.charged_credits is not None
        assert op.finalized_at is not None
    page.reload()
    expect(page.locator(NODE)).to_have_count(kept)
    # agent citations are on the nodes: the badge shows and the side panel lists them
    # the map opens on its first level (readable); the fit-view control shows all of it
    page.wait_for_function("() => window.__mindmapReady")
    page.click(".react-flow__controls-fitview")
    page.wait_for_timeout(400)
    badge = page.locator(".mm-badge").first
    expect(badge).to_be_visible()
    badge.click()
    expect(page.locator("#node-citations .citation").first).to_be_visible()


def test_edit_drag_delete_undo_persist_and_two_tabs(map_stack, map_db, researcher, page, browser):
    url = map_stack.url
    login(page, url, *researcher)
    map_id = _new_map(page, "Editing by hand")
    _add_three_notes(page)

    # a second tab on the same map sees edits from the first within a second, and vice versa
    ctx2 = browser.new_context(viewport={"width": 1280, "height": 860})
    p2 = ctx2.new_page()
    p2.set_default_timeout(20_000)
    login(p2, url, *researcher)
    p2.goto(f"{url}/maps/{map_id}")
    expect(p2.locator(NODE)).to_have_count(4)
    _node(page, "Gamma note").click()
    page.fill("#node-title", "Gamma renamed")
    t0 = time.monotonic()
    expect(_node(p2, "Gamma renamed")).to_be_visible(timeout=5_000)
    assert time.monotonic() - t0 < 1.5
    _node(p2, "Alpha note").click()
    p2.click("#btn-add-child")
    p2.fill("#node-title", "From tab two")
    expect(_node(page, "From tab two")).to_be_visible(timeout=5_000)

    _drag_onto(page, "Beta note", "Alpha note")

    def by_title() -> dict[str, MapNode]:
        return {n.title: n for n in _db_nodes(map_db, map_id)}

    nodes = by_title()
    assert nodes["Beta note"].parent_id == nodes["Alpha note"].id
    assert nodes["Beta note"].body == "Some thoughts"

    # delete Gamma (with confirm), then undo brings it back
    _node(page, "Gamma renamed").click()
    page.locator("#mindmap-canvas").press("Delete")
    page.click("#node-delete-confirm")
    expect(_node(page, "Gamma renamed")).to_have_count(0)
    expect(_node(p2, "Gamma renamed")).to_have_count(0, timeout=5_000)
    assert "Gamma renamed" not in by_title()
    page.locator("#mindmap-canvas").press("Control+z")
    expect(_node(page, "Gamma renamed")).to_be_visible()
    expect(page.locator("#map-notice")).to_have_text("Undone: the deletion.")
    expect(_node(page, "Alpha note").locator(".mm-kind-theme")).to_have_count(1)  # added under the root
    # collapse Alpha: its subtree is hidden (persisted)
    _node(page, "Alpha note").locator(".mm-toggle").click()
    expect(_node(page, "Beta note")).to_have_count(0)
    ctx2.close()

    # all of it persisted: reload shows the same map
    page.reload()
    expect(_node(page, "Alpha note")).to_contain_text("+2")
    expect(page.locator(NODE)).to_have_count(3)
    nodes = by_title()
    assert {"Editing by hand", "Alpha note", "Beta note", "Gamma renamed", "From tab two"} <= set(nodes)
    assert nodes["Alpha note"].collapsed
    assert nodes["From tab two"].parent_id == nodes["Alpha note"].id


def _add_three_notes(page) -> None:
    """Alpha (Tab), Beta (the toolbar) under the root, Gamma (Enter) after Beta."""
    root = page.locator(NODE).first
    root.click()
    # Tab adds a child and focuses its title; typing saves at once
    page.locator("#mindmap-canvas").press("Tab")
    expect(page.locator(NODE)).to_have_count(2)
    expect(page.locator("#node-title")).to_be_focused()
    page.keyboard.type("Alpha note")
    expect(_node(page, "Alpha note")).to_be_visible()
    # a second child via the toolbar
    root.click()
    page.click("#btn-add-child")
    expect(page.locator(NODE)).to_have_count(3)
    page.fill("#node-title", "Beta note")
    expect(_node(page, "Beta note")).to_be_visible()
    page.fill("#node-body", "Some thoughts")
    # Enter adds a sibling of the selected node
    _node(page, "Beta note").click()
    page.locator("#mindmap-canvas").press("Enter")
    expect(page.locator(NODE)).to_have_count(4)
    page.fill("#node-title", "Gamma note")
    expect(_node(page, "Gamma note")).to_be_visible()


def _drag_onto(page, title: str, onto: str) -> None:
    """Drag a node onto another: re-parented (and laid out); the cards are still while it is dragged."""
    settle(page)
    src, dst = _node(page, title).bounding_box(), _node(page, onto).bounding_box()
    page.mouse.move(src["x"] + src["width"] / 2, src["y"] + src["height"] / 2)
    page.mouse.down()
    page.mouse.move(dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] / 2, steps=12)
    page.mouse.up()
    expect(page.locator("#map-notice")).to_contain_text("Moved under")


def test_attach_citation_check_support_and_open_in_viewer(map_stack, map_db, researcher, page):
    url = map_stack.url
    login(page, url, *researcher)
    map_id = _new_map(page, "Counterfactual explanations")
    page.locator(NODE).first.click()
    page.click("#btn-add-child")
    page.fill("#node-title", "Counterfactual explanations always prove causality")
    expect(_node(page, "always prove")).to_be_visible()
    page.fill("#map-search-q", "counterfactual explanations molecules")
    page.click("#map-search-go")
    hit = page.locator(".search-hit").first
    expect(hit).to_be_visible()
    hit.locator(".attach-hit").click()
    cit = page.locator("#node-citations .citation").first
    expect(cit).to_be_visible()
    expect(_node(page, "always prove").locator(".mm-badge")).to_contain_text("1")
    page.click("#btn-check-support")
    expect(cit.locator(".citation-support")).to_be_visible()
    expect(page.locator("#map-notice")).to_contain_text("the scores changed")
    page.click("#btn-check-support")  # again: the same score, and the status line says so
    expect(page.locator("#map-notice")).to_contain_text("no change")
    with session_scope(map_db) as db:
        c = db.exec(select(Citation).where(Citation.map_id == map_id)).one()
        assert c.origin == "user"
        assert c.support_label
        assert c.support_score is not None
        page_no = c.page
    # "Open at page" → the viewer at that page with the quote highlighted
    cit.locator(".open-at-page").click()
    expect(page).to_have_url(re.compile(rf"/documents/[0-9a-f]{{32}}\?page={page_no}&quote="))
    expect(page.locator("#viewer-page")).to_have_text(str(page_no))
    expect(page.locator("#pdf-view")).to_have_attribute("data-quote-found", "yes")
    expect(page.locator("#pdf-view")).to_have_attribute("data-rendered", re.compile(rf"^{page_no}@"), timeout=60_000)
    expect(page.locator("#pdf-view .pdf-box").first).to_be_in_viewport()


def test_maps_page_and_isolation(map_stack, map_db, researcher, page, browser):
    url = map_stack.url
    login(page, url, *researcher)
    first = _new_map(page, "Older map")
    page.goto(f"{url}/maps")
    second = _new_map(page, "Newer map")
    page.goto(f"{url}/maps")
    rows = page.locator(".map-row .map-open")
    expect(rows.first).to_have_text("Newer map")  # last edited first
    # rename
    page.locator(".map-row", has_text="Older map").locator(".map-rename").click()
    page.fill("#rename-input", "Renamed map")
    page.click("#rename-save")
    expect(rows.first).to_have_text("Renamed map")
    with session_scope(map_db) as db:
        assert db.get(Mindmap, first).title == "Renamed map"

    # another user cannot open it (UI and API)
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    p2 = ctx.new_page()
    p2.set_default_timeout(20_000)
    login(p2, url, *_user(map_stack, map_db, with_library=False))
    expect(p2.locator("#no-maps")).to_be_visible()
    p2.goto(f"{url}/maps/{first}")
    expect(p2.locator("#map-missing")).to_be_visible()
    assert p2.request.get(f"{url}/api/v1/mindmaps/{first}/revision").status == 404
    assert p2.request.get(f"{url}/api/v1/mindmaps/{first}/export.md").status == 404
    assert page.request.get(f"{url}/api/v1/mindmaps/{first}/export.md").status == 200
    ctx.close()

    # delete with confirm
    page.locator(".map-row", has_text="Newer map").locator(".map-delete").click()
    page.click("#map-delete-confirm")
    expect(page.locator(".map-row", has_text="Newer map")).to_have_count(0)
    with session_scope(map_db) as db:
        assert db.get(Mindmap, second) is None


def _boxes(page) -> list[dict]:
    page.wait_for_timeout(400)  # let React Flow measure and place every node
    return page.evaluate("""() => [...document.querySelectorAll('.react-flow__node')].map(e => {
        const r = e.getBoundingClientRect(); return {id: e.dataset.id, x: r.x, y: r.y, w: r.width, h: r.height}; })""")


def _flow(page) -> dict[str, dict]:
    """Each node's place on the canvas in flow coordinates (zoom-free), by title."""
    return page.evaluate(r"""() => Object.fromEntries([...document.querySelectorAll('.react-flow__node')].map(e => {
        const m = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec(e.style.transform);
        return [e.querySelector('.mm-title').textContent, {x: +m[1], y: +m[2], w: e.offsetWidth, h: e.offsetHeight}];
    }))""")


def _intersecting(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["id"], b["id"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    ]


def test_a_30_node_map_opens_readable_and_nodes_never_overlap(map_stack, map_db, page):
    """Opens on the root and first level at a readable zoom (titles ≥ 11 px on screen); no two
    node boxes intersect after Auto-layout nor after children are added to upper branches
    (long titles wrap to several lines)."""
    from bayes_app.maps import service

    email, password = _user(map_stack, map_db, with_library=False)
    long = "a claim whose wording is long enough to wrap over several lines of the node box"
    with session_scope(map_db) as db:
        from bayes_app.models import User

        uid = db.exec(select(User).where(User.email == email)).one().id
        m = service.create_map(db, uid, "Thirty", "What do thirty nodes look like?")
        root = service.root_of(db, m["id"])
        themes = []
        for t in range(6):
            theme, _ = service.write_agent_node(db, m["id"], root.id, "theme", f"Theme {t}", run_id=None)
            themes.append(theme.id)
            for c in range(4):
                service.write_agent_node(db, m["id"], theme.id, "claim", f"Claim {t}.{c}: {long}", run_id=None)
        service.auto_layout(db, uid, m["id"])
    login(page, map_stack.url, email, password)
    page.goto(f"{map_stack.url}/maps/{m['id']}")
    expect(page.locator(NODE)).to_have_count(31)
    page.wait_for_function("() => window.__mindmapReady")
    scale = page.evaluate("""() => new DOMMatrix(getComputedStyle(
        document.querySelector('.react-flow__viewport')).transform).a""")
    font = page.evaluate(
        "() => parseFloat(getComputedStyle(document.querySelector('.mm-kind-claim .mm-title')).fontSize)"
    )
    assert font * scale >= 11, (font, scale)
    expect(_node(page, "What do thirty nodes look like?")).to_be_in_viewport()  # the root…
    box = page.locator("#mindmap-canvas").bounding_box()
    seen = [b for b in _boxes(page) if b["y"] >= box["y"] and b["y"] + b["h"] <= box["y"] + box["height"]]
    assert len(seen) >= 3  # …and first-level themes beside it, readable rather than all 31 tiny
    assert not _intersecting(_boxes(page))

    # Auto-layout runs ELK in the browser with the measured boxes (the canvas also does on opening,
    # #40): the claim column starts just past the widest theme box (the fixed-size tidy tree kept
    # 300 px columns), nothing overlaps, and the layout is one undoable edit
    page.click("#btn-layout")
    page.wait_for_function(
        """() => { const p = {}; for (const e of document.querySelectorAll('.react-flow__node')) {
        const m = /translate\\(([-\\d.]+)px, ?([-\\d.]+)px\\)/.exec(e.style.transform);
        p[e.querySelector('.mm-title').textContent] = {x: +m[1], w: e.offsetWidth}; }
        const t = p['Theme 0'], c = Object.entries(p).find(([k]) => k.startsWith('Claim 0.0'));
        return t && c && c[1].x < t.x + 300 && c[1].x >= t.x + t.w; }""",
        timeout=15_000,
    )
    flow = _flow(page)
    theme = flow["Theme 0"]
    assert theme["x"] + theme["w"] + 20 <= flow["Claim 0.0: " + long]["x"] <= theme["x"] + theme["w"] + 120
    assert not _intersecting(_boxes(page))
    with session_scope(map_db) as db:
        from bayes_app.models import MapEdit

        last = db.exec(select(MapEdit).where(MapEdit.map_id == m["id"]).order_by(MapEdit.created_at.desc())).first()
        assert last.action == "auto_layout"
    # a child added to an upper branch: beside it, never on top (the map opens on its newest
    # branch, #40: Theme 2 may be a pan away, so it is clicked where it is)
    _node(page, "Theme 2").dispatch_event("click")
    page.locator("#mindmap-canvas").press("Tab")
    expect(page.locator(NODE)).to_have_count(32)
    page.keyboard.press("Escape")
    page.reload()
    expect(page.locator(NODE)).to_have_count(32)
    page.wait_for_function("() => window.__mindmapReady")
    page.click(".react-flow__controls-fitview")
    assert not _intersecting(_boxes(page))
