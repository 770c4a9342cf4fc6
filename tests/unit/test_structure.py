"""Role classification of the three bundled papers against spans labelled by hand, role-aware
chunking, and the parsed reference lists."""

from __future__ import annotations

from functools import cache

import pytest

from bayes_app.library import chunking, pdf, references, structure
from bayes_app.library.quotes import locate_quote
from bayes_app.library.structure import Role
from tests.support import pdfs


@cache
def analysed(path) -> tuple[list[pdf.PageLayout], list[list[structure.Span]]]:
    pages = list(pdf.iter_layouts(path))
    return pages, structure.analyze(pages)


def span_of(path, page: int, phrase: str) -> list[structure.Span]:
    """The spans covering a phrase found on a page (by the quote matcher, as the app does);
    "phrase|N" is its N-th occurrence."""
    pages, spans = analysed(path)
    phrase, _, nth = phrase.partition("|")
    text, skip = pages[page - 1].text, 0
    for _ in range(int(nth or 1)):
        found = locate_quote(text[skip:], phrase)
        assert found is not None, f"{phrase!r} is not on page {page}"
        found = (found[0] + skip, found[1] + skip)
        skip = found[1]
    return [s for s in spans[page - 1] if s.start < found[1] and found[0] < s.end]


def roles(path, page: int, phrase: str) -> set[str]:
    return {s.role for s in span_of(path, page, phrase)}


# (page, phrase, role) labelled by hand from the rendered pages
PASA_LABELS = [
    (1, "PaSa: An LLM Agent for Comprehensive Academic Paper Search", Role.FRONT_MATTER),
    (1, "Yichen He", Role.FRONT_MATTER),
    (1, "1ByteDance Research 2Peking University", Role.FRONT_MATTER),
    (1, "lihang.lh}@bytedance.com, weinan@math.pku.edu.cn", Role.FRONT_MATTER),
    (1, "Equal contribution.", Role.FRONT_MATTER),
    (1, "Paper Search|2", Role.FIGURE),  # the logo drawn as a form object
    (1, "We introduce PaSa, an advanced Paper Search agent", Role.BODY),
    (1, "arXiv:2501.10120v1 [cs.IR] 17 Jan 2025", Role.HEADER_FOOTER),  # margin stamp
    (1, "Academic paper search lies at the core of research", Role.BODY),
    (2, "Crawler Paper Queue User Query Selector", Role.FIGURE),
    (2, "[Expand] [Stop]", Role.FIGURE),
    (2, "Figure 1: Architecture of PaSa. The system consists of two LLM agents", Role.CAPTION),
    (2, "paper queue. The Selector reads each paper in the paper queue", Role.CAPTION),
    (2, "In this paper, we introduce PaSa, a novel paper search agent", Role.BODY),
    (2, "https://iclr.cc/Conferences/2023", Role.FOOTNOTE),
    (3, "LLMs have been applied across various stages", Role.BODY),
    (4, "ICLR 2023 888 5204 2.46 2.0 5.0", Role.FIGURE),
    (4, "Table 2: Statistics of AutoScholarQuery.", Role.CAPTION),
    (4, "Query: Could you provide me some studies that proposed hierarchical", Role.FIGURE),
    (6, "The Selector is an LLM agent that takes two inputs", Role.BODY),
    (6, "LRL(θ, ϕ) = Lpolicy(θ) + η · Lvalue(ϕ) (8)", Role.EQUATION),
    (8, "Table 5: Results on AutoScholarQuery test set.", Role.CAPTION),
    (9, "PaSa-7b-Selector 0.95 0.78 0.85", Role.FIGURE),
    (10, "Shubham Agarwal, Issam H Laradji", Role.REFERENCE),
    (10, "Agile: A novel framework of llm agents.", Role.REFERENCE),
    (11, "Llms as research tools: A large scale survey", Role.REFERENCE),
    (11, "We generate training data for imitation learning", Role.BODY),  # appendix after refs
    (13, "You are an elite researcher in the field of AI", Role.FIGURE),  # prompt listing
]
REVIEW_LABELS = [
    (1, "A Perspective on Explanations of Molecular", Role.FRONT_MATTER),
    (1, "Geemi P. Wellawatte", Role.FRONT_MATTER),
    (1, "Department of Chemical Engineering, University of Rochester", Role.FRONT_MATTER),
    (1, "E-mail: andrew.white@rochester.edu", Role.FRONT_MATTER),
    (1, "Chemists can be skeptical in using deep learning", Role.BODY),
    (2, "Deep learning (DL) is advancing the boundaries", Role.BODY),
    (2, "there does happen to be one human solubility savant", Role.FOOTNOTE),
    (16, "Figure 1: Counterfactuals of a molecule which cannot permeate", Role.CAPTION),
    (24, "Choudhary, K.; DeCost, B.", Role.REFERENCE),
    (30, "Sheridan, R. P. Interpretation of QSAR Models", Role.REFERENCE),
]
MEDIA_LABELS = [
    (1, "SF Districts in the style of Andy Warhol", Role.FRONT_MATTER),
    (1, "Text under image 1.", Role.BODY),
    (1, "x + n + a = ax + (n + a)", Role.EQUATION),
    (3, "Text under table 3.", Role.BODY),
]


@pytest.mark.parametrize(("page", "phrase", "role"), PASA_LABELS)
def test_pasa_roles(page, phrase, role):
    assert roles(pdfs.PASA, page, phrase) == {role}


@pytest.mark.parametrize(("page", "phrase", "role"), REVIEW_LABELS)
def test_review_roles(page, phrase, role):
    assert roles(pdfs.REVIEW, page, phrase) == {role}


@pytest.mark.parametrize(("page", "phrase", "role"), MEDIA_LABELS)
def test_media_roles(page, phrase, role):
    assert roles(pdfs.MEDIA, page, phrase) == {role}


def test_page_numbers_are_running_footers_on_every_page():
    for path in (pdfs.PASA, pdfs.REVIEW):
        pages, spans = analysed(path)
        for page, page_spans in zip(pages, spans):
            last = page.text.rstrip().split("\r\n")[-1].strip()
            if last.isdigit() and int(last) == page.number:
                offset = page.text.rstrip().rfind(last)
                assert structure.role_at(page_spans, offset) == Role.HEADER_FOOTER, (path.name, page.number)


def test_reference_list_spans_from_heading_to_appendix():
    pages, spans = analysed(pdfs.PASA)
    ref_pages = {p.number for p, ss in zip(pages, spans) if any(s.role == Role.REFERENCE for s in ss)}
    assert ref_pages == {10, 11}
    pages, spans = analysed(pdfs.REVIEW)
    ref_pages = {p.number for p, ss in zip(pages, spans) if any(s.role == Role.REFERENCE for s in ss)}
    assert ref_pages == set(range(24, 42))


def test_sections_follow_the_headings():
    [span] = span_of(pdfs.PASA, 6, "The Selector is an LLM agent that takes two inputs")
    assert span.section == "4 Methodology › 4.3 Selector"
    [span] = span_of(pdfs.PASA, 4, "To evaluate PaSa in more realistic scenarios")
    assert span.section == "3 Datasets › 3.2 RealScholarQuery"
    [span] = span_of(pdfs.REVIEW, 16, "Small molecule solubility prediction is a classic")
    assert span.section == "Solubility prediction"


def test_spans_cover_every_visible_line_once():
    for path in (pdfs.PASA, pdfs.REVIEW, pdfs.MEDIA):
        pages, spans = analysed(path)
        for page, page_spans in zip(pages, spans):
            for a, b in zip(page_spans, page_spans[1:]):
                assert a.end <= b.start
            for ln in page.lines:
                assert structure.role_at(page_spans, ln.start) is not None


def test_layout_text_is_the_page_text():
    layouts = list(pdf.iter_layouts(pdfs.PASA))
    assert [p.text for p in layouts] == [p.text for p in pdf.iter_pages(pdfs.PASA)]


def test_chunks_keep_to_one_role_and_slice_the_page():
    pages, spans = analysed(pdfs.PASA)
    chunks = list(chunking.iter_structured_chunks(pages, spans))
    for c in chunks:
        assert c.text == pages[c.page - 1].text[c.char_start : c.char_end]
        inside = structure.roles_in(spans[c.page - 1], c.char_start, c.char_end)
        assert c.role in inside
        # a chunk may also hold the heading it starts with, body chunks a short equation
        assert inside - {c.role} <= ({Role.HEADING, Role.EQUATION} if c.role == Role.BODY else {Role.HEADING})
    by_role = {c.role for c in chunks}
    assert {Role.BODY, Role.REFERENCE, Role.CAPTION, Role.FIGURE, Role.HEADER_FOOTER} <= by_role
    agile = [c for c in chunks if "Agile: A novel framework" in c.text]
    assert agile
    assert all(c.role == Role.REFERENCE for c in agile)


def test_pasa_reference_entries_have_year_and_title():
    pages, spans = analysed(pdfs.PASA)
    refs = references.parse_references(pages, spans)
    # 37 entries on pages 10-11, counted by hand
    assert len(refs) == 37
    complete = [r for r in refs if r.year and r.title]
    assert len(complete) / len(refs) >= 0.9
    agile = next(r for r in refs if r.title and r.title.startswith("Agile"))
    assert agile.year == 2024
    assert agile.title == "Agile: A novel framework of llm agents"
    assert agile.authors[:2] == ["Peiyuan Feng", "Yichen He"]
    assert agile.venue == "arXiv preprint arXiv:2405.14751"


def test_review_reference_entries_numbered_acs_style():
    pages, spans = analysed(pdfs.REVIEW)
    refs = references.parse_references(pages, spans)
    assert len(refs) >= 140
    assert sum(bool(r.year and r.title) for r in refs) / len(refs) >= 0.9
    sheridan = next(r for r in refs if r.raw.startswith("(57)"))
    assert sheridan.authors == ["Sheridan, R. P."]
    assert sheridan.year == 2019
    assert sheridan.title.startswith("Interpretation of QSAR Models by Coloring Atoms")


@pytest.mark.parametrize(
    ("entry", "expect"),
    [
        (
            '[3] A. Smith and B. Jones, "Deep nets for cells," in Proc. CVPR, 2019, doi:10.1109/CVPR.2019.001.',
            {
                "year": 2019,
                "title": "Deep nets for cells",
                "doi": "10.1109/CVPR.2019.001",
                "authors": ["A. Smith", "B. Jones"],
            },
        ),
        (
            "Doe, J., & Roe, R. (2020). A study of things. Journal of Stuff, 12(3), 45-67.",
            {"year": 2020, "title": "A study of things", "authors": ["Doe, J.", "Roe, R."]},
        ),
    ],
)
def test_other_reference_styles(entry, expect):
    r = references.parse_entry(entry)
    for k, v in expect.items():
        assert getattr(r, k) == v, (k, r)
