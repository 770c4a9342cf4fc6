"""More map runs in a real browser against the scripted model (shared `app_stack` + `fake_llm`),
and the subtree export links.

1. Chapters: the scripted grouping of the top-level themes shows as a preview card; Accept
   puts the themes under new chapter nodes (database, canvas, after a reload); the run is
   one "<kind> · <map title>" history row with its charged credits (ledger + Credits page).
2. Synthesize, for a selected node and for the whole map: the scripted prose streams into
   the run panel and is saved as a "Synthesis: …" note under the target, its [n] markers
   written author-year and the cited passages attached as the note's own citations; the model
   is sent the backend's own outline (numbered citations).
3. A message the scripted router sends to research (its cue words would answer from the
   map): "researched the library" is shown and new cited claims land on the canvas.
4. Export of the selected node's subtree (Markdown and DOCX links in the side panel): the
   node, its descendants, citations renumbered from [1] for the subtree, nothing else.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import docx
from playwright.sync_api import Page, expect
from sqlmodel import col, select

from bayes_app.agents import prompts
from bayes_app.agents.router import route_by_cues
from bayes_app.credits.pricing import display_credits, format_credits
from bayes_app.db import session_scope
from bayes_app.maps import export, service, synthesis
from bayes_app.models import Citation, LedgerEntry, MapNode, MapProposal, NodeKind
from tests.support import pdfs
from tests.support.browser import login
from tests.support.fake_openai import Script
from tests.support.maplib import (
    A_TEXT,
    HI,
    NODE,
    Q1,
    Q2A,
    Q2B,
    MapUser,
    assert_provenance,
    canvas_node,
    cite,
    claims_json,
    db_nodes,
    expect_cost,
    map_user,
    paced,
    passage_no,
    seed_map,
    shape,
    tree_edge,
)
from tests.support.procs import AppStack

B2 = "PaSa-7B also exceeds PaSa-GPT-4o in recall"


# ---- helpers ------------------------------------------------------------------------------------
def _open(page: Page, app_stack: AppStack, u: MapUser, map_id: str, nodes: int) -> None:
    """Sign in and open the map; wait for its `nodes` nodes on the canvas."""
    login(page, app_stack.url, u.email, u.password)
    page.goto(f"{app_stack.url}/maps/{map_id}")
    expect(page.locator(NODE)).to_have_count(nodes)


def _select(page: Page, title: str) -> None:
    canvas_node(page, title).click()
    expect(page.locator("#node-title")).to_have_value(title)


def _seed_cited(app_db_url: str, u: MapUser, m: str) -> dict[str, str]:
    """root ─ Selector theme ─ claim A [Q1]
            └ Recall theme ─ claim HI [Q2A]
                           └ Versus theme ─ claim B2 [Q2B]
    Titles without a final period (the export adds it after the markers). Returns the ids
    by name and the titles as "<name>_title"."""
    titles = {
        "root": f"How does PaSa work? {m}",
        "sel": f"Selector design {m}",
        "a": A_TEXT.rstrip("."),
        "rec": f"Recall results {m}",
        "hi": HI.rstrip("."),
        "vs": f"Versus PaSa-GPT-4o {m}",
        "b2": B2,
    }
    tree = [
        ("sel", "root", "theme"),
        ("a", "sel", "claim"),
        ("rec", "root", "theme"),
        ("hi", "rec", "claim"),
        ("vs", "rec", "theme"),
        ("b2", "vs", "claim"),
    ]
    with session_scope(app_db_url) as db:
        mp = service.create_map(db, u.id, f"PaSa map {m}", titles["root"])
        ids = {"map": mp["id"], "root": service.root_of(db, mp["id"]).id}
        for name, parent, kind in tree:
            node, _ = service.write_agent_node(db, mp["id"], ids[parent], kind, titles[name], run_id=None)
            ids[name] = node.id
        for name, quote in (("a", Q1), ("hi", Q2A), ("b2", Q2B)):
            cite(db, u.id, mp["id"], ids[name], u.doc_id, quote)
    return ids | {f"{k}_title": v for k, v in titles.items()}


def _markdown(app_db_url: str, u: MapUser, map_id: str, node_id: str | None = None) -> str:
    with session_scope(app_db_url) as db:
        return export.markdown(db, u.id, map_id, node_id)


def _references(md: str) -> str:
    """The outline's own reference list (the last section of export.markdown)."""
    return md[md.rindex("## References") :].strip()


def _markers(text: str) -> set[str]:
    """The source numbers of the markers, "[1]" and the exports' "[1, p. 3]" alike, as "[1]"."""
    return {f"[{n}]" for n in re.findall(r"\[(\d+)(?:\]|, pp?\. )", text)}


PAGED_ONE = r" \[1, pp?\. [\d, ]+\]\."  # an export's marker with the claim's page


# ---- 1. chapters: preview, accept, credits -----------------------------------------------------
def test_chapters_preview_accept_and_credit_row(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=False)
    titles = [
        f"How the Crawler searches {m}",
        f"How the Selector scores {m}",
        f"Training with RL {m}",
        f"Benchmarks {m}",
    ]
    map_id, map_title, root_id, themes, items = _map_of_themes(app_db_url, u.id, m, titles)
    assert sorted(items) == sorted(titles)
    num = {t: items.index(t) + 1 for t in titles}
    method, results = f"Part I: the method {m}", f"Part II: results {m}"
    fake_llm.script(
        paced(
            json.dumps(
                {
                    "groups": [
                        {"title": method, "nodes": [num[titles[0]], num[titles[1]], num[titles[2]]]},
                        {"title": results, "nodes": [num[titles[3]]]},
                    ]
                }
            ),
            2,
            match=f"ROLE: chapters\nNodes:\n1. {items[0]}\n",
        )
    )

    _open(page, app_stack, u, map_id, 9)
    before = shape(app_db_url, map_id)
    page.click("#btn-chapters")
    card = page.locator(".proposal")
    expect(card).to_have_count(1, timeout=60_000)
    expect(card).to_contain_text("Chapters")
    # the preview opens in a drawer beside the canvas: the canvas is not pushed down
    expect(page.locator("#proposal-drawer")).to_be_in_viewport()
    # (the drawer now sits in the page's flow above the canvas: it covers nothing, so the canvas may move)
    groups = card.locator(".proposal-group")
    expect(groups).to_have_count(2)
    expect(groups.nth(0)).to_contain_text(method)
    expect(groups.nth(0).locator("li")).to_have_text(titles[:3])
    expect(groups.nth(1)).to_contain_text(results)
    expect(groups.nth(1).locator("li")).to_have_text(titles[3:])
    op = expect_cost(page, app_db_url, u.id, "chapters")
    assert shape(app_db_url, map_id) == before  # a preview only

    card.locator(".proposal-accept").click()
    expect(card).to_have_count(0)
    expect(page.locator(NODE)).to_have_count(11)

    heads = _chaptered(app_db_url, map_id, root_id, themes, titles, method, results)
    with session_scope(app_db_url) as db:
        assert [p.status for p in db.exec(select(MapProposal).where(MapProposal.map_id == map_id))] == ["accepted"]
    for _ in range(2):  # on the canvas now, and after a reload
        expect(page.locator(f'{NODE} .mm-node[data-kind="chapter"]')).to_have_count(2)
        for t in titles:
            tree_edge(page, heads[method if t != titles[3] else results].id, themes[t])
        tree_edge(page, root_id, heads[method].id)
        page.reload()
        expect(page.locator(NODE)).to_have_count(11)
    _chaptered(app_db_url, map_id, root_id, themes, titles, method, results)

    _assert_credit_row(page, app_db_url, op, map_title)


def _map_of_themes(db_url: str, user_id: str, m: str, titles: list[str]) -> tuple[str, str, str, dict, list[str]]:
    """A map with one theme per title, each with a claim: (its id, its title, its root's id, theme
    ids by title, the root's children's titles as the run numbers them)."""
    with session_scope(db_url) as db:
        mp = service.create_map(db, user_id, f"PaSa chapters {m}", f"What is PaSa? {m}")
        map_id, map_title, root_id = mp["id"], mp["title"], service.root_of(db, mp["id"]).id
        themes = {}
        for t in titles:
            theme, _ = service.write_agent_node(db, map_id, root_id, "theme", t, run_id=None)
            service.write_agent_node(db, map_id, theme.id, "claim", f"A claim on {t}", run_id=None)
            themes[t] = theme.id
        items = [n.title for n in service._nodes(db, map_id) if n.parent_id == root_id]  # the run's numbering
    return map_id, map_title, root_id, themes, items


def _chaptered(
    db_url: str, map_id: str, root_id: str, themes: dict, titles: list[str], method: str, results: str
) -> dict[str, MapNode]:
    """The accepted chapters in the database: two under the root, the themes moved under them in order."""
    nodes = {n.id: n for n in db_nodes(db_url, map_id)}
    heads = {n.title: n for n in nodes.values() if n.kind == NodeKind.CHAPTER}
    assert set(heads) == {method, results}
    assert all(h.parent_id == root_id for h in heads.values())
    assert heads[method].order_index < heads[results].order_index
    assert [(nodes[themes[t]].parent_id, nodes[themes[t]].order_index) for t in titles] == [
        (heads[method].id, 0),
        (heads[method].id, 1),
        (heads[method].id, 2),
        (heads[results].id, 0),
    ]
    assert [n for n in nodes.values() if n.kind == NodeKind.CLAIM and nodes[n.parent_id].kind != NodeKind.THEME] == []
    return heads


def _assert_credit_row(page, db_url: str, op, map_title: str) -> None:
    """The run's credit row: one operation titled after the map, charged (spend = charge)."""
    with session_scope(db_url) as db:
        spent = db.exec(
            select(LedgerEntry).where(LedgerEntry.operation_id == op.id, LedgerEntry.entry_type == "spend")
        ).all()
    assert op.title == f"Chapters · {map_title}"
    assert sum(e.amount for e in spent) == -op.charged_credits
    page.click("#nav-credits")
    row = page.locator("#credits-history .history-row", has_text=op.title)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("SUCCEEDED")
    expect(row.locator("td").nth(2)).to_have_text(display_credits(op.charged_credits))
    expect(row.locator(".history-charged")).to_have_attribute("title", format_credits(op.charged_credits))


# ---- 2. synthesize: a node, then the whole map ----------------------------------------------------
def _synth_request(fake_llm, heading: str) -> dict:
    [req] = [
        r["body"]
        for r in fake_llm.chat_requests()
        if r["body"]["messages"][-1]["content"].startswith(f"ROLE: synthesize\n# {heading}\n")
    ]
    return req


def _synthesize(
    page: Page, app_db_url: str, u: MapUser, fake_llm, map_id: str, target_id: str, heading: str, prose: str
) -> MapNode:
    """Run Synthesize on what is selected (the node `target_id`, or nothing = the map); check the
    streamed text, the saved note, and the outline the model was given. Returns the note."""
    with session_scope(app_db_url) as db:
        o = export.outline(db, u.id, map_id, target_id)
    outline = o.markdown
    assert "## References" in outline
    assert "[1]" in outline
    fake_llm.script(paced(prose, 3, match=f"ROLE: synthesize\n# {heading}\n"))
    page.click("#btn-synthesize")
    text = page.locator("#run-text")
    expect(text).to_contain_text(" ".join(prose.split()[:3]), timeout=60_000)
    assert page.locator("#run-live").is_visible(), "the prose did not stream (the run was over)"
    expect(text).to_contain_text(prose)
    expect_cost(page, app_db_url, u.id, "synthesize")

    req = _synth_request(fake_llm, heading)
    assert req["messages"][0]["content"] == prompts.SYNTHESIZE
    assert req["messages"][-1]["content"] == f"ROLE: synthesize\n{outline}"  # numbered as the export does
    [note] = [n for n in db_nodes(app_db_url, map_id) if n.title == f"Synthesis: {heading}"]
    assert (note.kind, note.parent_id, note.created_by) == (NodeKind.NOTE, target_id, "agent")
    # saved with the cited passages as the note's own citations, its markers [k] numbering them
    # (the export renumbers them by paper); sentences without a checked marker are left out
    summary, _dropped, _lost = synthesis.from_prose(prose, o)
    assert note.body == summary.text
    assert summary.citations
    with session_scope(app_db_url) as db:
        cits = db.exec(select(Citation).where(Citation.node_id == note.id).order_by(col(Citation.created_at))).all()
    assert [(c.page, c.quote) for c in cits] == [(c.page, c.quote) for c in summary.citations]
    expect(canvas_node(page, note.title)).to_have_count(1)
    expect(canvas_node(page, note.title).locator(".mm-badge")).to_have_text(f"❝ {len(cits)}")
    expect(canvas_node(page, note.title).locator(".mm-node")).to_have_attribute("data-kind", "note")
    tree_edge(page, target_id, note.id)
    return note


def test_synthesize_node_and_whole_map(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=True)
    ids = _seed_cited(app_db_url, u, m)
    map_id = ids["map"]
    _open(page, app_stack, u, map_id, 7)

    # the selected node: its subtree's citations are numbered from [1]
    _select(page, ids["rec_title"])
    prose = f"Against Google with GPT-4o, PaSa-7B gains 37.78% recall@20 [1], and it also beats PaSa-GPT-4o [1]. {m}"
    note = _synthesize(page, app_db_url, u, fake_llm, map_id, ids["rec"], ids["rec_title"], prose)
    _select(page, note.title)
    expect(page.locator("#node-body")).to_have_value(note.body)
    expect(page.locator("#node-body")).to_have_value(re.compile(r"recall@20 \[1\]"))

    # the whole map (nothing selected): the first synthesis is part of the outline now
    page.click("#node-close")
    expect(page.locator("#node-panel")).to_have_count(0)
    prose2 = f"PaSa trains the Selector as a reward model [1], and PaSa-7B wins on recall [1]. {m}"
    whole = _synthesize(page, app_db_url, u, fake_llm, map_id, ids["root"], ids["root_title"], prose2)
    expect(page.locator("#run-text")).not_to_contain_text(prose)  # a new run's text only
    # one paper, one number [1] in the outline: each marker of the saved text points at the
    # passage of the claim its clause states
    with session_scope(app_db_url) as db:
        page_of = {c.node_id: c.page for c in db.exec(select(Citation).where(Citation.map_id == map_id))}
        own = db.exec(select(Citation).where(Citation.node_id == whole.id).order_by(col(Citation.created_at))).all()
    sel, rec = page_of[ids["a"]], page_of[ids["hi"]]
    k_sel = int(re.search(r"as a reward model \[(\d+)\]", whole.body).group(1))
    k_rec = int(re.search(r"wins on recall \[(\d+)\]", whole.body).group(1))
    assert (own[k_sel - 1].page, own[k_rec - 1].page) == (sel, rec)
    page.reload()
    expect(page.locator(NODE)).to_have_count(9)
    expect(canvas_node(page, whole.title)).to_have_count(1)


# ---- 3. a message routed to research -----------------------------------------------------------
def test_message_routed_to_research(app_stack, page, make_user, app_db_url, fake_llm):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=True)
    map_id, _theme_id, _ids = seed_map(app_db_url, u.id, m)
    q = f"What do the benchmarks tell us about recall {m}"
    assert route_by_cues(q, map_has_claims=True) == "answer"  # only the router's reply makes it research
    a_title, b_title, c_title = f"Decision order {m}", f"Recall against baselines {m}", f"Unanswered aspect {m}"
    queries = {
        a_title: pdfs.PASA_P7_PHRASE,
        b_title: "PaSa-7B surpasses the best Google-based baseline recall@20",
        c_title: "zebra migration patterns in the Serengeti",
    }
    n1, seen = passage_no(app_stack, u.headers, app_db_url, queries[a_title], Q1, set())
    n2, _ = passage_no(app_stack, u.headers, app_db_url, queries[b_title], Q2A, seen)
    fake_llm.script(
        Script.reply(json.dumps({"route": "research"}), match=f"ROLE: router\nMessage: {q}"),
        Script.reply(
            json.dumps({"aspects": [{"title": t, "query": x} for t, x in queries.items()]}),
            match=f"ROLE: planner\nQuestion: {q}",
        ),
        paced(claims_json((A_TEXT, Q1, n1)), 2, match=f"ASPECT: {a_title}\n"),
        Script.reply(
            json.dumps({"scores": [{"claim": 1, "support": 0.9}], "contradictions": []}),
            match=f"1. {A_TEXT}\n   quote:",
        ),
        paced(claims_json((HI, Q2A, n2)), 2, match=f"ASPECT: {b_title}\n"),
        Script.reply(
            json.dumps({"scores": [{"claim": 2, "support": 0.85}], "contradictions": []}), match=f"2. {HI}\n   quote:"
        ),
    )  # aspect C: the default "OK" (no claims), researched 3 times

    _open(page, app_stack, u, map_id, 6)
    page.fill("#message-input", q)
    page.click("#btn-send")
    expect(page.locator("#run-route")).to_have_text("researched the library", timeout=60_000)
    expect(canvas_node(page, a_title)).to_be_visible(timeout=60_000)
    expect(canvas_node(page, A_TEXT)).to_be_visible(timeout=30_000)
    expect(canvas_node(page, HI)).to_be_visible(timeout=30_000)
    expect_cost(page, app_db_url, u.id, "message")

    nodes = {n.title: n for n in db_nodes(app_db_url, map_id)}
    root = next(n for n in nodes.values() if n.parent_id is None)
    assert len(nodes) == 6 + 4  # two themes, two claims (C found nothing: no empty theme)
    assert c_title not in nodes
    assert all(nodes[t].parent_id == root.id and nodes[t].kind == NodeKind.THEME for t in (a_title, b_title))
    assert (nodes[A_TEXT].parent_id, nodes[HI].parent_id) == (nodes[a_title].id, nodes[b_title].id)
    with session_scope(app_db_url) as db:
        assert assert_provenance(db, map_id) == 2
    for _ in range(2):  # as the run left them, and after a reload
        for claim, theme in ((A_TEXT, a_title), (HI, b_title)):
            expect(canvas_node(page, claim).locator(".mm-badge")).to_have_text("❝ 1")
            tree_edge(page, nodes[theme].id, nodes[claim].id)
        page.reload()
        expect(page.locator(NODE)).to_have_count(10)
    bodies = [r["body"]["messages"][-1]["content"] for r in fake_llm.chat_requests()]
    assert sum(f"ASPECT: {c_title}\n" in b for b in bodies) == 3


# ---- 4. export a subtree -------------------------------------------------------------------------
def _download(page: Page, link: str) -> Path:
    with page.expect_download() as dl:
        page.click(link)
    return Path(dl.value.path())


def test_export_subtree_markdown_and_docx(app_stack, page, make_user, app_db_url):
    m = uuid.uuid4().hex[:6]
    u = map_user(app_stack, make_user, app_db_url, paper=True)
    ids = _seed_cited(app_db_url, u, m)
    map_id = ids["map"]
    _open(page, app_stack, u, map_id, 7)
    _select(page, ids["rec_title"])
    expect(page.locator("#export-node-md")).to_have_attribute(
        "href", f"/api/v1/mindmaps/{map_id}/export.md?node_id={ids['rec']}&style=apa"
    )

    md = _download(page, "#export-node-md").read_text()
    assert md == _markdown(app_db_url, u, map_id, ids["rec"])
    assert md.startswith(f"# {ids['rec_title']}\n")
    assert re.search(re.escape(ids["hi_title"]) + PAGED_ONE, md)
    assert f"## {ids['vs_title']}\n" in md
    assert f"{B2} [" in md
    for other in ("root_title", "sel_title", "a_title"):
        assert ids[other] not in md, other
    refs = _references(md).splitlines()[2:]
    assert [r.split(".")[0] for r in refs] == [str(i) for i in range(1, len(refs) + 1)]
    assert len(refs) == 1  # one entry per paper; the pages are at the markers ("[1, p. 3]")
    assert _markers(md) == {f"[{i}]" for i in range(1, len(refs) + 1)}
    whole = _markdown(app_db_url, u, map_id)  # one paper: [1] throughout the whole map
    assert re.search(re.escape(ids["a_title"]) + PAGED_ONE, whole)
    assert re.search(re.escape(ids["hi_title"]) + PAGED_ONE, whole)
    assert _download(page, "#export-md").read_text() == whole  # the toolbar's link: the whole map

    doc = docx.Document(str(_download(page, "#export-node-docx")))
    paras = [p.text for p in doc.paragraphs if p.text.strip()]
    assert paras[0] == ids["rec_title"]
    assert ids["vs_title"] in paras
    assert any(re.match(re.escape(ids["hi_title"]) + PAGED_ONE, p) for p in paras)
    assert not any(ids[k] in p for p in paras for k in ("root_title", "sel_title", "a_title"))
    assert "References" in paras
    assert any(p.startswith("[1] ") for p in paras)
