"""Accepting a regrouping (restructure / chapters) on SQLite and PostgreSQL: claims MOVE into the
proposed grouping (no empty or duplicate themes afterwards, every claim once, citations kept), and
ONE undo step reverts all of it, including the canvas's layout that follows the accept."""

from __future__ import annotations

import uuid

from sqlmodel import select

from bayes_app.accounts import service as accounts
from bayes_app.maps import service
from bayes_app.models import Citation, MapEdit, MapNode


def _user(db) -> str:
    u = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
    db.commit()
    return u.id


def _snapshot(db, mid: str) -> dict:
    db.expire_all()
    nodes = {
        n.id: (n.parent_id, n.kind, n.title, n.order_index, n.pos_x, n.pos_y)
        for n in db.exec(select(MapNode).where(MapNode.map_id == mid))
    }
    cits = {c.id: c.node_id for c in db.exec(select(Citation).where(Citation.map_id == mid))}
    return {"nodes": nodes, "citations": cits}


def _map_with_themes(db, a: str) -> tuple[str, dict[str, str]]:
    mid = service.create_map(db, a, "Agents")["id"]
    root = service.root_of(db, mid)
    ids = {}
    for theme, claims in (("Crawler", ["C1", "C2", "C3"]), ("Selector", ["S1", "S2"]), ("Tool", ["T1"])):
        t, _ = service.write_agent_node(db, mid, root.id, "theme", theme, run_id="r1")
        ids[theme] = t.id
        for c in claims:
            n, _ = service.write_agent_node(
                db,
                mid,
                t.id,
                "claim",
                f"Claim {c}.",
                run_id="r1",
                citations=[
                    {
                        "document_id": None,
                        "chunk_id": None,
                        "page": 1,
                        "quote": f"Quote {c}.",
                        "char_start": 0,
                        "char_end": 9,
                        "agent": "researcher",
                        "source_title": "Paper",
                    }
                ],
            )
            ids[c] = n.id
    service.auto_layout(db, a, mid)
    return mid, ids


def test_accepting_restructure_moves_claims_and_one_undo_reverts_it_all(dbs):
    a = _user(dbs)
    mid, ids = _map_with_themes(dbs, a)
    before = _snapshot(dbs, mid)
    groups = [
        {"title": "Crawler", "node_ids": [ids["C1"], ids["C2"], ids["S1"]]},
        {"title": "Reward design", "node_ids": [ids["C3"], ids["S2"], ids["T1"], ids["C1"]]},  # C1 twice
        {"title": "crawler", "node_ids": []},
    ]
    p = service.create_proposal(dbs, mid, "restructure", groups, run_id="r2")
    assert [g["title"] for g in p.payload["groups"]] == ["Crawler", "Reward design"]
    service.accept_proposal(dbs, a, mid, p.id)
    after = _snapshot(dbs, mid)
    nodes = dict(after["nodes"])
    themes = {v[2]: i for i, v in nodes.items() if v[1] == "theme"}
    # the old themes are gone or reused: no empty theme, no two themes of one name
    assert sorted(themes) == ["Crawler", "Reward design"]
    assert themes["Crawler"] == ids["Crawler"]
    for t in themes.values():
        assert any(v[0] == t for v in nodes.values())
    claims = [i for i, v in nodes.items() if v[1] == "claim"]
    assert len(claims) == 6
    assert len(set(claims)) == 6  # every claim exactly once
    assert {nodes[ids[c]][0] for c in ("C1", "C2", "S1")} == {ids["Crawler"]}
    assert {nodes[ids[c]][0] for c in ("C3", "S2", "T1")} == {themes["Reward design"]}
    assert after["citations"] == before["citations"]  # citations stay on their claims
    # laid out again, no two nodes on one spot
    assert len({(v[4], v[5]) for v in nodes.values()}) == len(nodes)
    # the canvas then saves its own layout: it joins the regrouping's undo step
    service.set_positions(
        dbs,
        a,
        mid,
        {i: (float(k * 500), 7.0) for k, i in enumerate(nodes)},
        action="auto_layout",
        completes="accept_proposal",
    )
    assert service.undo(dbs, a, mid) == "accept_proposal"
    assert _snapshot(dbs, mid) == before
    assert service.undo(dbs, a, mid) == "auto_layout"  # the edit before the regrouping
    live = dbs.exec(select(MapEdit).where(MapEdit.map_id == mid, MapEdit.undone == False)).all()
    assert live == []


def test_a_layout_after_another_edit_stays_its_own_undo_step(dbs):
    a = _user(dbs)
    mid, ids = _map_with_themes(dbs, a)
    service.update_node(dbs, a, mid, ids["C1"], title="Claim C1, edited.")
    service.set_positions(dbs, a, mid, {ids["C1"]: (1.0, 2.0)}, action="auto_layout", completes="accept_proposal")
    assert service.undo(dbs, a, mid) == "auto_layout"
    assert service.undo(dbs, a, mid) == "update_node"


def test_chapters_assign_each_theme_once(dbs):
    a = _user(dbs)
    mid, ids = _map_with_themes(dbs, a)
    groups = [
        {"title": "Chapter 1: Crawler", "node_ids": [ids["Crawler"], ids["Selector"]]},
        {"title": "Chapter 2: Tool", "node_ids": [ids["Selector"], ids["Tool"]]},
    ]
    p = service.create_proposal(dbs, mid, "chapters", groups)
    service.accept_proposal(dbs, a, mid, p.id)
    dbs.expire_all()
    chapters = {
        n.title: n.id for n in dbs.exec(select(MapNode).where(MapNode.map_id == mid, MapNode.kind == "chapter"))
    }
    assert sorted(chapters) == ["Chapter 1: Crawler", "Chapter 2: Tool"]
    parent = {t: service.get_node(dbs, a, mid, ids[t]).parent_id for t in ("Crawler", "Selector", "Tool")}
    assert parent == {
        "Crawler": chapters["Chapter 1: Crawler"],
        "Selector": chapters["Chapter 1: Crawler"],
        "Tool": chapters["Chapter 2: Tool"],
    }


def test_a_theme_left_holding_only_an_emptied_sub_theme_goes_too_and_undo_brings_both_back(dbs):
    a = _user(dbs)
    mid, ids = _map_with_themes(dbs, a)
    root = service.root_of(dbs, mid)
    outer, _ = service.write_agent_node(dbs, mid, root.id, "theme", "Outer", run_id="r1")
    inner, _ = service.write_agent_node(dbs, mid, outer.id, "theme", "Inner", run_id="r1")
    x, _ = service.write_agent_node(dbs, mid, inner.id, "claim", "Claim X.", run_id="r1")
    before = _snapshot(dbs, mid)
    p = service.create_proposal(dbs, mid, "restructure", [{"title": "Crawler", "node_ids": [x.id]}])
    service.accept_proposal(dbs, a, mid, p.id)
    after = _snapshot(dbs, mid)["nodes"]
    assert outer.id not in after
    assert inner.id not in after
    assert after[x.id][0] == ids["Crawler"]
    assert service.undo(dbs, a, mid) == "accept_proposal"
    assert _snapshot(dbs, mid) == before


def test_a_regrouping_marks_the_synthesis_outdated_and_moves_it_last(dbs):
    a = _user(dbs)
    mid, ids = _map_with_themes(dbs, a)
    root = service.root_of(dbs, mid)
    note, _ = service.write_agent_node(dbs, mid, root.id, "note", "Synthesis: Agents", "Old summary.", run_id="r1")
    note.order_index = -1  # first, before the themes
    dbs.add(note)
    dbs.commit()
    before = _snapshot(dbs, mid)
    groups = [{"title": "All claims", "node_ids": [ids[c] for c in ("C1", "C2", "C3", "S1", "S2", "T1")]}]
    p = service.create_proposal(dbs, mid, "restructure", groups, run_id="r2")
    service.accept_proposal(dbs, a, mid, p.id)
    after = _snapshot(dbs, mid)["nodes"]
    under_root = sorted((v[3], v[2]) for v in after.values() if v[0] == root.id)
    assert under_root[-1][1] == "Outdated — Synthesis: Agents"  # marked, and after the new theme
    assert [t for _, t in under_root[:-1]] == ["All claims"]
    assert service.undo(dbs, a, mid) == "accept_proposal"
    assert _snapshot(dbs, mid) == before
