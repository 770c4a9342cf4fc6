"""Checking a draft, the pure parts: readers (Markdown, LaTeX + .bib, DOCX with Zotero fields),
citation finding, reference resolution, verdicts resting on passages, reports."""

from __future__ import annotations

import io

import pytest

from bayes_app.audits import check, citations, readers, report
from bayes_app.audits.draft import DraftRejected, Ref
from bayes_app.audits.judge import CachedEmbed
from bayes_app.audits.memory import MemoryLibrary, MemoryPaper
from bayes_app.audits.resolve import LibraryPaper, Resolver
from bayes_app.audits.result import summarize
from bayes_app.audits.sentences import build
from tests.support import audit_drafts


def keys(text: str) -> list[tuple[str, str]]:
    return [(c.marker, c.key) for c in citations.find(text)]


def test_numbered_citations_single_ranges_and_lists():
    assert keys("Cells grow [1].") == [("[1]", "n:1")]
    assert [k for _, k in keys("As shown [1–3] and [2, 5].")] == ["n:1", "n:2", "n:3", "n:2", "n:5"]
    assert [k for _, k in keys("See [4-5; 7].")] == ["n:4", "n:5", "n:7"]
    assert keys("An array a[i] and [x] are not citations.") == []


def test_author_year_citations():
    assert keys("Fish swim (Smith et al., 2020).") == [("(Smith et al., 2020)", "ay:smith:2020")]
    found = keys("Both hold (Smith & Lee 2019; Doe 2021a).")
    assert [k for _, k in found] == ["ay:smith:2019", "ay:doe:2021a"]
    assert keys("Müller and Park (2018) found it.") == [("Müller and Park (2018)", "ay:muller:2018")]
    assert keys("The effect (p < 0.05) was large (n = 2020).") == []


def test_latex_citations():
    assert keys(r"Shown \cite{smith2020} and \citep[p.~3]{a,b}.") == [
        (r"\cite{smith2020}", "bib:smith2020"),
        (r"\citep[p.~3]{a,b}", "bib:a"),
        (r"\citep[p.~3]{a,b}", "bib:b"),
    ]


def test_markdown_reader_splits_sentences_and_reads_the_reference_list():
    md = (
        "# Title\n\nDeep nets count cells well [1]. As Smith et al. (2020) argue, fish swim fast in cold water.\n\n"
        "## References\n\n[1] Smith, J., & Lee, K. (2020). Counting cells with deep nets. Nature, 3, 4.\n"
    )
    draft = build(readers.read("draft.md", md.encode()))
    assert [s.text for s in draft.sentences] == [
        "Deep nets count cells well [1].",
        "As Smith et al. (2020) argue, fish swim fast in cold water.",
    ]
    ref = draft.references["n:1"]
    assert ref.title == "Counting cells with deep nets"
    assert ref.year == 2020
    # the author–year citation points to the same entry
    assert [c.key for c in draft.sentences[1].cites] == ["n:1"]


def test_latex_reader_with_bib():
    papers, items = audit_drafts.scifact_set(
        counts={"correct": 3, "wrong": 0, "contradicted": 0, "uncited": 1, "missing": 0}, library_size=4
    )
    tex, bib = audit_drafts.latex(items)
    draft = build(readers.read("draft.tex", tex.encode(), bib.encode()))
    assert len(draft.sentences) == 4
    cited = [s for s in draft.sentences if s.cites]
    assert len(cited) == 3
    for s in cited:
        ref = draft.references[s.cites[0].key]
        assert ref.title
        assert ref.year
        assert "\\cite" not in citations.strip_markers(s.text, s.cites)


def test_docx_reader_reads_zotero_fields_and_skips_the_bibliography():
    papers, items = audit_drafts.scifact_set(
        counts={"correct": 3, "wrong": 0, "contradicted": 0, "uncited": 1, "missing": 0}, library_size=4
    )
    draft = build(readers.read("draft.docx", audit_drafts.docx(items)))
    assert len(draft.sentences) == 4  # the heading and the Zotero bibliography are not sentences
    cited = [s for s in draft.sentences if s.cites]
    by_id = {i.cited.zotero_key: i.cited for i in items if i.cited}
    for s in cited:
        ref = draft.references[s.cites[0].key]
        assert ref.zotero_key in by_id
        assert ref.title == by_id[ref.zotero_key].title
        assert s.cites[0].marker.startswith("(")
        assert s.cites[0].marker in s.text


@pytest.mark.parametrize(
    ("name", "data", "code", "status"),
    [
        ("draft.pdf", b"%PDF-1.4", "unsupported_type", 415),
        ("draft.md", b"   \n", "empty_file", 400),
        ("draft.txt", b"\xff\xfe\x00\x00binary", "unreadable", 400),
        ("draft.txt", "caf\xe9".encode("latin-1"), "unreadable", 400),
        ("draft.docx", b"not a zip at all", "unreadable", 400),
        ("draft.md", b"x" * (readers.MAX_DRAFT_BYTES + 1), "too_large", 413),
    ],
)
def test_bad_files_are_refused_with_what_to_do(name, data, code, status):
    with pytest.raises(DraftRejected) as err:
        readers.read(name, data)
    assert err.value.code == code
    assert err.value.status == status
    assert len(err.value.message) > 20


def test_resolution_by_zotero_key_doi_title_and_author_year():
    papers = [
        LibraryPaper("d1", "Counting cells with deep convolutional nets", 2020, "10.1234/abc", ["Jane Smith"], "ZKEY1"),
        LibraryPaper("d2", "GPT-3 language models are few-shot learners", 2020, None, ["Tom Brown"]),
        LibraryPaper("d3", "Fish swim fast in cold water", 2019, None, ["Ann Doe"]),
    ]
    r = Resolver(papers)
    assert r.resolve(Ref(key="z", zotero_key="ZKEY1")).document_id == "d1"
    assert r.resolve(Ref(key="a", doi="https://doi.org/10.1234/ABC")).document_id == "d1"
    assert r.resolve(Ref(key="b", title="Counting cells with deep convolutonal nets", year=2020)).how == "fuzzy"
    # numbers must agree: GPT-4 is another paper
    assert r.resolve(Ref(key="c", title="GPT-4 language models are few-shot learners", year=2020)).document_id is None
    assert r.resolve(Ref(key="ay:doe:2019", authors=["Doe"], year=2019)).document_id == "d3"
    assert r.resolve(Ref(key="e", title="A paper the library does not have at all", year=2001)).document_id is None


@pytest.fixture(scope="module")
def scifact():
    papers, items = audit_drafts.scifact_set(
        counts={"correct": 3, "wrong": 3, "contradicted": 0, "uncited": 2, "missing": 2}, library_size=12
    )
    embed = CachedEmbed()
    library = MemoryLibrary(
        [MemoryPaper(LibraryPaper(p.id, p.title, p.year, p.doi, list(p.authors)), [p.abstract]) for p in papers], embed
    )
    draft = build(readers.read("draft.md", audit_drafts.markdown(items).encode()))
    results = [check.check_sentence(s, draft, Resolver(library.papers()), library, embed)[0] for s in draft.sentences]
    return papers, items, results


def _item(items, text):
    return next(i for i in items if audit_drafts._sentence(i.claim)[:40] == text[:40])


def test_every_verdict_rests_on_a_verbatim_passage_of_the_cited_paper(scifact):
    papers, items, results = scifact
    abstracts = {p.id: p.abstract for p in papers}
    checked = 0
    for r in results:
        for c in r.citations:
            if c.verdict == "not_in_library":
                assert c.evidence is None
                assert c.document_id is None
                continue
            assert c.evidence is not None
            assert c.evidence.document_id == c.document_id
            assert c.evidence.quote in abstracts[c.document_id]
            assert c.evidence.page == 1
            checked += 1
    assert checked == 6


def test_wrong_papers_are_flagged_and_missing_papers_said_not_in_library(scifact):
    _, items, results = scifact
    for r in results:
        item = _item(items, r.text)
        if item.kind == "wrong":  # an unrelated paper: its closest passage does not say it
            assert r.citations[0].verdict == "unsupported"
            assert r.flagged
        elif item.kind == "missing":
            assert r.citations[0].verdict == "not_in_library"
            assert r.flagged
        elif item.kind == "correct":
            assert r.citations[0].document_id == item.cited.id
        elif item.kind == "uncited":
            assert not r.citations
            assert r.finding
            assert r.suggestions
    s = summarize(results)
    assert s.not_in_library == 2
    assert s.citations == 8
    assert s.sentences == len(results)


def test_reports_hold_every_flagged_sentence_and_a_comment_each(scifact):
    import docx
    from docx.oxml.ns import qn

    _, _, results = scifact
    flagged = [r for r in results if r.flagged]
    md = report.markdown("draft.md", summarize(results), results)
    for r in flagged:
        assert f"## Sentence {r.index + 1}" in md
    data = report.docx([results])
    d = docx.Document(io.BytesIO(data))
    comments = list(d.comments)
    assert len(comments) == len(flagged) + sum(len(r.suggestions) for r in flagged)
    anchored = d.element.body.findall(".//" + qn("w:commentRangeStart"))
    assert len(anchored) == len(comments)


def test_markdown_report_escapes_draft_markup():
    from bayes_app.audits.result import SentenceResult

    r = SentenceResult(index=0, text="<script>alert(1)</script> [x](javascript:1) **bold** claims more.", finding=True)
    md = report.markdown("a.md", summarize([r]), [r])
    assert "<script>" not in md
    assert "](javascript" not in md
    assert "**bold**" not in md


def test_docx_report_drops_characters_word_cannot_hold():
    """PDF text can carry control characters (form feeds, NULs): the DOCX leaves out what XML
    cannot hold instead of failing."""
    import docx

    from bayes_app.audits.result import CitationResult, Evidence, SentenceResult, Suggestion

    quote = "Aspirin\x0c lowered\x00 bleeding\x02 risk."
    r = SentenceResult(index=0, text="Aspirin raises\x0b bleeding risk [1].", finding=True)
    r.citations.append(
        CitationResult(
            marker="[1]",
            reference="Smith 2019",
            document_id="d1",
            verdict="contradicted",
            score=0.9,
            evidence=Evidence(document_id="d1", page=2, quote=quote),
            reason="Opposite.",
        )
    )
    r.suggestions.append(Suggestion(document_id="d2", page=1, quote=quote, score=0.5))
    d = docx.Document(io.BytesIO(report.docx([[r]])))
    texts = [c.text for c in d.comments]
    assert len(texts) == 2
    assert all("Aspirin lowered bleeding risk." in t for t in texts)
    assert d.paragraphs[0].text == "Aspirin raises bleeding risk [1]."


def test_the_cited_papers_finding_is_chosen_over_its_summing_up():
    """The passages a citation is judged on are the learned relevance model's choice (a SciFact
    `held` claim, never trained on): the sentence reporting the finding, not the closing line
    that shares the claim's words ("These observations implicate macrophages…", the old
    cosine-and-coverage score's first and only pick)."""
    claim = "Cardiac tissue-resident macrophages directly contribute to electrical activity."
    paper = [
        "Organ-specific functions of tissue-resident macrophages in the steady-state heart are unknown.",
        "Here, we show that cardiac macrophages facilitate electrical conduction through the distal "
        "atrioventricular node, where conducting cells densely intersperse with elongated macrophages "
        "expressing connexin 43.",
        "When coupled to spontaneously beating cardiomyocytes via connexin-43-containing gap junctions, cardiac "
        "macrophages have a negative resting membrane potential and depolarize in synchrony with cardiomyocytes.",
        "Conversely, macrophages render the resting membrane potential of cardiomyocytes more positive and, "
        "according to computational modeling, accelerate their repolarization.",
        "In the Cd11bDTR mouse, macrophage ablation induces progressive atrioventricular block.",
        "These observations implicate macrophages in normal and aberrant cardiac conduction.",
    ]
    passages = [check.Passage("d1", 1, s) for s in paper]
    best = check.best_passages(claim, passages, CachedEmbed())
    assert best[0].text.startswith("Here, we show that cardiac macrophages facilitate electrical conduction")
