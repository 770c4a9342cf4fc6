"""The map as a reading surface, at 1440×900 and 390×844, against the whole app (offline model):
canvas text stays readable after a run, an edit and on reopening; the outline (an ARIA tree)
edits the map live across two tabs; the proposal drawer collapses to a badge that survives a
reload and covers nothing; on a phone the node panel is a bottom sheet in view."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.maps import service
from bayes_app.models import MapEdit, MapNode, MapProposal, User
from tests.browser.test_maps_ui import _user
from tests.support.browser import login
from tests.support.procs import AppStack, stack_env, stack_port

NODE = ".react-flow__node"
ROW = '#map-outline [role="treeitem"]'
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}

# Its own app (see test_maps_ui.py for why an own stack and browser per module).
pytestmark = pytest.mark.stack
expect.set_options(timeout=20_000)  # 8 helpers share 2 cores: a page can take seconds to settle


@pytest.fixture(scope="module")
def browser():
    from tests.support.browser import chromium

    yield from chromium()


@pytest.fixture(scope="module")
def map_stack(tmp_path_factory, redis_server):
    data_dir = Path(tmp_path_factory.mktemp("mapread"))
    port = stack_port()
    env = stack_env(
        data_dir,
        port,
        REDIS_URL=redis_server.url_db(4),
        BAYES_ADMIN_EMAIL="root@example.com",
        BAYES_ADMIN_PASSWORD="Xk4-" + uuid.uuid4().hex[:12],
        BAYES_DEMO="0",
        BAYES_OFFLINE_WORD_DELAY_MS="5",
    )
    stack = AppStack(data_dir=data_dir, env=env, port=port).start()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def map_db(map_stack) -> str:
    return f"sqlite:///{map_stack.data_dir / 'bayes.db'}"


@pytest.fixture(scope="module")
def researcher(map_stack, map_db) -> tuple[str, str]:
    return _user(map_stack, map_db, with_library=True)


def _page(browser, size: str):
    w, h = SIZES[size]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    return ctx, page


def _uid(map_db: str, email: str) -> str:
    with session_scope(map_db) as db:
        return db.exec(select(User).where(User.email == email)).one().id


def _new_map(page, title: str) -> str:
    page.fill("#new-map-title", title)
    page.click("#new-map")
    expect(page).to_have_url(re.compile(r"/maps/[0-9a-f]{32}$"))
    expect(page.locator("#view-switch")).to_be_visible()
    return page.url.rsplit("/", 1)[1]


def _seeded_map(map_stack, map_db, page, email: str, title: str) -> tuple[str, int]:
    """A map with earlier reading in it (a theme and three notes under its question), opened
    in `page`: with the run's nodes it is too big to fit readably on either screen whatever
    the run finds. Returns (map id, its node count)."""
    with session_scope(map_db) as db:
        uid = _uid(map_db, email)
        m = service.create_map(db, uid, title, title)
        theme = service.add_child(db, uid, m["id"], service.root_of(db, m["id"]).id, "Earlier reading")
        for k in range(3):
            service.add_child(db, uid, m["id"], theme["id"], f"A note from earlier reading, number {k + 1}")
    page.goto(f"{map_stack.url}/maps/{m['id']}")
    expect(page.locator("#view-switch")).to_be_visible()
    return m["id"], 5


def _min_text_px(page) -> float:
    """The smallest on-screen size of any text on a canvas node (CSS px × the canvas zoom)."""
    return page.evaluate("""() => {
        const z = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
        const els = document.querySelectorAll('.react-flow__node .mm-node, .react-flow__node .mm-node *');
        let m = Infinity;
        for (const e of els) {
          if (![...e.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim())) continue;
          m = Math.min(m, parseFloat(getComputedStyle(e).fontSize) * z);
        }
        return m; }""")


def _inside(page, selector: str, box_sel: str = "#mindmap-canvas") -> int:
    """How many `selector` elements lie wholly inside `box_sel`."""
    return page.evaluate(
        """([s, b]) => { const c = document.querySelector(b).getBoundingClientRect();
        return [...document.querySelectorAll(s)].filter((e) => { const r = e.getBoundingClientRect();
          return r.width > 0 && r.left >= c.left - 1 && r.top >= c.top - 1 && r.right <= c.right + 1
                 && r.bottom <= c.bottom + 1; }).length; }""",
        [selector, box_sel],
    )


def _in_canvas(page, locator) -> bool:
    b, c = locator.bounding_box(), page.locator("#mindmap-canvas").bounding_box()
    return (
        b is not None
        and b["x"] >= c["x"] - 1
        and b["y"] >= c["y"] - 1
        and b["x"] + b["width"] <= c["x"] + c["width"] + 1
        and b["y"] + b["height"] <= c["y"] + c["height"] + 1
    )


def _wait_layout_saved(map_db: str, map_id: str, after: int = 0) -> None:
    deadline = time.time() + 30
    while time.time() < deadline:
        with session_scope(map_db) as db:
            n = len(db.exec(select(MapEdit).where(MapEdit.map_id == map_id, MapEdit.action == "auto_layout")).all())
        if n > after:
            return
        time.sleep(0.3)
    raise AssertionError("the layout after the run was never saved")


@pytest.mark.parametrize("size", list(SIZES))
def test_text_readable_after_a_run_an_edit_and_on_reopen(map_stack, map_db, researcher, browser, size):
    ctx, page = _page(browser, size)
    login(page, map_stack.url, *researcher)
    question = "How are molecular prediction models explained?"
    map_id, seeded = _seeded_map(map_stack, map_db, page, researcher[0], question)
    if size == "phone":  # a phone opens the outline; it grows live with the run
        expect(page.locator("#view-outline")).to_have_attribute("data-state", "on")
        expect(page.locator(ROW)).to_have_count(seeded)
        page.click("#btn-phone-actions")  # a phone's runs are in its one Actions menu (#40)
        page.click("#m-research")
        expect(page.locator("#run-live")).to_be_visible()
        expect(page.locator(ROW).nth(seeded + 2)).to_be_visible(timeout=60_000)
        expect(page.locator("#run-outcome")).to_contain_text("SUCCEEDED", timeout=180_000)
        page.click("#view-canvas")
    else:
        expect(page.locator("#view-canvas")).to_have_attribute("data-state", "on")
        page.click("#btn-research")
        expect(page.locator("#run-outcome")).to_contain_text("SUCCEEDED", timeout=180_000)
    if size == "desktop":  # the run's layout is the canvas's (a phone in the outline had none)
        _wait_layout_saved(map_db, map_id)
    page.wait_for_function("() => window.__mindmapReady")
    page.wait_for_timeout(800)  # the view's animation
    total = page.locator(NODE).count()
    assert total >= 10, total  # a map too big to fit readably on either screen
    assert _min_text_px(page) >= 11
    # the root and (on a desktop) first-level nodes; a tall first level is a pan away at this zoom
    assert _inside(page, NODE) >= (1 if size == "phone" else 2)
    expect(page.locator(".mm-kind-question")).to_be_in_viewport()

    # an edit: a new theme under the root is panned into view, still readable
    page.locator(".mm-kind-question").click()
    if size == "phone":  # (the Actions menu: a phone has no edit toolbar over the canvas)
        page.click("#node-close")
        page.click("#btn-phone-actions")
        page.click("#m-add-child")
    else:
        page.click("#btn-add-child")
    expect(page.locator(NODE)).to_have_count(total + 1)
    page.fill("#node-title", "A theme added by hand")
    node = page.locator(NODE, has_text="A theme added by hand")
    expect(node.locator(".mm-kind-theme")).to_have_count(1)  # under the root: a theme, not a note
    page.wait_for_timeout(600)
    assert _in_canvas(page, node)
    assert _min_text_px(page) >= 11

    # reopening: the question and (with room) the newest branch, readable (#40)
    page.goto(f"{map_stack.url}/maps/{map_id}")
    page.wait_for_function("() => window.__mindmapReady")
    page.wait_for_timeout(300)
    assert _min_text_px(page) >= 11
    assert _inside(page, ".mm-kind-question") == 1
    assert _inside(page, ".mm-kind-theme") >= (0 if size == "phone" else 1)
    # Fit stays available: the whole map, however small
    if size == "phone":
        page.click("#btn-phone-actions")
        page.click("#m-fit")
    else:
        page.click("#btn-fit")
    page.wait_for_timeout(500)
    assert _inside(page, NODE) == page.locator(NODE).count()
    ctx.close()


def test_outline_edits_live_across_two_tabs(map_stack, map_db, browser):
    email, password = _user(map_stack, map_db, with_library=False)
    ctx, page = _page(browser, "desktop")
    login(page, map_stack.url, email, password)
    map_id = _new_map(page, "Outlined by keyboard")
    page.click("#view-outline")  # (no canvas: no layouts saved between the edits and the undo)
    rows = page.locator(ROW)
    expect(rows).to_have_count(1)
    expect(page.locator('#map-outline[role="tree"]')).to_be_visible()
    root = rows.first
    expect(root).to_have_attribute("aria-level", "1")
    root.click()
    expect(root).to_have_attribute("aria-selected", "true")
    expect(root).to_be_focused()

    _add_row(page, "Shift+Enter", "Alpha")
    _add_row(page, "Enter", "Beta")
    _add_row(page, "Enter", "Gamma")
    assert _titles(page) == [("1", "Outlined by keyboard"), ("2", "Alpha"), ("2", "Beta"), ("2", "Gamma")]
    expect(page.locator(ROW, has_text="Alpha")).to_have_class(re.compile("ol-kind-theme"))
    expect(root).to_have_attribute("aria-expanded", "true")

    # a second tab, on a phone: the outline is its default view, and it follows tab one live
    ctx2, p2 = _page(browser, "phone")
    login(p2, map_stack.url, email, password)
    p2.goto(f"{map_stack.url}/maps/{map_id}")
    expect(p2.locator(ROW)).to_have_count(4)
    expect(p2.locator(NODE)).to_have_count(0)  # no canvas until asked for

    _keyboard_moves(page, p2)
    _rename_delete_undo(page, p2)
    _phone_edits(page, p2)

    with session_scope(map_db) as db:
        nodes = {n.title: n for n in db.exec(select(MapNode).where(MapNode.map_id == map_id))}
    assert nodes["Beta"].order_index < nodes["Gamma renamed"].order_index < nodes["Alpha from the phone"].order_index
    assert {n.kind for t, n in nodes.items() if t != "Outlined by keyboard"} == {"theme"}
    ctx2.close()
    ctx.close()


def _add_row(page, key: str, title: str) -> None:
    """A node added by a key (Enter: a sibling, Shift+Enter: a child), named in place."""
    rows = page.locator(ROW)
    n = rows.count()
    page.keyboard.press(key)
    expect(rows).to_have_count(n + 1)
    expect(page.locator(".ol-rename")).to_be_focused()
    page.keyboard.type(title)
    page.keyboard.press("Enter")
    expect(page.locator(ROW, has_text=title)).to_have_count(1)


def _titles(p) -> list[tuple[str, str]]:
    return [(r.get_attribute("aria-level"), r.locator(".ol-title").inner_text()) for r in p.locator(ROW).all()]


def _keyboard_moves(page, p2) -> None:
    # arrows move the focus (and the selection); Alt+arrows move the node
    page.keyboard.press("ArrowUp")  # Gamma → Beta
    beta = page.locator(ROW, has_text="Beta")
    expect(beta).to_be_focused()
    expect(beta).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Alt+ArrowUp")
    expect(p2.locator(ROW).nth(1)).to_contain_text("Beta", timeout=5_000)
    # this tab shows its own move when its event's update arrives, which can be after the other
    # tab's broadcast (the first try of a loaded CI-like run read "Alpha" first here)
    expect(page.locator(ROW).nth(1)).to_contain_text("Beta", timeout=5_000)
    assert _titles(page)[1:] == [("2", "Beta"), ("2", "Alpha"), ("2", "Gamma")]
    page.keyboard.press("End")
    expect(page.locator(ROW, has_text="Gamma")).to_be_focused()
    page.keyboard.press("Alt+ArrowRight")  # indent under Alpha
    expect(p2.locator(ROW, has_text="Gamma")).to_have_attribute("aria-level", "3", timeout=5_000)
    expect(page.locator(ROW, has_text="Alpha")).to_have_attribute("aria-expanded", "true")
    # ← on a leaf goes to its parent; ← on an open node collapses it; → opens it again
    page.keyboard.press("ArrowLeft")
    alpha = page.locator(ROW, has_text="Alpha")
    expect(alpha).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(alpha).to_have_attribute("aria-expanded", "false")
    expect(page.locator(ROW, has_text="Gamma")).to_have_count(0)
    expect(p2.locator(ROW, has_text="Gamma")).to_have_count(0, timeout=5_000)
    page.keyboard.press("ArrowRight")
    expect(alpha).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowRight")  # into the first child
    expect(page.locator(ROW, has_text="Gamma")).to_be_focused()
    page.keyboard.press("Alt+ArrowLeft")  # outdent: right after Alpha
    expect(p2.locator(ROW, has_text="Gamma")).to_have_attribute("aria-level", "2", timeout=5_000)


def _rename_delete_undo(page, p2) -> None:
    # F2 renames in place
    page.keyboard.press("F2")
    expect(page.locator(".ol-rename")).to_be_focused()  # the editor is there before the keys go to it
    page.keyboard.press("Control+a")
    page.keyboard.type("Gamma renamed")
    page.keyboard.press("Enter")
    expect(page.locator(ROW, has_text="Gamma renamed")).to_have_count(1)
    expect(p2.locator(ROW, has_text="Gamma renamed")).to_have_count(1, timeout=5_000)
    # Delete, then Undo (live in both tabs)
    page.locator(ROW, has_text="Beta").click()
    page.keyboard.press("Delete")
    expect(page.locator(ROW, has_text="Beta")).to_have_count(0)
    expect(p2.locator(ROW, has_text="Beta")).to_have_count(0, timeout=5_000)
    expect(page.locator("#map-notice")).to_contain_text("Deleted")
    page.click("#ol-undo")
    expect(p2.locator(ROW, has_text="Beta")).to_have_count(1, timeout=5_000)
    expect(page.locator("#map-notice")).to_have_text("Undone: the deletion.")
    page.click("#btn-layout")  # the status line speaks of the latest action only
    expect(page.locator("#map-notice")).to_have_count(0)


def _phone_edits(page, p2) -> None:
    # the phone edits too: a tapped row opens the node panel as a bottom sheet, in view
    p2.locator(ROW, has_text="Alpha").click()
    sheet = p2.locator("#node-panel")
    expect(sheet).to_be_in_viewport()
    box = sheet.bounding_box()
    assert box["y"] + box["height"] <= SIZES["phone"][1] + 1
    assert box["y"] > 0
    p2.fill("#node-title", "Alpha from the phone")
    expect(page.locator(ROW, has_text="Alpha from the phone")).to_have_count(1, timeout=5_000)
    p2.click("#ol-down")  # the touch buttons do what the keys do
    expect(page.locator(ROW).nth(3)).to_contain_text("Alpha from the phone", timeout=5_000)
    assert p2.evaluate("() => document.documentElement.scrollWidth") <= SIZES["phone"][0]


@pytest.mark.parametrize("size", list(SIZES))
def test_proposal_drawer_collapses_to_a_badge_across_reload(map_stack, map_db, browser, size):
    email, password = _user(map_stack, map_db, with_library=False)
    uid = _uid(map_db, email)
    with session_scope(map_db) as db:
        m = service.create_map(db, uid, "Regroup me", "What should be grouped?")
        root = service.root_of(db, m["id"])
        ids = [
            service.write_agent_node(db, m["id"], root.id, "claim", f"Claim {k}", run_id=None)[0].id for k in range(4)
        ]
        prop = service.create_proposal(
            db,
            m["id"],
            "restructure",
            [{"title": "Group one", "node_ids": ids[:2]}, {"title": "Group two", "node_ids": ids[2:]}],
        ).id
        service.auto_layout(db, uid, m["id"])
    ctx, page = _page(browser, size)
    login(page, map_stack.url, email, password)
    page.goto(f"{map_stack.url}/maps/{m['id']}")
    # a pending proposal opens as a badge, not over the editor
    badge = page.locator("#proposal-badge")
    expect(badge).to_contain_text("1 proposal")
    expect(page.locator("#proposal-drawer")).to_have_count(0)
    badge.click()
    drawer = page.locator("#proposal-drawer")
    expect(drawer.locator(".proposal-group")).to_have_count(2)

    def uncovered(sel: str) -> bool:  # what the user would click there is that control itself
        return page.evaluate(
            """(s) => { const e = document.querySelector(s); e.scrollIntoView({block: 'center'});
            const r = e.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return !!hit && (e === hit || e.contains(hit)); }""",
            sel,
        )

    # (a phone has its runs and Fit in one Actions menu, #40)
    controls = ("#btn-phone-actions",) if size == "phone" else ("#btn-research", "#btn-restructure", "#btn-fit")
    for sel in (*controls, "#view-switch"):
        assert uncovered(sel), sel
    if size == "phone":  # (the phone's view: the outline)
        page.locator(ROW, has_text="Claim 0").click()
    else:
        page.locator(NODE, has_text="Claim 0").click()
    expect(page.locator("#node-panel")).to_be_visible()
    for sel in ("#node-close", "#node-title", "#node-kind"):
        assert uncovered(sel), sel
    page.click("#proposal-collapse")
    expect(drawer).to_have_count(0)
    badge.click()
    expect(drawer).to_be_visible()
    page.reload()  # still pending after a reload: as the badge
    expect(badge).to_be_visible()
    expect(drawer).to_have_count(0)
    badge.click()
    drawer.locator(".proposal-reject").click()
    expect(badge).to_have_count(0)
    expect(drawer).to_have_count(0)
    with session_scope(map_db) as db:
        assert db.get(MapProposal, prop).status == "rejected"
    ctx.close()
