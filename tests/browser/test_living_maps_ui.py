"""Living maps end to end on the whole app (real worker, offline model): a paper uploaded through
the API finishes indexing, the batch fires (the delayed Dramatiq message), the update run
proposes; the Maps page and the map show "1 new paper may change this map"; the preview lists
each claim with where it goes and from which paper; accepting the ticked items writes exactly
those. Screenshots at 1440×900 and 390×844 into docs/screenshots/living-*.png."""

from __future__ import annotations

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
from bayes_app.maps import service, updates
from bayes_app.models import MICRO, MapNode, MapProposal
from tests.integration.test_living_maps import AGENTS, _pdf
from tests.support.browser import login
from tests.support.procs import AppStack, stack_env, stack_port

pytestmark = pytest.mark.stack
expect.set_options(timeout=20_000)
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="module")
def browser():
    from tests.support.browser import chromium

    yield from chromium()


@pytest.fixture(scope="module")
def living_stack(tmp_path_factory, redis_server):
    data_dir = Path(tmp_path_factory.mktemp("living"))
    port = stack_port()
    env = stack_env(
        data_dir,
        port,
        REDIS_URL=redis_server.url_db(6),
        BAYES_ADMIN_EMAIL="root@example.com",
        BAYES_ADMIN_PASSWORD="Xk4-" + uuid.uuid4().hex[:12],
        BAYES_DEMO="0",
        BAYES_LIVING_BATCH_S="1",
    )
    stack = AppStack(data_dir=data_dir, env=env, port=port).start()
    yield stack
    stack.stop()


def test_a_new_paper_shows_a_badge_and_a_preview_accepted_in_part(living_stack, browser):
    db_url = f"sqlite:///{living_stack.data_dir / 'bayes.db'}"
    email, password = f"w{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    mid, other = _seeded_maps(db_url, email, password)
    with httpx.Client(base_url=living_stack.url + "/api/v1", timeout=60) as c:
        token = c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
        pdf = _pdf("LLM agents for academic paper search", AGENTS, 1)
        r = c.post(
            "/documents",
            files={"file": ("agents.pdf", pdf, "application/pdf")},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 202, r.text
    p = _update_proposal(db_url)
    assert p.map_id == mid
    assert p.map_id != other
    items = p.payload["items"]
    assert len(items) >= 2
    with session_scope(db_url) as db:
        before = {n.id for n in db.exec(select(MapNode).where(MapNode.map_id == mid))}

    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    login(page, living_stack.url, email, password)
    row_badge = page.locator(".map-new-papers")
    expect(row_badge).to_have_count(1)
    expect(row_badge).to_contain_text("1 new paper may change this map")
    page.screenshot(path=str(SHOTS / "living-maps-desktop.png"))
    row_badge.click()
    badge = page.locator("#new-papers-badge")
    expect(badge).to_contain_text("1 new paper may change this map")
    expect(page.locator("#watch-switch")).to_have_attribute("data-state", "checked")
    badge.click()
    drawer = page.locator("#proposal-drawer")
    rows = drawer.locator(".update-item")
    expect(rows).to_have_count(len(items))
    for k, it in enumerate(items):  # each claim, where it goes, from which paper
        expect(rows.nth(k)).to_contain_text(it["text"][:40])
        expect(rows.nth(k)).to_contain_text((it["document_title"] or "Untitled")[:20])
    expect(drawer.locator(".update-proposal")).to_contain_text("credits")
    page.screenshot(path=str(SHOTS / "living-preview-desktop.png"))

    _phone_preview(browser, living_stack.url, email, password, mid, len(items))

    rows.nth(0).locator(".update-pick").click()  # untick the first claim, accept the rest
    drawer.locator(".update-accept-some").click()
    expect(page.locator("#new-papers-badge")).to_have_count(0)
    expect(page.locator("#proposal-drawer")).to_have_count(0)
    with session_scope(db_url) as db:
        new = [n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.id not in before]
        assert db.get(MapProposal, p.id).status == "accepted"
    written = sorted(n.title for n in new if n.kind in ("claim", "counterpoint"))
    assert written == sorted(it["text"] for it in items[1:])

    # an accepted counterpoint from the new paper marks the older claim on the canvas and in its panel
    old = "A crawler agent follows references to find more papers."
    _accept_a_counterpoint(db_url, mid, p.payload["documents"][0]["id"], old)
    page.reload()
    mark = page.locator(".mm-challenged")
    expect(mark).to_have_count(1)
    page.locator(".react-flow__node", has_text=old).click()
    expect(page.locator(".challenged")).to_contain_text(
        "Contradicted by LLM agents study (evidence arrived 2026-11-20)"
    )
    page.screenshot(path=str(SHOTS / "living-superseded-desktop.png"))
    ctx.close()


def _seeded_maps(db_url: str, email: str, password: str) -> tuple[str, str]:
    """The user (20 credits) with a watched map of two themes and another map: (its id, the other's)."""
    with session_scope(db_url) as db:
        user = accounts.register(db, email, password)
        ledger.grant(db, user, 20 * MICRO, f"grant:{user.id}", "test")
        uid = user.id
        mid = service.create_map(db, uid, "Paper search agents", "How do LLM agents search for academic papers?")["id"]
        root = service.root_of(db, mid)
        for theme, claim in (
            ("Crawler and citation expansion", "A crawler agent follows references to find more papers."),
            ("Selector and ranking of papers", "A selector scores whether a paper matches the query."),
        ):
            t, _ = service.write_agent_node(db, mid, root.id, "theme", theme, run_id="seed")
            service.write_agent_node(db, mid, t.id, "claim", claim, run_id="seed")
        service.auto_layout(db, uid, mid)
        other = service.create_map(db, uid, "Reefs", "What causes coral reef bleaching?")["id"]
    return mid, other


def _update_proposal(db_url: str) -> MapProposal:
    """The one update proposal, once indexing, the batch and the update run (all in the worker) made it."""
    deadline = time.time() + 300
    while time.time() < deadline:  # indexing, the batch, the update run: all in the worker
        with session_scope(db_url) as db:
            props = list(db.exec(select(MapProposal).where(MapProposal.kind == "update")))
        if props:
            break
        time.sleep(1)
    else:
        raise AssertionError("no update proposal")
    (p,) = props
    return p


def _phone_preview(browser, url: str, email: str, password: str, mid: str, n_items: int) -> None:
    """On a phone: the badge on the map's row, the preview in the drawer, nothing wider than the screen."""
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    pp = phone.new_page()
    login(pp, url, email, password)
    expect(pp.locator(".map-new-papers")).to_contain_text("1 new paper")
    pp.screenshot(path=str(SHOTS / "living-maps-phone.png"))
    pp.goto(f"{url}/maps/{mid}")
    pp.locator("#new-papers-badge").click()
    expect(pp.locator("#proposal-drawer .update-item")).to_have_count(n_items)
    assert pp.evaluate("() => document.documentElement.scrollWidth") <= 390
    pp.screenshot(path=str(SHOTS / "living-preview-phone.png"))
    phone.close()


def _accept_a_counterpoint(db_url: str, mid: str, doc: str, old: str) -> None:
    """An update accepted whose counterpoint, from the new paper, contradicts the claim `old`."""
    with session_scope(db_url) as db:
        target = db.exec(select(MapNode).where(MapNode.map_id == mid, MapNode.title == old)).one()
        cit = {"document_id": doc, "chunk_id": None, "page": 1, "quote": "Citation expansion raised the recall"}
        item = {"action": "counter", "text": "Following references raised recall.", "document_id": doc}
        item.update(document_title="LLM agents study", citation=cit, target_id=target.id, parent_id=target.parent_id)
        docs = [{"id": doc, "title": "LLM agents study", "arrived_at": "2026-11-20T10:00:00+00:00"}]
        updates.accept_update(db, updates.create_update_proposal(db, mid, docs, [item], None), None)
