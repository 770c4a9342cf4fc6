"""The citation graph on both databases: links made incrementally as documents arrive,
change metadata and leave; 'missing from your library'; isolation between users."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from sqlmodel import select

from bayes_app.accounts import service
from bayes_app.library import citation_graph as graph
from bayes_app.library import documents as lib
from bayes_app.library.citation_match import normalize_title
from bayes_app.models import Citation, Document, DocumentCitation, DocumentReference, MapNode, Mindmap

MISSING = "Large Language Models as Research Assistants"


def _user(db) -> str:
    return service.register(db, f"g{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex).id


def _doc(
    db,
    owner: str,
    title: str,
    year: int | None = None,
    doi: str | None = None,
    refs: list[tuple[str | None, int | None, str | None]] = (),
) -> str:
    """A document with its parsed references (title, year, doi), linked like ingestion does."""
    d = Document(
        owner_id=owner,
        filename=f"{uuid.uuid4().hex}.pdf",
        file_sha256=uuid.uuid4().hex,
        title=title,
        year=year,
        doi=doi,
        status="indexed",
    )
    db.add(d)
    db.flush()
    db.add_all(
        [
            DocumentReference(document_id=d.id, position=k, raw=t or doi or "", title=t, year=y, doi=i)
            for k, (t, y, i) in enumerate(refs)
        ]
    )
    db.flush()
    graph.update_document(db, owner, d.id)
    db.commit()
    return d.id


def _links(db, owner: str) -> set[tuple[str, int, str, str]]:
    return {
        (c.citing_id, c.position, c.cited_id, c.how)
        for c in db.exec(select(DocumentCitation).where(DocumentCitation.owner_id == owner))
    }


def test_links_by_doi_title_and_typo_both_directions(dbs):
    u = _user(dbs)
    b = _doc(dbs, u, "Scalable Reference Matching in Digital Libraries", 2019, "10.5555/SRM.2019")
    # A arrives after B: its references link out (DOI only; a title with a typo; unknown)
    a = _doc(
        dbs,
        u,
        "Graph Methods for Literature Discovery",
        2021,
        refs=[
            (None, 2019, "https://doi.org/10.5555/srm.2019"),
            ("Neural Rankng of Scientific Citatons", 2020, None),
            (MISSING, 2023, None),
        ],
    )
    assert _links(dbs, u) == {(a, 0, b, "doi")}
    # C arrives later and is cited by A with a typo: the incoming pass links A's reference to it
    c = _doc(
        dbs,
        u,
        "Neural Ranking of Scientific Citations",
        2020,
        refs=[("Scalable reference matching in digital libraries", 2019, None)],
    )
    assert _links(dbs, u) == {(a, 0, b, "doi"), (a, 1, c, "fuzzy"), (c, 0, b, "title")}

    view = graph.citations_of(dbs, u, b)
    assert [p.document_id for p in view.cited_by] == [a, c]
    assert view.cites == []
    assert {p.document_id: p.how for p in graph.citations_of(dbs, u, a).cites} == {b: "doi", c: "fuzzy"}
    assert graph.cited_by_counts(dbs, u, [a, b, c]) == {b: 2, c: 1}


def test_metadata_edit_and_delete_relink(dbs):
    u = _user(dbs)
    old = _doc(dbs, u, "Untitled scan 0042", 2018)
    citer = _doc(dbs, u, "A Survey of Reading Tools", 2022, refs=[("A Survey of Citation Recommendation", 2018, None)])
    assert _links(dbs, u) == set()
    lib.update_metadata(dbs, u, old, {"title": "A Survey of Citation Recommendation"})
    dbs.commit()
    assert _links(dbs, u) == {(citer, 0, old, "title")}
    lib.update_metadata(dbs, u, old, {"title": "Something else entirely, written later"})
    dbs.commit()
    assert _links(dbs, u) == set()
    lib.update_metadata(dbs, u, old, {"title": "A Survey of Citation Recommendation"})
    dbs.commit()
    lib.delete_document(dbs, u, old)
    dbs.commit()
    assert _links(dbs, u) == set()
    assert graph.citations_of(dbs, u, citer).cites == []


def test_missing_ranks_papers_cited_twice_and_merges_doi_and_typo_variants(dbs):
    u = _user(dbs)
    x = _doc(
        dbs,
        u,
        "Paper X on agents",
        2024,
        refs=[(MISSING, 2023, None), ("Retrieval for Everyone", 2021, None), ("Cited Once Only Here", 2020, None)],
    )
    y = _doc(
        dbs,
        u,
        "Paper Y on search",
        2024,
        refs=[
            ("Large Language Models as Research Assistant", 2023, None),
            (None, None, "10.1/retrieval"),
            ("Retrieval for Everyone", 2021, "10.1/RETRIEVAL"),
        ],
    )
    z = _doc(dbs, u, "Paper Z on maps", 2025, refs=[(MISSING + ".", 2023, "10.9/llmra")])
    papers = graph.missing(dbs, u)
    assert [(p.title, p.cited_by_count) for p in papers] == [(MISSING, 3), ("Retrieval for Everyone", 2)]
    assert papers[0].doi == "10.9/llmra"
    assert papers[0].year == 2023
    assert set(papers[0].cited_by) == {x, y, z}
    # scoped to two documents: the retrieval paper is still cited twice, by x and y
    scoped = graph.missing(dbs, u, [x, y])  # the two spellings of the LLM paper tie: either is shown
    assert [p.title[:42] for p in scoped] == [MISSING[:42], "Retrieval for Everyone"]
    assert [p.title for p in graph.missing(dbs, u, [y, z])] == [MISSING]
    # once the paper is in the library it is no longer missing
    _doc(dbs, u, MISSING, 2023)
    assert [p.title for p in graph.missing(dbs, u)] == ["Retrieval for Everyone"]


def test_another_users_papers_are_never_linked_or_counted(dbs):
    u, v = _user(dbs), _user(dbs)
    theirs = _doc(dbs, v, "Scalable Reference Matching in Digital Libraries", 2019, "10.5555/srm.2019")
    mine = _doc(
        dbs, u, "My paper", 2021, refs=[("Scalable Reference Matching in Digital Libraries", 2019, "10.5555/srm.2019")]
    )
    other = _doc(
        dbs, u, "My second paper", 2022, refs=[("Scalable Reference Matching in Digital Libraries", 2019, None)]
    )
    assert _links(dbs, u) == set()
    assert _links(dbs, v) == set()
    assert graph.citations_of(dbs, u, theirs).cited_by == []
    assert [p.cited_by for p in graph.missing(dbs, u)] == [sorted([mine, other])]


def test_rebuild_equals_incremental(dbs):
    u = _user(dbs)
    ids = [
        _doc(
            dbs,
            u,
            f"Study number {i} of citation graphs in libraries",
            2020 + i % 3,
            refs=[
                (f"Study number {j} of citation graphs in libraries", 2020 + j % 3, None) for j in range(6) if j != i
            ],
        )
        for i in range(6)
    ]
    before = _links(dbs, u)
    assert len(before) == 6 * 5  # every paper cites the five others
    assert graph.rebuild(dbs, u) == len(before)
    dbs.commit()
    assert _links(dbs, u) == before
    assert len(ids) == 6


def test_map_missing_uses_the_maps_cited_papers(dbs):
    u = _user(dbs)
    a = _doc(dbs, u, "Paper A about reading", 2024, refs=[(MISSING, 2023, None)])
    b = _doc(dbs, u, "Paper B about writing", 2024, refs=[(MISSING, 2023, None)])
    m = Mindmap(owner_id=u, title="map")
    dbs.add(m)
    dbs.flush()
    node = MapNode(map_id=m.id, title="claim")
    dbs.add(node)
    dbs.flush()
    dbs.add(Citation(map_id=m.id, node_id=node.id, document_id=a, page=1, quote="q"))
    dbs.commit()
    cited = sorted({c.document_id for c in dbs.exec(select(Citation).where(Citation.map_id == m.id))})
    assert graph.missing(dbs, u, cited) == []  # only one cited paper cites it
    dbs.add(Citation(map_id=m.id, node_id=node.id, document_id=b, page=1, quote="q"))
    dbs.commit()
    cited = sorted({c.document_id for c in dbs.exec(select(Citation).where(Citation.map_id == m.id))})
    assert [p.title for p in graph.missing(dbs, u, cited)] == [MISSING]


def test_documents_indexed_before_the_graph_are_linked_in_the_background(dbs):
    u = _user(dbs)
    a = _doc(dbs, u, "Scalable Reference Matching in Digital Libraries", 2019)
    b = _doc(dbs, u, "A later paper", 2021, refs=[("Scalable Reference Matching in Digital Libraries", 2019, None)])
    for doc_id in (a, b):  # as if indexed before migration 0019
        graph.forget_document(dbs, doc_id)
        dbs.get(Document, doc_id).citations_version = 0
    dbs.commit()
    assert _links(dbs, u) == set()
    assert graph.relink_outdated(dbs) >= 2
    dbs.commit()
    assert _links(dbs, u) == {(b, 0, a, "title")}
    assert graph.relink_outdated(dbs) == 0  # every document is linked by the current version


@pytest.mark.parametrize("published_year", [2020, 2021])
def test_missing_merges_a_preprint_and_its_published_version_parsed_from_two_styles(dbs, published_year):
    """Issue 39: one paper cites the survey as a 2019 arXiv preprint, the other as the journal
    version (APA, another title case, a DOI; 2021: the first authors must agree too): it is
    listed once, with both citing papers."""
    import random

    from bayes_app.library.references import parse_entries
    from tests.support.reference_sets import format_entry, numbered, random_work

    rng = random.Random(5)
    survey = random_work(rng, year=2019, title="A survey of machine learning for molecular discovery")
    published = dataclasses.replace(
        survey, year=published_year, title="A Survey of Machine Learning for Molecular Discovery"
    )
    others = [random_work(rng) for _ in range(4)]
    u = _user(dbs)
    citing = []
    for style, version in (("arxiv", survey), ("apa", published)):
        entries = numbered([format_entry(w, style) for w in [others[0], version, others[len(citing) + 1]]], style)
        d = Document(
            owner_id=u, filename="x.pdf", file_sha256=uuid.uuid4().hex, title=f"Citing {style}", status="indexed"
        )
        dbs.add(d)
        dbs.flush()
        for k, r in enumerate(parse_entries(entries)):
            dbs.add(
                DocumentReference(
                    document_id=d.id,
                    position=k,
                    raw=r.raw,
                    authors=r.authors,
                    title=r.title,
                    year=r.year,
                    doi=r.doi,
                    venue=r.venue,
                )
            )
        dbs.flush()
        graph.update_document(dbs, u, d.id)
        citing.append(d.id)
    dbs.commit()
    papers = graph.missing(dbs, u)
    rows = [(normalize_title(p.title), p.cited_by_count) for p in papers]
    assert rows.count((normalize_title(survey.title), 2)) == 1  # the survey and others[0]
    assert len(papers) == 2
    hit = next(p for p in papers if normalize_title(p.title) == normalize_title(survey.title))
    assert sorted(hit.cited_by) == sorted(citing)
    assert hit.year == published_year
    assert hit.doi == published.doi
