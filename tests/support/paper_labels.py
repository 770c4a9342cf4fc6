"""Hand-labelled regions of the bundled papers that are NOT body text or captions: title and
author blocks, figure contents, reference lists, prompt listings, the test file's image/table/
LaTeX residue. Checked by hand against the page texts pypdfium2 extracts (the tests and
`benchmarks/map_quality.py` use them to judge where a claim's quote comes from, independently
of the claim filter).

A region is (file name, page, start marker, end marker): from the first occurrence of
`start` (None: page start) to the first occurrence of `end` after it (None: page end).
"""

from __future__ import annotations

from dataclasses import dataclass

REGIONS: list[tuple[str, int, str | None, str | None, str]] = [
    # pasa.pdf
    ("pasa.pdf", 1, None, "Abstract", "author block"),
    ("pasa.pdf", 2, None, "Figure 1:", "figure text"),
    ("pasa.pdf", 5, None, "Figure 2:", "figure text"),
    ("pasa.pdf", 10, "References", None, "reference list"),
    ("pasa.pdf", 11, None, "A Implementation Details of the Crawler", "reference list"),
    ("pasa.pdf", 13, None, None, "prompt listing"),
    ("pasa.pdf", 14, None, None, "prompt listing"),
    ("pasa.pdf", 15, None, None, "prompt listing"),
    # explanations-molecular-prediction-models.pdf
    ("explanations-molecular-prediction-models.pdf", 1, None, "Abstract", "author block"),
    ("explanations-molecular-prediction-models.pdf", 24, "References", None, "reference list"),
    *[("explanations-molecular-prediction-models.pdf", p, None, None, "reference list") for p in range(25, 42)],
    # duplicate-media.pdf: image captions, a table and LaTeX, no prose
    *[("duplicate-media.pdf", p, None, None, "figure/table/equation") for p in range(1, 6)],
]


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


def spans(filename: str, page: int, page_text: str) -> list[Span]:
    """The labelled non-body spans of one page (offsets into the extracted page text)."""
    out = []
    for name, p, start, end, kind in REGIONS:
        if name != filename or p != page:
            continue
        s = 0 if start is None else page_text.find(start)
        if s < 0:
            raise AssertionError(f"marker {start!r} not on {filename} p. {page}")
        e = len(page_text) if end is None else page_text.find(end, s)
        if e < 0:
            raise AssertionError(f"marker {end!r} not on {filename} p. {page}")
        out.append(Span(s, e, kind))
    return out


CAPTION_START = ("Figure ", "Fig. ", "Table ")


def region_of(filename: str, page: int, page_text: str, char_start: int, char_end: int, quote: str = "") -> str | None:
    """The labelled region a quote's span overlaps (a caption inside a labelled page is fine)."""
    if quote.startswith(CAPTION_START):
        return None
    for sp in spans(filename, page, page_text):
        if char_start < sp.end and char_end > sp.start:
            return sp.kind
    return None
