"""A paper's reference list: split into entries and parsed into authors, year, title, venue
and DOI by rules (no model).

Entries are split at numbered markers ("[12]", "(12)", "12.") or, for author-year lists, at
hanging indents (an entry's first line starts left of its continuation lines). Fields:

- DOI: ``10.NNNN/...`` anywhere in the entry;
- quoted title (IEEE style ``A. Name, "Title," in Venue, 2020``);
- author-year (ACL/APA: ``Names. 2024. Title. Venue.`` or ``Names (2024) Title.``);
- author list first (ACS: ``Name, X.; Name, Y. Title. Venue 2019, 59, 1324.``);
- Vancouver (``Smith J, Lee AB. Title. J Abbr. 2019;12(3):45-67.``);
- arXiv ids (``arXiv:2101.00001``, ``arXiv:hep-th/9901001``) are read apart, never as a year.

No library on PyPI parses these styles from plain text (measured in
``benchmarks/references.py``: refextract reads physics pubnotes, not titles; refkit parses
BibTeX/CSL, not reference strings), hence rules; :func:`parse_entry` and
:func:`parse_entries` are the public interface (also for draft citations).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bayes_app.library.pdf import PageLayout, TextLine
from bayes_app.library.structure import Role, Span

_MARKER = re.compile(r"^\s*(?:\[(\d{1,4})\]|\((\d{1,4})\)|(\d{1,4})\.(?=\s+\S)|(\d{1,4})(?=\s+[A-Z][a-z]+,))\s*")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+[^\s\"'<>.,;)\]]")
_YEAR = re.compile(r"(?<![\d/.:-])((?:19|20)\d{2})[a-z]?(?![\d/])")
_ARXIV = re.compile(r"\barXiv\s*:\s*((?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)", re.I)
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_QUOTED = re.compile(r"[“\"]([^”\"]{8,400}?)[,.]?[”\"]")
# "Surname, X. Y." / "Surname, X.-Y." / "Surname X" units of an author-first list
_AUTHOR_UNIT = r"[A-Z][^\s,;.()]*(?:[ -](?:[a-z]{1,3} )?[A-Z][^\s,;.()]*)*,\s*(?:[A-Z][a-z]?\.[ -]?){1,4}"
_AUTHOR_LIST = re.compile(rf"^(?:{_AUTHOR_UNIT}(?:\s*[;,]\s*|\s*,?\s*(?:and|&)\s+))*{_AUTHOR_UNIT}(?:,?\s*et al\.)?\s*")
# Vancouver: "Surname AB, Surname C, van Dam JP." (initials without dots, a full stop after the list)
_VANC_UNIT = r"(?:[a-z]{1,3} ){0,2}[A-Z][^\s,;.()]*(?:[ -](?:[a-z]{1,3} )?[A-Z][^\s,;.()]*)*? [A-Z]{1,3}(?=[,.])"
_VANCOUVER = re.compile(rf"^((?:{_VANC_UNIT}, )*{_VANC_UNIT}(?:, et al)?)\.\s+")
_SENTENCE_END = re.compile(
    r"(?<![A-Z])(?<!\bvs)(?<!\bet al)(?<!\bi\.e)(?<!\be\.g)[.?!](?=\s+(?:[A-Z(\[“\"0-9]|In\b|arXiv))"
)


@dataclass(frozen=True)
class Reference:
    """One parsed entry; ``raw`` is the entry's text with line breaks and hyphenation joined."""

    raw: str
    page: int
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    title: str | None = None
    venue: str | None = None
    doi: str | None = None
    arxiv: str | None = None

    @property
    def first_author(self) -> str | None:
        """The first author's surname ("Smith" of "Smith, J." / "J. Smith" / "Smith J")."""
        if not self.authors:
            return None
        a = self.authors[0].strip()
        if "," in a and re.fullmatch(r"\s*(?:[A-Z][a-z]?\.?[ -]?)+", a.split(",", 1)[1]):
            return a.split(",")[0].strip() or None
        words = [w for w in a.split() if not re.fullmatch(r"(?:[A-Z]\.?[ -]?){1,4}|[A-Z]{1,3}", w)]
        return (words[-1] if "." in a or len(words) > 1 else words[0]) if words else a


def _join(text: str) -> str:
    # pdfium marks a hyphen it broke a word at with U+FFFE: join the halves.
    text = re.sub(r"\ufffe\s*", "", text).replace("\u00ad", "")
    return " ".join(text.split())


# --------------------------------------------------------------------------- splitting


def _reference_lines(pages: Sequence[PageLayout], spans: Sequence[Sequence[Span]]) -> list[tuple[int, TextLine, str]]:
    out = []
    for page, page_spans in zip(pages, spans, strict=True):
        ref = [s for s in page_spans if s.role == Role.REFERENCE]
        if not ref:
            continue
        for ln in page.lines:
            if any(s.start <= ln.start < s.end for s in ref):
                out.append((page.number, ln, page.text[ln.start : ln.end]))
    return out


def split_entries(pages: Sequence[PageLayout], spans: Sequence[Sequence[Span]]) -> list[tuple[int, str]]:
    """(page, entry text) of every entry of the reference list, in order."""
    lines = _reference_lines(pages, spans)
    if not lines:
        return []
    numbered = sum(bool(_MARKER.match(t)) for _, _, t in lines) >= 0.3 * len(lines)
    entries: list[tuple[int, list[str]]] = []
    # Column left edges: the smallest x of reference lines in each (page, column) group.
    col_left: dict[tuple[int, int], float] = {}
    for page, ln, _ in lines:
        key = (page, int(ln.x0 // 150))
        col_left[key] = min(col_left.get(key, ln.x0), ln.x0)

    def starts_entry(page: int, ln: TextLine, text: str, prev: tuple[int, TextLine, str] | None) -> bool:
        if numbered:
            return bool(_MARKER.match(text))
        if not ln.size:  # no geometry: a line ending an entry with "." then a capital
            return prev is None or prev[2].rstrip().endswith(".")
        left = col_left[(page, int(ln.x0 // 150))]
        return ln.x0 <= left + max(2.0, 0.25 * ln.size)

    prev = None
    for item in lines:
        page, ln, text = item
        if not entries or starts_entry(page, ln, text, prev):
            entries.append((page, [text]))
        else:
            entries[-1][1].append(text)
        prev = item
    out = []
    for page, parts in entries:
        # A hyphen pdfium kept at a line end ("searching–") stays; other breaks become spaces.
        text = _join(" ".join(parts))
        if len(text) >= 12:
            out.append((page, text))
    return out


# --------------------------------------------------------------------------- fields


def _split_authors(text: str) -> list[str]:
    text = re.sub(r"\bet al\.?", "", text).strip(" ,;")
    text = re.sub(r"(?<=[^\W\d_]{2})\.$", "", text)  # "Last." but not the initial in "Smith, J."
    if not text:
        return []
    if ";" in text:
        parts = [p.strip() for p in text.split(";")]
        parts = [re.sub(r"^(?:and|&)\s+", "", p) for p in parts]
    else:
        # "Surname, X., Surname, Y." vs "First Last, First Last, and First Last"
        text = re.sub(r",?\s+(?:and|&)\s+", ", ", text)
        pieces = [p.strip() for p in text.split(",") if p.strip()]
        if (
            len(pieces) >= 2
            and len(pieces) % 2 == 0
            and all(re.fullmatch(r"(?:[A-Z][a-z]?\.?[ -]?)+|[A-Z]{1,3}", p) for p in pieces[1::2])
            and not any(re.match(r"[A-Z]\.", p) for p in pieces[::2])  # "A. Chen, B. Li": two names
        ):
            parts = [f"{a}, {b}" for a, b in zip(pieces[::2], pieces[1::2])]
        else:
            parts = pieces
    return [" ".join(p.split()) for p in parts if p and len(p) <= 80][:100]


def _first_sentence(text: str) -> tuple[str, str]:
    m = _SENTENCE_END.search(text)
    if not m:
        return text.strip(), ""
    end = m.end() if text[m.start()] in "?!" else m.start()
    return text[:end].strip(), text[m.end() :].strip()


def _venue(rest: str, year: str | None) -> str | None:
    rest = _URL.sub("", rest)
    rest = _DOI.sub("", rest)
    rest = re.sub(r"\b(?:doi|DOI)\s*:?\s*", "", rest)
    if year:
        rest = re.sub(rf"\(?\b{year}[a-z]?\b\)?", "", rest)
    rest = re.sub(r"^In:?\s+", "", rest.strip())
    rest = re.sub(r"[\s,.;:]+$", "", rest).strip(" ,.;:")
    return rest or None


def parse_entry(text: str, page: int = 0) -> Reference:
    """Parse one entry (see the module docstring for the styles understood)."""
    raw = text
    body = _MARKER.sub("", text, count=1).strip()
    arxiv_m = _ARXIV.search(body)
    arxiv = arxiv_m.group(1) if arxiv_m else None
    if arxiv_m:  # "arXiv:2001.12076" must not read as the year 2076
        body = body[: arxiv_m.start()] + "arXiv:\u2063" + body[arxiv_m.end() :]  # restored below
    doi_m = _DOI.search(body)
    doi = doi_m.group(0) if doi_m else None
    years = [m for m in _YEAR.finditer(body) if not (doi_m and doi_m.start() <= m.start() < doi_m.end())]
    authors: list[str] = []
    title = venue = None
    year_s: str | None = None

    quoted = _QUOTED.search(body)
    m_ay = re.match(r"^(?P<authors>.{3,600}?)[.,]?\s*\(?(?P<year>(?:19|20)\d{2})[a-z]?\)?[.,:]\s+(?P<rest>.+)$", body)
    m_list = _AUTHOR_LIST.match(body)
    surname_first = bool(m_list) and bool(
        re.match(r"^[^,;]{2,40}, (?:[A-Z][a-z]?\.[ -]?)+(?:;|,? and |,? & |\s+[A-Z(])", body)
    )
    m_vanc = _VANCOUVER.match(body)
    if m_vanc and not quoted:
        authors = _split_authors(m_vanc.group(1))
        title, rest = _first_sentence(body[m_vanc.end() :])
        year_s = years[-1].group(1) if years else None
        venue = _venue(re.sub(r";.*$", "", rest), year_s)
    elif quoted and quoted.start() < 400:
        authors = _split_authors(body[: quoted.start()])
        title = quoted.group(1).strip(" ,.")
        year_s = years[-1].group(1) if years else None
        venue = _venue(body[quoted.end() :], year_s)
    elif m_ay and not surname_first and not _YEAR.search(m_ay["authors"]) and len(m_ay["authors"].split()) <= 80:
        authors = _split_authors(m_ay["authors"])
        year_s = m_ay["year"]
        title, rest = _first_sentence(m_ay["rest"])
        venue = _venue(rest, None)
    else:
        if m_list and m_list.end() > 3:
            authors = _split_authors(m_list.group(0))
            rest = body[m_list.end() :].strip()
            if m_year := re.match(r"^\(?((?:19|20)\d{2})[a-z]?\)?[.,:]?\s*", rest):  # APA "(2020)."
                rest = rest[m_year.end() :]
        else:
            head, rest = _first_sentence(body)
            authors = _split_authors(head) if len(head) < 300 else []
        title, rest = _first_sentence(rest)
        year_s = (
            years[0].group(1)
            if years and surname_first and years[0].start() < 3 + (m_list.end() if m_list else 0)
            else (years[-1].group(1) if years else None)
        )
        venue = _venue(rest, year_s)
    if title:
        title = _URL.sub("", title).strip(" ,.;:")
        if len(title.split()) < 2 or _YEAR.fullmatch(title):
            title = None
    if arxiv and venue:
        venue = venue.replace("\u2063", arxiv)
    return Reference(
        raw=raw,
        page=page,
        authors=authors,
        year=int(year_s) if year_s else None,
        title=title or None,
        venue=venue,
        doi=doi,
        arxiv=arxiv,
    )


def parse_entries(entries: Sequence[str]) -> list[Reference]:
    """Parse a list of entries (list markers such as "[3]", "(3)", "3." allowed)."""
    return [parse_entry(e) for e in entries]


def parse_references(pages: Sequence[PageLayout], spans: Sequence[Sequence[Span]]) -> list[Reference]:
    """Every entry of the document's reference list, parsed."""
    return [parse_entry(text, page) for page, text in split_entries(pages, spans)]
