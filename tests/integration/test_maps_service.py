"""The maps service on SQLite and PostgreSQL: maps, node edits, undo, isolation, proposals,
citations with support checks, and the provenance rule for agent citations."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import select

from bayes_app.accounts import service as accounts
from bayes_app.maps import citations, service
from bayes_app.maps import undo as undo_log
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import Chunk, Citation, Document, MapEdit, MapNode, PageText


def user(db) -> str:
    u = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
    db.commit()
    return u.id


PAGE = (
    "Intro line.\nSmall language models can match larger ones on narrow tasks when they are "
    "fine-tuned on curated data. Training costs may fall by half. Other text follows here."
)


def library(db, owner: str) -> Chunk:
    """One document with one page and one chunk (the passage of the page text)."""
    doc = Document(
        owner_id=owner,
        filename="p.pdf",
        file_sha256=uuid.uuid4().hex,
        title="Small Models",
        authors=["Ada Lovelace", "Alan Turing"],
        year=2024,
        status="indexed",
    )
    db.add(doc)
    db.flush()
    db.add(PageText(document_id=doc.id, page=3, text=PAGE))
    start = PAGE.index("Small")
    ch = Chunk(
        id=uuid.uuid4().hex,
        document_id=doc.id,
        owner_id=owner,
        chunk_index=0,
        page=3,
        char_start=start,
        char_end=len(PAGE),
        text=PAGE[start:],
        content_hash="x",
    )
    db.add(ch)
    db.commit()
    return ch


def test_maps_crud_order_and_isolation(dbs):
    a, b = user(dbs), user(dbs)
    m1 = service.create_map(dbs, a, "  First   map ", "Do small models work?")
    m2 = service.create_map(dbs, a, "Second")
    assert m1["title"] == "First map"
    view = service.map_view(dbs, a, m1["id"])
    assert [n["kind"] for n in view["nodes"]] == ["question"]
    assert view["nodes"][0]["title"] == "Do small models work?"
    assert view["root_id"] == view["nodes"][0]["id"]
    service.rename_map(dbs, a, m1["id"], "Renamed")
    assert [m["title"] for m in service.list_maps(dbs, a)] == ["Renamed", "Second"]  # last edited first
    assert service.list_maps(dbs, b) == []
    for fn, args in [
        (service.map_view, ()),
        (service.rename_map, ("x",)),
        (service.delete_map, ()),
        (service.add_child, (view["root_id"],)),
        (service.undo, ()),
    ]:
        with pytest.raises(MapNotFound):
            fn(dbs, b, m1["id"], *args)
    with pytest.raises(MapError):
        service.create_map(dbs, a, "   ")
    service.delete_map(dbs, a, m2["id"])
    assert [m["id"] for m in service.list_maps(dbs, a)] == [m1["id"]]
    assert dbs.exec(select(MapNode).where(MapNode.map_id == m2["id"])).all() == []


def test_node_edits_and_undo(dbs):
    a = user(dbs)
    m = service.create_map(dbs, a, "Map")
    mid = m["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    rev0 = service.revision(dbs, a, mid)
    t1 = service.add_child(dbs, a, mid, root, "Theme one", kind="theme")
    t2 = service.add_child(dbs, a, mid, root, "Theme two", kind="theme")
    c1 = service.add_child(dbs, a, mid, t1["id"], "Claim A", kind="claim")
    s1 = service.add_sibling(dbs, a, mid, c1["id"], "Claim B")
    assert s1["kind"] == "claim"
    assert s1["parent_id"] == t1["id"]
    assert s1["order"] == c1["order"] + 1
    mid_sib = service.add_sibling(dbs, a, mid, c1["id"], "Claim A2")  # inserted between A and B
    kids = [n["title"] for n in service.map_view(dbs, a, mid)["nodes"] if n["parent_id"] == t1["id"]]
    assert kids == ["Claim A", "Claim A2", "Claim B"]
    assert service.revision(dbs, a, mid) > rev0

    service.update_node(
        dbs,
        a,
        mid,
        c1["id"],
        title="Claim A edited",
        body="Longer text\nline 2",
        position={"x": 5, "y": 6},
        collapsed=True,
    )
    n = service.get_node(dbs, a, mid, c1["id"])
    assert (n.title, n.body, n.pos_x, n.pos_y, n.collapsed) == ("Claim A edited", "Longer text\nline 2", 5, 6, True)
    with pytest.raises(MapError):
        service.update_node(dbs, a, mid, c1["id"], kind="bogus")
    with pytest.raises(MapError):
        service.update_node(dbs, a, mid, c1["id"], owner="me")

    # re-parent, refuse cycles and moving/deleting the root
    service.move_node(dbs, a, mid, t1["id"], t2["id"])
    assert service.get_node(dbs, a, mid, t1["id"]).parent_id == t2["id"]
    with pytest.raises(MapError, match="under itself"):
        service.move_node(dbs, a, mid, t2["id"], c1["id"])
    with pytest.raises(MapError):
        service.move_node(dbs, a, mid, root, t2["id"])
    with pytest.raises(MapError):
        service.delete_subtree(dbs, a, mid, root)

    # undo: the move, then the update
    assert service.undo(dbs, a, mid) == "move_node"
    assert service.get_node(dbs, a, mid, t1["id"]).parent_id == root
    assert service.undo(dbs, a, mid) == "update_node"
    n = service.get_node(dbs, a, mid, c1["id"])
    assert (n.title, n.collapsed) == ("Claim A", False)

    # delete a subtree and undo it: nodes, positions and order come back
    deleted = service.delete_subtree(dbs, a, mid, t1["id"])
    assert set(deleted) == {t1["id"], c1["id"], s1["id"], mid_sib["id"]}
    assert {x["id"] for x in service.map_view(dbs, a, mid)["nodes"]} == {root, t2["id"]}
    assert service.undo(dbs, a, mid) == "delete_subtree"
    kids = [n["title"] for n in service.map_view(dbs, a, mid)["nodes"] if n["parent_id"] == t1["id"]]
    assert kids == ["Claim A", "Claim A2", "Claim B"]

    pos = service.auto_layout(dbs, a, mid)
    assert pos[root][0] == 0
    assert pos[t1["id"]][0] > 0
    assert len(pos) == 6
    ys = [pos[x][1] for x in (c1["id"], mid_sib["id"], s1["id"])]
    assert ys == sorted(ys)
    assert len(set(ys)) == 3
    # undo all the way back to the bare map
    while service.undo(dbs, a, mid):
        pass
    assert [x["id"] for x in service.map_view(dbs, a, mid)["nodes"]] == [root]
    assert dbs.exec(select(MapEdit).where(MapEdit.map_id == mid, MapEdit.undone == False)).all() == []


def test_undo_log_keeps_the_newest_entries(dbs, monkeypatch):
    """Only the newest UNDO_KEEP edits of a map stay undoable; older ones are pruned."""
    monkeypatch.setattr(undo_log, "UNDO_KEEP", 3)
    a = user(dbs)
    mid = service.create_map(dbs, a, "Map")["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    titles = [f"Node {i}" for i in range(6)]
    for t in titles:
        service.add_child(dbs, a, mid, root, t)
    assert len(dbs.exec(select(MapEdit).where(MapEdit.map_id == mid)).all()) == 3
    while service.undo(dbs, a, mid):
        pass
    left = [n["title"] for n in service.map_view(dbs, a, mid)["nodes"] if n["kind"] != "question"]
    assert left == titles[:3]  # the three oldest edits were pruned: they can no longer be undone


def test_citations_support_and_rewrite(dbs):
    a, b = user(dbs), user(dbs)
    chunk = library(dbs, a)
    other = library(dbs, b)
    m = service.create_map(dbs, a, "Map")
    mid = m["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    node = service.add_child(dbs, a, mid, root, "Small models always match larger ones.", kind="claim")
    with pytest.raises(MapError, match="does not occur"):
        citations.attach_citation(dbs, a, mid, node["id"], chunk.id, "Large models always win.")
    with pytest.raises(MapNotFound):  # another user's passage
        citations.attach_citation(dbs, a, mid, node["id"], other.id)
    quote = "Small language models can match larger ones on narrow tasks when they are fine-tuned on curated data."
    c = citations.attach_citation(dbs, a, mid, node["id"], chunk.id, quote)
    assert c["page"] == 3
    assert c["title"] == "Small Models"
    assert c["authors"][0] == "Ada Lovelace"
    assert PAGE[c["char_start"] : c["char_end"]] == quote

    [scored] = citations.check_support(dbs, a, mid, node["id"])
    assert scored["support_label"] == "partial"  # "always" overstates "can … on narrow tasks"
    assert scored["suggested_rewrite"]
    assert "always" not in scored["suggested_rewrite"]
    after = citations.accept_rewrite(dbs, a, mid, scored["id"])
    assert after["title"] == scored["suggested_rewrite"]
    assert service.undo(dbs, a, mid) == "accept_rewrite"
    assert service.get_node(dbs, a, mid, node["id"]).title == "Small models always match larger ones."

    unrelated = service.add_child(dbs, a, mid, root, "Quantum computers factor primes.", kind="claim")
    citations.attach_citation(dbs, a, mid, unrelated["id"], chunk.id)  # the whole passage
    [bad] = citations.check_support(dbs, a, mid, unrelated["id"])
    assert bad["support_label"] == "unsupported"
    assert bad["support_score"] < 0.35

    view = service.map_view(dbs, a, mid)
    assert {x["node_id"] for x in view["citations"]} == {node["id"], unrelated["id"]}
    assert next(x for x in view["nodes"] if x["id"] == node["id"])["citation_count"] == 1
    # deleting the subtree removes its citations; undo restores them
    service.delete_subtree(dbs, a, mid, node["id"])
    assert dbs.exec(select(Citation).where(Citation.node_id == node["id"])).all() == []
    service.undo(dbs, a, mid)
    assert len(dbs.exec(select(Citation).where(Citation.node_id == node["id"])).all()) == 1


def test_agent_writes_relations_and_proposals(dbs):
    a = user(dbs)
    m = service.create_map(dbs, a, "Map")
    mid = m["id"]
    root = service.root_of(dbs, mid)
    t, _ = service.write_agent_node(dbs, mid, root.id, "theme", "Aspect", run_id="r1")
    c1, _ = service.write_agent_node(dbs, mid, t.id, "claim", "X raises Y.", run_id="r1")
    c2, _ = service.write_agent_node(dbs, mid, t.id, "counterpoint", "X lowers Y.", run_id="r1", after_id=c1.id)
    assert service.add_relation(dbs, mid, c2.id, c1.id, run_id="r1") is not None
    assert service.add_relation(dbs, mid, c1.id, c2.id, run_id="r1") is None  # idempotent
    view = service.map_view(dbs, a, mid)
    assert view["relations"][0]["kind"] == "contradicts"
    assert service.undo(dbs, a, mid) is None  # agent writes are not on the user's undo stack

    p = service.create_proposal(dbs, mid, "chapters", [{"title": "Chapter 1", "node_ids": [t.id]}], run_id="r2")
    assert service.map_view(dbs, a, mid)["proposals"][0]["id"] == p.id
    service.accept_proposal(dbs, a, mid, p.id)
    ch = dbs.exec(select(MapNode).where(MapNode.map_id == mid, MapNode.kind == "chapter")).one()
    assert ch.parent_id == root.id
    assert service.get_node(dbs, a, mid, t.id).parent_id == ch.id
    with pytest.raises(MapError):
        service.reject_proposal(dbs, a, mid, p.id)
    assert service.undo(dbs, a, mid) == "accept_proposal"
    assert service.get_node(dbs, a, mid, t.id).parent_id == root.id
    service.delete_map(dbs, a, mid)
    with pytest.raises(MapNotFound):
        service.write_agent_node(dbs, mid, root.id, "claim", "late", run_id="r1")


def test_removing_a_document_keeps_its_citations_marked_source_removed(dbs):
    from bayes_app.library import documents
    from bayes_app.maps import export

    a = user(dbs)
    chunk = library(dbs, a)
    m = service.create_map(dbs, a, "Map")
    mid = m["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    node = service.add_child(dbs, a, mid, root, "Small models can match larger ones.", kind="claim")
    quote = "Training costs may fall by half."
    citations.attach_citation(dbs, a, mid, node["id"], chunk.id, quote)
    documents.delete_document(dbs, a, chunk.document_id, reason="source_removed")
    dbs.commit()
    [c] = service.map_view(dbs, a, mid)["citations"]
    assert c["source_removed"] is True
    assert c["source_removed_reason"] == "source_removed"
    assert c["document_id"] is None
    assert c["title"] == "Small Models"
    assert c["quote"] == quote
    md = export.markdown(dbs, a, mid)
    assert "Small Models (source removed from the library)" in md
    assert "[1, p. 3]" in md
    assert next(x for x in service.map_view(dbs, a, mid)["nodes"] if x["id"] == node["id"])["citation_count"] == 1


def test_outline_numbers_and_inline_citations(dbs):
    """Numbers follow first use in the outline; `inline_citations` writes them author-year,
    drops numbers the outline doesn't have, and reports the ones used."""
    from bayes_app.maps import export

    a = user(dbs)
    chunk = library(dbs, a)
    mid = service.create_map(dbs, a, "Map")["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    first = service.add_child(dbs, a, mid, root, "Small models can match larger ones", kind="claim")
    second = service.add_child(dbs, a, mid, root, "Costs fall", kind="claim")
    citations.attach_citation(dbs, a, mid, first["id"], chunk.id, "Small language models can match larger ones")
    citations.attach_citation(dbs, a, mid, second["id"], chunk.id, "Training costs may fall by half.")
    o = export.outline(dbs, a, mid)
    assert "Small models can match larger ones [1]." in o.markdown
    assert "Costs fall [1]." in o.markdown
    assert o.labels == {1: "Lovelace & Turing 2024, p. 3"}  # one source: same document, same page
    assert len(o.citations[1]) == 2
    text, used = export.inline_citations("Small models suffice [1]. Costs fall [1, 7]. Unknown [9].", o)
    assert text == (
        "Small models suffice (Lovelace & Turing 2024, p. 3). Costs fall (Lovelace & Turing 2024, p. 3). Unknown."
    )
    assert used == [1]
    md = export.markdown(dbs, a, mid)  # the export: each claim's marker with its page
    assert "Small models can match larger ones [1, p. 3]." in md
    assert "Costs fall [1, p. 3]." in md


def test_nodes_added_between_layouts_never_land_on_another_branch(dbs):
    """After an auto-layout, children added anywhere (by hand or by an agent) get a free spot:
    no two stored node boxes intersect."""
    from bayes_app.maps.layout import overlaps

    a = user(dbs)
    mid = service.create_map(dbs, a, "Map")["id"]
    root = service.map_view(dbs, a, mid)["root_id"]
    themes = [service.add_child(dbs, a, mid, root, f"Theme {i}", kind="theme")["id"] for i in range(4)]
    for t in themes:
        for j in range(3):
            service.add_child(dbs, a, mid, t, f"Claim {j}", kind="claim")
    service.auto_layout(dbs, a, mid)
    for i, t in enumerate(themes):  # new children of the upper branches must not cover the lower ones
        for j in range(4):
            service.add_child(dbs, a, mid, t, f"Late {i}.{j}")
    service.write_agent_node(dbs, mid, themes[0], "claim", "Agent claim", run_id=None)
    pts = [(n["position"]["x"], n["position"]["y"]) for n in service.map_view(dbs, a, mid)["nodes"]]
    bad = [(p, q) for k, p in enumerate(pts) for q in pts[k + 1 :] if overlaps(p, q)]
    assert len(pts) == 1 + 4 + 12 + 16 + 1, bad[:3]
    assert not bad, bad[:3]
