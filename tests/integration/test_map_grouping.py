"""The offline map pipeline over the bundled papers (real ingestion, embeddings, index process,
Redis, SQLite; runs executed by the executor), checked against the grouping and synthesis
targets: no two themes share a name and none sits under a node of its own name, no empty theme
after any run or accepted proposal, Restructure moves every claim exactly once into balanced
groups and one undo reverts it, chapters hold each theme once, every theme name (and synthesis
heading) is a noun phrase of its claims whose every word is in two of them, and the synthesis is
at most 250 words, its markers point at its own citations and at the passage each sentence
quotes, and the export shows it once with one entry per paper, no double escaping and no marker
that follows no statement."""

from __future__ import annotations

import pytest
from sqlmodel import select

from bayes_app.llm.offline import OfflineProvider
from bayes_app.maps import export, service
from bayes_app.maps.layout import overlaps
from bayes_app.models import Citation, MapNode, Run
from tests.support import pdfs
from tests.support.mapchecks import (
    export_markdown,
    grouping,
    markers_off_quote,
    name_checks,
    synthesis_body,
    synthesis_headings,
    theme_claims,
)
from tests.support.maplab import MapLab

QUESTIONS = [
    "How do LLM agents search for academic papers?",
    "How can we explain molecular property prediction models?",
]


@pytest.fixture(scope="module")
def lab():
    with MapLab([pdfs.PASA, pdfs.REVIEW, pdfs.MEDIA]) as lab:
        yield lab


def _nodes(lab, mid):
    with lab.sessions() as db:
        return list(db.exec(select(MapNode).where(MapNode.map_id == mid)))


def _assert_grouping(lab, mid) -> dict:
    nodes = _nodes(lab, mid)
    g = grouping(nodes)
    assert g["repeated_names"] == 0, g
    assert g["nested_same_name"] == 0, g
    assert g["empty_themes"] == 0, g
    _assert_names(theme_claims(nodes))
    return g


def _assert_names(named: list[tuple[str, list[str]]]) -> None:
    """Every name is a phrase of its claims, each word in two of them (in its one claim), no
    dangling verb or function word at either end, never "Other findings"."""
    n = name_checks(named)
    bad = [(t, c) for t, c in named if name_checks([(t, c)])["held"] == 0]
    assert n["names"] == len(named), (n["examples"], bad)
    assert n["held"] == n["names"], (n["examples"], bad)
    off = [(t, c) for t, c in named if (k := name_checks([(t, c)]))["absent"] or k["dangling"]]
    assert n["absent"] == n["dangling"] == 0, (n, off)
    assert not any(t.startswith("Other findings") for t, _ in named), n


def _snapshot(lab, mid):
    with lab.sessions() as db:
        nodes = {
            n.id: (n.parent_id, n.kind, n.title, n.order_index, n.pos_x, n.pos_y)
            for n in db.exec(select(MapNode).where(MapNode.map_id == mid))
        }
        cits = {c.id: c.node_id for c in db.exec(select(Citation).where(Citation.map_id == mid))}
    return nodes, cits


@pytest.mark.parametrize("question", QUESTIONS)
def test_offline_map_meets_the_grouping_and_synthesis_targets(lab, question):
    mid = lab.create_map(question)
    _, evs = lab.run("build_map", mid, OfflineProvider, prompt=question)
    _assert_grouping(lab, mid)
    themes = [n for n in _nodes(lab, mid) if n.kind == "theme"]
    assert themes, [(e.type, e.data) for e in evs if e.type not in ("node", "text")][-4:]
    first = {n.title for n in _nodes(lab, mid) if n.kind == "claim"}
    _, evs = lab.run("build_map", mid, OfflineProvider, prompt=question)  # the same question again: no name twice
    _assert_grouping(lab, mid)
    # ... and nothing twice: the second run adds other sentences or says there is nothing new
    with lab.sessions() as db:
        quotes = [(c.chunk_id, c.quote) for c in db.exec(select(Citation).where(Citation.map_id == mid))]
    assert len(quotes) == len(set(quotes)), "a quote cited twice"
    added = [n.title for n in _nodes(lab, mid) if n.kind == "claim" and n.title not in first]
    note = [e.data.get("note") for e in evs if e.type == "agent" and e.data.get("done")]
    assert added or note == ["No new evidence found in your library."], note
    # Expand a theme: its sub-themes never repeat its name or another theme's; expanded again and
    # again, it adds what is new or says there is nothing new — never a failed run
    for _ in range(3):
        before_claims = {n.title for n in _nodes(lab, mid) if n.kind == "claim"}
        run_id, evs = lab.run("expand", mid, OfflineProvider, node_id=themes[0].id)
        _assert_grouping(lab, mid)
        with lab.sessions() as db:
            assert db.get(Run, run_id).status == "SUCCEEDED", db.get(Run, run_id).outcome_reason
        added = [n.title for n in _nodes(lab, mid) if n.kind == "claim" and n.title not in before_claims]
        note = [e.data.get("note") for e in evs if e.type == "agent" and e.data.get("done")]
        assert added or note == ["No new evidence found in your library."], note
    claims = [n for n in _nodes(lab, mid) if n.kind == "claim"]
    lab.run("deepen", mid, OfflineProvider, node_id=claims[0].id)
    g = _assert_grouping(lab, mid)

    _restructure(lab, mid, g)
    # Chapters: each theme in exactly one chapter
    _, evs = lab.run("chapters", mid, OfflineProvider)
    [chap] = [e.data for e in evs if e.type == "proposal"]
    chap_ids = [i for grp in chap["payload"]["groups"] for i in grp["node_ids"]]
    assert len(chap_ids) == len(set(chap_ids))

    _assert_synthesis(lab, mid)


def _restructure(lab, mid: str, g: dict) -> None:
    """Restructure: balanced groups, every claim once; accepting moves them; one undo reverts it."""
    _, evs = lab.run("restructure", mid, OfflineProvider)
    [prop] = [e.data for e in evs if e.type == "proposal"]
    groups = prop["payload"]["groups"]
    ids = [i for grp in groups for i in grp["node_ids"]]
    assert len(ids) == len(set(ids)) == g["claims"]
    if len(groups) >= 4:
        assert max(len(grp["node_ids"]) for grp in groups) <= g["claims"] / 2, [len(x["node_ids"]) for x in groups]
    before = _snapshot(lab, mid)
    with lab.sessions() as db:
        service.accept_proposal(db, lab.user_id, mid, prop["id"])
    after = _assert_grouping(lab, mid)
    assert after["claims"] == g["claims"]
    assert after["themes"] == len(groups)
    with lab.sessions() as db:
        assert service.undo(db, lab.user_id, mid) == "accept_proposal"
    assert _snapshot(lab, mid) == before
    with lab.sessions() as db:
        p2 = service.create_proposal(db, mid, "restructure", groups)
        service.accept_proposal(db, lab.user_id, mid, p2.id)
    _assert_grouping(lab, mid)


def _assert_synthesis(lab, mid: str) -> None:
    """Synthesis: short, markers numbering its own citations; the export shows it once."""
    lab.run("synthesize", mid, OfflineProvider)
    with lab.sessions() as db:
        [note] = [n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.title.startswith("Synthesis:")]
        n_cits = len(db.exec(select(Citation).where(Citation.node_id == note.id)).all())
        md = export.markdown(db, lab.user_id, mid)
    # the note sits clear of every other node's box on the canvas
    others = [(n.pos_x, n.pos_y) for n in _nodes(lab, mid) if n.id != note.id and n.pos_x is not None]
    assert note.pos_x is not None
    assert not any(overlaps((note.pos_x, note.pos_y), p) for p in others)
    s = synthesis_body(note.body, n_cits)
    assert s["bad_markers"] == 0
    assert n_cits >= 1
    assert "[1]" in note.body
    assert len(note.body.split()) <= 250, note.body  # markers counted as words too
    with lab.sessions() as db:
        rows = db.exec(select(Citation).where(Citation.node_id == note.id)).all()
    # each marker points at the passage its sentence was quoted from
    assert markers_off_quote(note.body, [c.quote for c in sorted(rows, key=lambda c: c.created_at)]) == 0, note.body
    heads = synthesis_headings(note.body, _nodes(lab, mid))
    assert heads, note.body
    _assert_names(heads)
    e = export_markdown(md, note.title)
    assert e == {"orphan_markers": 0, "double_escaped": 0, "repeated_references": 0, "synthesis_shown": 1}, (e, md)
