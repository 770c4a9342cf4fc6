"""A sentence cut by a page or column break is joined with its continuation (issue 25): the
joined quote still locates across the break (`library.highlight`), and the provenance check
accepts it (`maps.citations.locate`)."""

from __future__ import annotations

from sqlmodel import Session, SQLModel, create_engine

from bayes_app.agents.extractive import claim_candidates
from bayes_app.agents.retrieval import Passage, passage_texts
from bayes_app.chat.library_search import with_continuations
from bayes_app.library.continuation import continued, continued_chunk, is_cut, tail
from bayes_app.library.highlight import find_quote_spans
from bayes_app.library.pdf import iter_pages
from bayes_app.maps.citations import locate
from bayes_app.models import Chunk, PageText
from tests.support.tiny_pdf import runs_pdf

HEAD = "Counterfactual explanation based model interpretation still remains unexplored compared to other"
TAIL = "post-hoc methods on molecular data. The benchmark has fifty queries in all."
SENTENCE = f"{HEAD} post-hoc methods on molecular data."


def _pages() -> dict[int, str]:
    pdf = runs_pdf(
        [
            [
                [("Intro. We study the explanation of molecular property prediction models.", 12, 0)],
                [(HEAD, 12, 0)],
                [("12", 10, 0)],
            ],
            [[(TAIL, 12, 0)], [("A second paragraph of plain body text closes the page here.", 12, 0)]],
        ]
    )
    return {p.number: p.text for p in iter_pages(pdf)}


def test_cut_sentences_and_their_tails():
    assert is_cut("It remains unexplored compared to other")
    assert is_cut("… peripheral to counterfac\ufffe11")  # a page number glued to the hyphen mark
    assert not is_cut("It ends here.")
    assert not is_cut("… complex human factors and application scenarios.” 37")  # a citation mark
    assert not is_cut("… in the domain of molecular scent.\r\n31")  # a page number
    assert tail("post-hoc methods. The next one.") == "post-hoc methods."
    assert tail("The next page opens a sentence.") == ""
    assert tail(". 4") == ""  # no words: not a continuation
    assert continued("… peripheral to counterfac\ufffe11", ["tual explanations. More."]) == (
        "… peripheral to counterfac\ufffetual explanations."
    )
    assert continued("It ends here.", ["and more."]) is None
    assert continued("compared to other", ["Table 3 shows it.", "methods."]) is None  # a sentence between


def test_a_sentence_across_a_page_break_is_joined_and_locates_on_both_pages():
    pages = _pages()
    joined = continued(pages[1], [pages[2]])
    assert joined is not None
    assert joined.endswith(SENTENCE)
    spans = find_quote_spans(pages, 1, SENTENCE)
    assert [s[0] for s in spans] == [1, 2]  # the page number "12" between is skipped
    assert pages[1][spans[0][1] : spans[0][2]].startswith("Counterfactual explanation")
    assert pages[2][spans[1][1] : spans[1][2]].startswith("post-hoc methods")


def test_stored_chunks_continue_and_the_quote_passes_the_provenance_check():
    pages = _pages()
    engine = create_engine("sqlite://")
    SQLModel.metadata.create_all(engine)
    with Session(engine) as db:
        for n, text in pages.items():
            db.add(PageText(document_id="d1", page=n, text=text))
        a = Chunk(
            id="c1",
            document_id="d1",
            owner_id="u",
            chunk_index=0,
            page=1,
            char_start=0,
            char_end=len(pages[1]),
            text=pages[1],
            content_hash="x",
        )
        b = Chunk(
            id="c2",
            document_id="d1",
            owner_id="u",
            chunk_index=1,
            page=2,
            char_start=0,
            char_end=len(pages[2]),
            text=pages[2],
            content_hash="y",
        )
        db.add_all([a, b])
        db.commit()
        text = continued_chunk(db, a)
        assert text.endswith("post-hoc methods on molecular data.")
        assert continued_chunk(db, b) == pages[2]  # not cut: as stored
        span = locate(db, a, SENTENCE)  # runs on to page 2: located from its start on page 1
        assert span is not None
        assert pages[1][span[0] : span[1]].startswith("Counterfactual")
        assert locate(db, a, "compared to other post-hoc methods on a different benchmark") is None
        hits = with_continuations(db, [{"chunk_id": "c1", "text": pages[1]}, {"chunk_id": "c2", "text": pages[2]}])
        assert hits[0]["text"] == text
        assert hits[1]["text"] == pages[2]
        # research passages too (agents.retrieval), and the joined sentence becomes a claim
        assert passage_texts(db, {"c1": a, "c2": b}) == {"c1": text, "c2": pages[2]}


def test_a_research_claim_runs_across_the_break_without_the_heading_before_it():
    raw = f"Interpretation methods for models differ in what they explain.\nModel interpretation\n{HEAD}\n12"
    joined = continued(raw, [TAIL])
    assert joined is not None
    passage = Passage(1, "c1", "d1", "Review", [], 2022, 1, " ".join(joined.split()), "body", joined)
    assert [c.text for c in claim_candidates([passage])][-1] == SENTENCE  # not "Model interpretation Counterf…"
