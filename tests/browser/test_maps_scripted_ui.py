"""The mindmap in a real browser against the scripted model (shared `app_stack` + `fake_llm`).

1. Research: scripted planner / researcher / critic replies. Nodes appear on the canvas while
   the run is going (the scripts are paced with `tokens_per_s`); two opposing claims become
   sibling claim + counterpoint nodes joined by a `contradicts` edge; a claim with a
   fabricated quote never reaches the map; the run's credits show when it ends.
2. Restructure: a one-group reply is replaced by the balanced grouping by meaning in the preview;
   Reject leaves the map as it was; a second restructure + Accept regroups (database, canvas, and
   after a reload) and one Undo reverts it all.
3. Messages typed on the map: the scripted router's route decides (against the cue words),
   the route label is shown (answer from the map: streamed text; edit: the node added).

The researcher cites passages by number; the test finds each quote's number with the same
hybrid search the researcher runs (`GET /search`, same k, same exclusions)."""

from __future__ import annotations

import json
import re
import uuid

from playwright.sync_api import expect
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.maps import service
from bayes_app.models import MapNode, MapProposal, NodeRelation
from tests.support import pdfs
from tests.support.browser import login
from tests.support.fake_openai import Script
from tests.support.maplib import (
    A_TEXT,
    HI,
    LO,
    NODE,
    Q1,
    Q2A,
    Q2B,
    assert_provenance,
    canvas_node,
    claims_json,
    db_nodes,
    expect_cost,
    map_user,
    new_map,
    node_title,
    paced,
    passage_no,
    seed_map,
    shape,
    tree_edge,
)

FAKE_QUOTE = "PaSa guarantees perfect recall on every academic query ever asked."
FAKE_TEXT = "PaSa always finds every paper."


# ---- 1. research: live nodes, contradiction, provenance, credits ----------------------------------
def test_research_live_contradiction_and_fabricated_quote(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    seen_requests = len(fake_llm.chat_requests())  # the session's server also served other tests
    u = map_user(app_stack, make_user, app_db_url, paper=True)
    email, password, uid, h = u.email, u.password, u.id, u.headers
    a_title, b_title, c_title = f"Decision order {m}", f"Recall against baselines {m}", f"Unanswered aspect {m}"
    queries = {
        a_title: pdfs.PASA_P7_PHRASE,
        b_title: "PaSa-7B surpasses the best Google-based baseline recall@20",
        c_title: "zebra migration patterns in the Serengeti",
    }
    n1, seen = passage_no(app_stack, h, app_db_url, queries[a_title], Q1, set())
    n2a, _ = passage_no(app_stack, h, app_db_url, queries[b_title], Q2A, seen)
    n2b, _ = passage_no(app_stack, h, app_db_url, queries[b_title], Q2B, seen)
    question = f"How does PaSa search papers? {m}"
    plan = {"aspects": [{"title": t, "query": q} for t, q in queries.items()]}
    fake_llm.script(*_research_replies(question, plan, a_title, b_title, n1, n2a, n2b))
    # aspect C gets the default "OK" (not JSON → no claims), researched 3 times

    login(page, app_stack.url, email, password)
    map_id = new_map(page, question)
    expect(page.locator("#offline-badge")).to_have_count(0)
    page.click("#btn-research")
    expect(page.locator("#run-live")).to_be_visible()

    # live: A's theme with its claim, then B's theme and pair — no reload in between (a theme is
    # written with its first claim, so C, which finds nothing, never gets one)
    expect(canvas_node(page, a_title)).to_be_visible(timeout=60_000)
    expect(canvas_node(page, A_TEXT)).to_be_visible(timeout=30_000)
    assert canvas_node(page, "achieves higher recall").count() == 0, "B's claims came before A's was shown"
    assert canvas_node(page, b_title).count() == 0, "B's theme came before its claims"
    assert page.locator("#run-live").is_visible(), "the run ended before its nodes were seen live"
    expect(canvas_node(page, HI)).to_be_visible(timeout=30_000)
    expect(canvas_node(page, LO)).to_be_visible()

    # the run ends; its credits are shown
    expect_cost(page, app_db_url, uid, "build_map")
    expect(page.locator("#run-live")).to_have_count(0)

    # database: 3 cited claims (quotes in their chunks/pages), no fabricated claim, the pair
    with session_scope(app_db_url) as db:
        assert assert_provenance(db, map_id) == 3
        nodes = list(db.exec(select(MapNode).where(MapNode.map_id == map_id)))
        rel = db.exec(select(NodeRelation).where(NodeRelation.map_id == map_id)).one()
        rel_src, rel_tgt, rel_kind = rel.source_id, rel.target_id, rel.kind
    assert not any("always finds" in n.title for n in nodes)
    themes = {n.title: n for n in nodes if n.kind == "theme"}
    assert sorted(themes) == sorted([a_title, b_title])  # no empty theme for C
    expect(canvas_node(page, c_title)).to_have_count(0)
    hi = next(n for n in nodes if n.title == HI)
    lo = next(n for n in nodes if n.title == LO)
    a = next(n for n in nodes if n.title == A_TEXT)
    assert a.parent_id == themes[a_title].id
    assert a.kind == "claim"
    assert hi.parent_id == lo.parent_id == themes[b_title].id
    assert (hi.kind, lo.kind) == ("claim", "counterpoint")
    assert lo.order_index == hi.order_index + 1
    assert (rel_src, rel_tgt, rel_kind) == (lo.id, hi.id, "contradicts")

    _assert_canvas(page, hi, lo, a, themes[a_title].id, themes[b_title].id)
    page.reload()
    expect(page.locator(NODE)).to_have_count(len(nodes))
    _assert_canvas(page, hi, lo, a, themes[a_title].id, themes[b_title].id)
    # every scripted reply was used (none left to leak into other tests)
    bodies = [r["body"]["messages"][-1]["content"] for r in fake_llm.chat_requests()[seen_requests:]]
    assert sum(f"ASPECT: {c_title}\n" in b for b in bodies) == 3
    assert sum(b.startswith("ROLE: critic") and (A_TEXT in b) for b in bodies) == 2


def _research_replies(
    question: str, plan: dict, a_title: str, b_title: str, n1: int, n2a: int, n2b: int
) -> list[Script]:
    """The planner's plan; aspect A, a real quote and a fabricated one (~4 s); aspect B, two opposing
    claims (~8 s) the critic pairs (claim 1 = A's, on the map)."""
    return [
        Script.reply(json.dumps(plan), match=f"ROLE: planner\nQuestion: {question}"),
        # aspect A: a real quote and a fabricated one (~4 s)
        paced(claims_json((A_TEXT, Q1, n1), (FAKE_TEXT, FAKE_QUOTE, n1)), 4, match=f"ASPECT: {a_title}\n"),
        Script.reply(
            json.dumps({"scores": [{"claim": 1, "support": 0.9, "rewrite": None}], "contradictions": []}),
            match=f"1. {A_TEXT}\n   quote:",
        ),
        # aspect B: two opposing claims (~8 s), the critic pairs them (claim 1 = A's, on the map)
        paced(claims_json((HI, Q2A, n2a), (LO, Q2B, n2b)), 8, match=f"ASPECT: {b_title}\n"),
        Script.reply(
            json.dumps(
                {"scores": [{"claim": 2, "support": 0.95}, {"claim": 3, "support": 0.2}], "contradictions": [[2, 3]]}
            ),
            match=f"3. {LO}\n   quote:",
        ),
    ]


def _assert_canvas(page, hi: MapNode, lo: MapNode, a: MapNode, a_theme: str, b_theme: str) -> None:
    """The canvas: no fabricated claim; the claim and its counterpoint joined by `contradicts`; tree edges."""
    expect(canvas_node(page, "always finds")).to_have_count(0)
    expect(page.locator(f'{NODE} .mm-node[data-kind="counterpoint"]')).to_have_text(re.compile(re.escape(LO)))
    expect(page.locator(f'{NODE} .mm-node[data-kind="claim"]', has_text=HI)).to_have_count(1)
    contra = page.locator(".react-flow__edge.mm-edge-contradicts")
    try:
        expect(contra).to_have_count(1, timeout=10_000)
    except AssertionError:  # what the canvas has instead
        print(
            "edges:",
            page.evaluate(
                "() => Array.from(document.querySelectorAll('.react-flow__edge'))"
                ".map(e => e.getAttribute('class') + ' | ' + e.getAttribute('aria-label'))"
            ),
        )
        page.screenshot(path="/tmp/maptest-contradicts.png")
        raise
    expect(contra).to_have_attribute("aria-label", f"Edge from {lo.id} to {hi.id}")
    expect(contra).to_contain_text("contradicts")
    tree_edge(page, b_theme, hi.id)
    tree_edge(page, b_theme, lo.id)
    tree_edge(page, a_theme, a.id)


# ---- 2. restructure: preview, reject, accept, one undo ---------------------------------------------
def test_restructure_preview_reject_then_accept(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=False)
    email, password, uid = u.email, u.password, u.id
    map_id, theme_id, ids = seed_map(app_db_url, uid, m)
    with session_scope(app_db_url) as db:  # the numbering the restructure run lists the claims in
        items = [n.id for n in service._nodes(db, map_id) if n.kind in ("claim", "counterpoint")]
    num = {k: items.index(i) + 1 for k, i in ids.items()}
    listing = f"ROLE: restructure\nNodes:\n1. {node_title(app_db_url, items[0])}\n"
    titles = {k: node_title(app_db_url, i) for k, i in ids.items()}

    login(page, app_stack.url, email, password)
    page.goto(f"{app_stack.url}/maps/{map_id}")
    expect(page.locator(NODE)).to_have_count(6)
    before = shape(app_db_url, map_id)

    # a first proposal: the model puts everything in one group, which is not used; the preview
    # shows the balanced grouping by meaning instead (Crawler claims apart from Selector claims)
    _first_proposal_rejected(page, fake_llm, m, listing, titles, app_db_url, uid, map_id, before)
    card = page.locator(".proposal")
    groups = card.locator(".proposal-group")

    # a second proposal, the model's own two groups, accepted → two new themes with the claims
    # moved under them; the theme the move left empty is removed
    crawler, selector = f"Crawler {m}", f"Selector {m}"
    fake_llm.script(
        paced(
            json.dumps(
                {
                    "groups": [
                        {"title": crawler, "nodes": [num["c1"], num["c3"]]},
                        {"title": selector, "nodes": [num["c2"], num["c4"]]},
                    ]
                }
            ),
            2,
            match=listing,
        )
    )
    page.click("#btn-restructure")
    expect(card).to_have_count(1, timeout=60_000)
    expect(groups).to_have_count(2)
    expect(card.locator(".proposal-group", has_text=crawler).locator("li")).to_have_count(2)
    expect_cost(page, app_db_url, uid, "restructure")
    assert shape(app_db_url, map_id) == before
    card.locator(".proposal-accept").click()
    expect(card).to_have_count(0)
    expect(page.locator(NODE)).to_have_count(7)

    heads = _regrouped(app_db_url, map_id, crawler, selector, theme_id, ids)
    with session_scope(app_db_url) as db:
        statuses = sorted(p.status for p in db.exec(select(MapProposal).where(MapProposal.map_id == map_id)))
    assert statuses == ["accepted", "rejected"]
    for _ in range(2):  # on the canvas now, and after a reload
        for k, head in (("c1", crawler), ("c3", crawler), ("c2", selector), ("c4", selector)):
            tree_edge(page, heads[head].id, ids[k])
        expect(canvas_node(page, crawler)).to_have_count(1)
        page.reload()
        expect(page.locator(NODE)).to_have_count(7)
    expect(page.locator(".proposal")).to_have_count(0)
    _regrouped(app_db_url, map_id, crawler, selector, theme_id, ids)

    # ONE undo brings the map back as it was before the accept (the emptied theme included)
    page.click("#btn-undo")
    expect(page.locator(NODE)).to_have_count(6)
    expect(canvas_node(page, crawler)).to_have_count(0)
    assert shape(app_db_url, map_id) == before
    for k in ("c1", "c2", "c3", "c4"):
        tree_edge(page, theme_id, ids[k])


def _first_proposal_rejected(
    page, fake_llm, m: str, listing: str, titles: dict, db_url: str, uid: str, map_id: str, before: list[tuple]
) -> None:
    """A first proposal, previewed (balanced by meaning, charged, the map unchanged), then rejected."""
    fake_llm.script(
        paced(json.dumps({"groups": [{"title": f"Everything {m}", "nodes": [1, 2, 3, 4]}]}), 2, match=listing)
    )
    page.click("#btn-restructure")
    card = page.locator(".proposal")
    expect(card).to_have_count(1, timeout=60_000)
    groups = card.locator(".proposal-group")
    expect(groups).to_have_count(2)
    expect(card).not_to_contain_text(f"Everything {m}")
    for k in ("c1", "c2", "c3", "c4"):  # every claim in exactly one group
        expect(card.locator(".proposal-group li", has_text=titles[k])).to_have_count(1)
    for a, b in (("c1", "c3"), ("c2", "c4")):
        expect(groups.filter(has_text=titles[a]).filter(has_text=titles[b])).to_have_count(1)
    expect_cost(page, db_url, uid, "restructure")
    assert shape(db_url, map_id) == before  # a preview only
    expect(page.locator(NODE)).to_have_count(6)
    card.locator(".proposal-reject").click()
    expect(card).to_have_count(0)
    assert shape(db_url, map_id) == before
    with session_scope(db_url) as db:
        assert [p.status for p in db.exec(select(MapProposal).where(MapProposal.map_id == map_id))] == ["rejected"]
    expect(page.locator(NODE)).to_have_count(6)


def _regrouped(db_url: str, map_id: str, crawler: str, selector: str, theme_id: str, ids: dict) -> dict[str, MapNode]:
    """The accepted regrouping in the database: the two new themes under the root, the emptied one gone."""
    nodes = {n.id: n for n in db_nodes(db_url, map_id)}
    heads = {n.title: n for n in nodes.values() if n.title in (crawler, selector)}
    root = next(n for n in nodes.values() if n.parent_id is None)
    assert set(heads) == {crawler, selector}
    assert theme_id not in nodes
    assert all(hd.parent_id == root.id and hd.kind == "theme" for hd in heads.values())
    assert {nodes[ids[k]].parent_id for k in ("c1", "c3")} == {heads[crawler].id}
    assert {nodes[ids[k]].parent_id for k in ("c2", "c4")} == {heads[selector].id}
    return heads


# ---- 3. messages: the router's route decides and is shown ------------------------------------------
def test_message_routes_answer_and_edit(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=False)
    email, password, uid = u.email, u.password, u.id
    map_id, theme_id, ids = seed_map(app_db_url, uid, m)
    login(page, app_stack.url, email, password)
    page.goto(f"{app_stack.url}/maps/{map_id}")
    expect(page.locator(NODE)).to_have_count(6)

    # cue words would research ("find … evidence"); the scripted router answers from the map
    q = f"find more evidence about the Selector {m}"
    answer = f"The map says the Selector scores each paper [2] and is a reward model [4]. {m}"
    fake_llm.script(
        Script.reply(json.dumps({"route": "answer"}), match=f"ROLE: router\nMessage: {q}"),
        paced(answer, 3, match=f"\n\n{q}"),
    )
    page.fill("#message-input", q)
    page.click("#btn-send")
    expect(page.locator("#run-route")).to_have_text("answered from the map", timeout=60_000)
    expect(page.locator("#run-text")).to_contain_text(f"reward model [4]. {m}", timeout=30_000)
    expect_cost(page, app_db_url, uid, "message")
    expect(page.locator(NODE)).to_have_count(6)  # nothing researched or written
    assert len(db_nodes(app_db_url, map_id)) == 6
    [ans] = [
        r
        for r in fake_llm.chat_requests()
        if r["body"]["messages"][-1]["content"].endswith(q)
        and r["body"]["messages"][-1]["content"].startswith("Claims:")
    ]
    assert f"The Selector scores each paper {m}" in ans["body"]["messages"][-1]["content"]

    # no cue words for an edit; the scripted router says edit, the editor adds a note
    q2 = f"Could you note that the Selector matters most {m}"
    note = f"The Selector matters most {m}"
    fake_llm.script(
        Script.reply(json.dumps({"route": "edit"}), match=f"ROLE: router\nMessage: {q2}"),
        Script.reply(
            json.dumps({"ops": [{"op": "add", "kind": "note", "title": note, "under": f"Mixed bag {m}"}]}),
            match=f"ROLE: edit\n{q2}",
        ),
    )
    page.fill("#message-input", q2)
    page.click("#btn-send")
    expect(page.locator("#run-route")).to_have_text("edited the map", timeout=60_000)
    expect(canvas_node(page, note)).to_have_count(1, timeout=30_000)
    expect_cost(page, app_db_url, uid, "message")
    added = next(n for n in db_nodes(app_db_url, map_id) if n.title == note)
    assert added.parent_id == theme_id
    assert added.kind == "note"
    tree_edge(page, theme_id, added.id)
    page.reload()
    expect(page.locator(NODE)).to_have_count(7)
    expect(canvas_node(page, note)).to_have_count(1)
