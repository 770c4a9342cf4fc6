"""Footnote and reference superscripts (issue 25): found from pdfium's character boxes (smaller,
raised), kept out of a claim's wording, while the quote stays verbatim and locatable."""

from __future__ import annotations

from bayes_app.agents.extractive import claim_candidates
from bayes_app.agents.retrieval import Passage, prompt_text
from bayes_app.library import pdf
from bayes_app.library.marks import mark_pairs, strip_marks
from bayes_app.library.quotes import locate_quote_loose
from tests.support.tiny_pdf import runs_pdf

PAGE = runs_pdf(
    [
        [
            [
                ("Our crawler reads the full text of arXiv papers through ar5iv", 12, 0),
                ("8", 7, 4),
                (" and compares with ChatGPT", 12, 0),
                ("9", 7, 4),
                (" , as earlier work did.", 12, 0),
            ],
            [("Shapley values are used to explain molecular prediction models.", 12, 0), ("75-78", 7, 4)],
            [
                ("The search space of the crawler grows as 2", 12, 0),
                ("10", 7, 4),
                (" papers for a depth of three steps in all.", 12, 0),
            ],
            [("Such plain body text of a page carries no marks of any kind at all here.", 12, 0)],
        ]
    ]
)


def _text() -> str:
    return next(iter(pdf.iter_pages(PAGE))).text


def test_superscripts_are_found_from_size_and_baseline():
    text = _text()
    found = [text[s:e] for s, e in pdf.superscripts(PAGE, 1)]
    assert found == ["8", "9", "75-78"]  # "2¹⁰" is an exponent after a digit, not a mark
    assert "ar5iv" in text  # the "5" of the name is printed in line: not a mark
    assert pdf.superscripts(PAGE, 2) == []


def test_wording_drops_the_marks_and_the_quote_still_locates():
    text = _text()
    pairs = mark_pairs(text, pdf.superscripts(PAGE, 1))
    assert pairs == {"ar5iv8": "ar5iv", "ChatGPT9": "ChatGPT", "models.75-78": "models."}
    quote = (
        "Our crawler reads the full text of arXiv papers through ar5iv8 and compares with ChatGPT9 ,"
        " as earlier work did."
    )
    assert locate_quote_loose(text, quote) is not None
    assert strip_marks(quote, pairs) == (
        "Our crawler reads the full text of arXiv papers through ar5iv and compares with ChatGPT, as earlier work did."
    )
    assert strip_marks("A name like ar5iv stays.", pairs) == "A name like ar5iv stays."
    assert strip_marks("In the work by White 79, a model.", {"White 79": "White"}) == "In the work by White, a model."


def test_claims_carry_the_wording_without_marks():
    text = _text()
    passage = Passage(
        1,
        "c1",
        "d1",
        "Paper",
        [],
        2025,
        1,
        prompt_text(text),
        "body",
        text,
        marks=mark_pairs(text, pdf.superscripts(PAGE, 1)),
    )
    by_quote = {c.text: c.extra["wording"] for c in claim_candidates([passage])}
    quote = next(q for q in by_quote if q.startswith("Our crawler"))
    assert "ar5iv8" in quote
    assert "ChatGPT9" in quote  # verbatim
    assert "ar5iv8" not in by_quote[quote]
    assert "ar5iv and compares with ChatGPT," in by_quote[quote]


def test_chunk_marks_read_each_chunk_once(tmp_path, monkeypatch):
    """A research run retrieves the same chunks for several aspects: their PDF is opened once."""
    from contextlib import contextmanager
    from types import SimpleNamespace

    from bayes_app.library import marks, storage

    path = tmp_path / "doc.pdf"
    path.write_bytes(PAGE)
    text = _text()
    chunk = SimpleNamespace(id="chunk-marks-once", document_id="d1", page=1, char_start=0, char_end=len(text))
    chunk.text = text
    opened: list[str] = []

    class Store:
        @contextmanager
        def local_file(self, sha):
            opened.append(sha)
            yield path

    db = SimpleNamespace(get=lambda _model, _id: SimpleNamespace(file_sha256="abc"))
    monkeypatch.setattr(storage, "default_store", lambda: Store())
    first = marks.chunk_marks(db, [chunk])
    assert first[chunk.id]["ar5iv8"] == "ar5iv"
    assert opened == ["abc"]
    assert marks.chunk_marks(db, [chunk]) == first
    assert opened == ["abc"]  # not opened again
