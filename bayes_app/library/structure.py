"""What each part of a paper is: body text, heading, title block, running header, figure,
caption, equation, footnote or reference list — from the page geometry pdfium gives.

Input is :class:`bayes_app.library.pdf.PageLayout` (lines with boxes and printed font
sizes, picture regions); output is, per page, a list of :class:`Span` — ``[start, end)``
offsets into that page's text with a :class:`Role` and the section path ("4 Methodology ›
4.3 Selector"). Every visible line belongs to exactly one span; the line breaks between
spans belong to none. No model, only rules (in order of precedence, see :func:`_classify`):

- margin text (arXiv stamps) and lines repeated at the top/bottom of many pages, page numbers
  → ``header_footer``;
- "Figure n:" / "Table n." lines and their continuation (same size, same column, no gap)
  → ``caption``;
- text inside image/form regions, full-width floats of two-column papers, runs of
  number-heavy lines (tables), short small-font lines → ``figure``;
- the lines of page 1 before the abstract or first section → ``front_matter``; page-1
  footnotes about contributions and affiliations too;
- everything after a "References"/"Bibliography" heading up to the next real section (an
  appendix), and runs of numbered entries with years when there is no heading → ``reference``;
- small lines under the body text → ``footnote``; math-heavy lines → ``equation``.

Consumers: chunking (:func:`segments` groups spans into chunkable runs), search filters
(:data:`SEARCH_EXCLUDED`), claim extraction (:data:`QUOTABLE`, :func:`role_at`).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from bayes_app.library.pdf import PageLayout, TextLine


class Role(StrEnum):
    """The role of a span of page text; stored on chunks and in the index payload."""

    BODY = "body"
    HEADING = "heading"
    FRONT_MATTER = "front_matter"  # title, authors, affiliations, e-mails, page-1 notes
    HEADER_FOOTER = "header_footer"  # running heads, page numbers, margin stamps
    FIGURE = "figure"  # text inside figures and tables
    CAPTION = "caption"
    EQUATION = "equation"
    FOOTNOTE = "footnote"
    REFERENCE = "reference"


ROLES: tuple[str, ...] = tuple(r.value for r in Role)
# Search leaves these out unless asked (API include_roles / all_roles).
SEARCH_EXCLUDED: frozenset[str] = frozenset({Role.REFERENCE, Role.HEADER_FOOTER, Role.FRONT_MATTER})
# Claims and quotes may come only from these.
QUOTABLE: frozenset[str] = frozenset({Role.BODY, Role.CAPTION})
# Shown as a label next to search hits.
ROLE_LABELS: dict[str, str] = {
    Role.FIGURE: "Figure text", Role.CAPTION: "Caption", Role.EQUATION: "Equation",
    Role.FOOTNOTE: "Footnote", Role.REFERENCE: "Reference list", Role.HEADER_FOOTER: "Page header",
    Role.FRONT_MATTER: "Title and authors", Role.HEADING: "Heading",
}
# Bump when the rules change: documents analysed by an older version are re-analysed in
# the background (unchanged passages keep their ids and vectors).
VERSION = 1
SECTION_SEP = " › "


@dataclass(frozen=True, slots=True)
class Span:
    """``page_text[start:end]`` has ``role``; ``section`` is the heading path it sits under."""

    start: int
    end: int
    role: str
    section: str = ""

    def to_json(self) -> list:
        return [self.start, self.end, self.role, self.section]

    @classmethod
    def from_json(cls, data: Sequence) -> Span:
        return cls(int(data[0]), int(data[1]), str(data[2]), str(data[3]) if len(data) > 3 else "")


def role_at(spans: Sequence[Span], offset: int) -> str | None:
    """The role of the span containing ``offset`` (None between spans or outside)."""
    for s in spans:
        if s.start <= offset < s.end:
            return s.role
    return None


def roles_in(spans: Sequence[Span], start: int, end: int) -> set[str]:
    """Roles of all spans overlapping ``[start, end)``."""
    return {s.role for s in spans if s.start < end and start < s.end}


# --------------------------------------------------------------------------- patterns

_CAPTION = re.compile(
    r"^\s*(?:Figure|Fig\.?|Table|Tab\.|Scheme|Chart|Algorithm|Listing|Exhibit|Box|"
    r"Supplementary\s+(?:Figure|Table))\s*(?:S?\d+|[IVX]+)[a-z]?\s*(?:[:.|—–-]|\s*$)",
    re.I,
)
_PAGE_NUMBER = re.compile(r"^\s*(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?\s*(?:(?:of|/)\s*\d{1,4})?\s*$", re.I)
_REF_HEADING = re.compile(
    r"^\s*(?:[\dIVX]+\.?\s+)?(?:references?(?:\s+and\s+notes)?|bibliography|literature\s+cited|"
    r"works\s+cited|cited\s+literature|reference\s+list)\s*:?\s*$",
    re.I,
)
_KNOWN_HEADINGS = re.compile(
    r"^\s*(?:[\dIVX]+\.?\s+)?(?:abstract|introduction|background|related\s+work|methods?|methodology|"
    r"materials\s+and\s+methods|experiments?|experimental(?:\s+section)?|results(?:\s+and\s+discussion)?|"
    r"discussion|conclusions?|summary|acknowledge?ments?|appendix|appendices|"
    r"supplementary\s+(?:material|information)|limitations|future\s+work|keywords|"
    r"author\s+contributions|data\s+availability|conflicts?\s+of\s+interest|funding)\s*:?\s*$",
    re.I,
)
_NUMBERED_HEADING = re.compile(
    r"^\s*(?P<num>(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?)|(?:[A-H](?:\.\d{1,2}){0,2}\.?)|(?:[IVX]{1,4}\.))"
    r"\s+(?P<title>[A-Z][^\n]{1,90})$"
)
_APPENDIX_HEADING = re.compile(r"^\s*(?:appendix\b|appendices\b|supplementary\b|[A-H](?:\.\d+)?\.?\s+[A-Z])")
_FRONT_LINE = re.compile(
    r"@|e-?mail|\bcorrespond|equal\s+contribution|contributed\s+equally|universit|institut|"
    r"department|dept\.|laborator|school\s+of|college|\binc\.|received|accepted|published|"
    r"copyright|©|licen[cs]e|keywords?\s*:|doi\s*:|orcid|affiliat|preprint|arxiv",
    re.I,
)
_REF_ENTRY_START = re.compile(
    r"^\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\d{1,4}\.\s+[A-Z]|\d{1,4}\s+[A-Z][a-z]+,)"
)
_YEAR = re.compile(r"\b(?:19|20)\d{2}[a-z]?\b")
_FOOTNOTE_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆✉]+")
_MATH_CHARS = set("=+−×÷∑∏∫√≤≥≈≠∈∉∀∃∂∇∞±∝⊂⊆∪∩→←↔⇒⇔^_|‖∥·⋅")
_GREEK = re.compile(r"[\u0370-\u03ff\u1d00-\u1dbf\U0001d400-\U0001d7ff]")
_WORD = re.compile(r"[^\W\d_]{3,}")
_TOKEN = re.compile(r"\S+")
_NUMERIC_TOKEN = re.compile(r"^[(\[]?[-+±~<>≤≥]?\d[\d.,:/%×x±]*[)\]]?\*?$|^[-–—/|·*†‡✓✗]+$")


@lru_cache(maxsize=8192)
def _clean(text: str) -> str:
    return " ".join(text.replace("\ufffe", "").replace("\u00ad", "").split())


# --------------------------------------------------------------------------- document stats


@dataclass(frozen=True, slots=True)
class _DocStats:
    body_size: float
    two_columns: bool
    gutter: tuple[float, float]  # x range between the columns (two-column documents)
    text_left: float  # leftmost x of body text (margins are outside)
    text_right: float
    repeated: frozenset[str]  # normalised texts of running heads/feet


def _norm_repeat(text: str) -> str:
    return re.sub(r"\d+", "#", _clean(text).lower())


def _doc_stats(pages: Sequence[PageLayout]) -> _DocStats:
    sizes: Counter[float] = Counter()
    for p in pages:
        for ln in p.lines:
            if ln.size > 0:
                sizes[round(ln.size * 2) / 2] += ln.end - ln.start
    body_size = sizes.most_common(1)[0][0] if sizes else 0.0
    body = [(ln, p) for p in pages for ln in p.lines
            if body_size and abs(ln.size - body_size) <= 0.6 and ln.end - ln.start > 30]
    width = statistics.median(p.width for p in pages) if pages else 612.0
    lefts = [ln.x0 for ln, _ in body]
    text_left = min(lefts, default=0.0)
    text_right = max((ln.x1 for ln, _ in body), default=width)
    # Two columns: many body lines start right of the middle and few cross it.
    right_starts = [ln for ln, p in body if ln.x0 > p.width * 0.45]
    crossing = [ln for ln, p in body if ln.x0 < p.width * 0.4 and ln.x1 > p.width * 0.6]
    two = len(right_starts) > 0.25 * max(1, len(body)) and len(crossing) < 0.25 * max(1, len(body))
    gutter = (width / 2, width / 2)
    if two:
        left_col_right = statistics.median(
            [ln.x1 for ln, p in body if ln.x0 < p.width * 0.4 and ln.x1 < p.width * 0.6] or [width / 2])
        right_col_left = statistics.median([ln.x0 for ln in right_starts])
        gutter = (min(left_col_right, right_col_left), max(left_col_right, right_col_left))
    # Running heads/feet: the same text (numbers folded) near the top or bottom of many pages.
    seen: Counter[str] = Counter()
    for p in pages:
        keys = set()
        for ln in p.lines:
            if ln.size and (ln.top < p.height * 0.09 or ln.bottom > p.height * 0.91):
                keys.add(_norm_repeat(p.text[ln.start:ln.end]))
        seen.update(keys)
    need = max(3, int(0.3 * len(pages)))
    repeated = frozenset(k for k, n in seen.items() if n >= need and k.strip("# "))
    return _DocStats(body_size, two, gutter, text_left, text_right, repeated)


# --------------------------------------------------------------------------- line features


@lru_cache(maxsize=8192)
def _math_score(text: str) -> float:
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    math = sum(c in _MATH_CHARS for c in chars) + len(_GREEK.findall(text))
    return math / len(chars)


@lru_cache(maxsize=8192)
def _is_equation(text: str) -> bool:
    t = _clean(text)
    words = _WORD.findall(t)
    long_words = [w for w in words if len(w) >= 4 and w.islower()]
    wordy = sum(len(w) for w in words) / max(1, len(t.replace(" ", "")))
    if re.search(r"[=≤≥≈]", t) and len(long_words) <= 1 and wordy < 0.5 and len(t) < 160:
        return True
    if re.search(r"\(\d{1,3}[a-z]?\)\s*$", t) and _math_score(t) >= 0.05 and len(long_words) <= 4:
        return True
    return _math_score(t) >= 0.2 and len(long_words) <= 1


@lru_cache(maxsize=8192)
def _is_tabular(text: str) -> bool:
    tokens = _TOKEN.findall(_clean(text))
    if len(tokens) < 2:
        return False
    numeric = sum(bool(_NUMERIC_TOKEN.match(t)) for t in tokens)
    return numeric >= 3 and numeric / len(tokens) >= 0.5


def _plausible_number(num: str, last: int) -> bool:
    """A section number follows the previous one ("8" right after "5.1" is a line of text)."""
    top = num.split(".")[0]
    return not top.isdigit() or last == 0 or last <= int(top) <= last + 1


def _heading_level(text: str, size: float, stats: _DocStats, last_number: int = 0,
                   appendix: bool = False) -> tuple[int, str] | None:
    """(level, heading text) if the line looks like a section heading."""
    t = _clean(text)
    if not t or len(t) > 100 or len(t.split()) > 14 or t.endswith((",", ";")):
        return None
    if _REF_HEADING.match(t) or _KNOWN_HEADINGS.match(t):
        m = _NUMBERED_HEADING.match(t)
        level = (m["num"].rstrip(".").count(".") + 1) if m else 1
        return level, t
    m = _NUMBERED_HEADING.match(t)
    big = stats.body_size > 0 and size >= stats.body_size * 1.12
    if (m and not t.endswith(".") and size >= stats.body_size - 0.6 and not _YEAR.search(m["title"])
            and ". " not in m["title"] and _plausible_number(m["num"], last_number)
            and (m["num"][0].isdigit() or appendix)):
        title = m["title"]
        words = title.split()
        # Headings are short and mostly capitalised; body lines that start with a number are not.
        caps = sum(w[0].isupper() for w in words if w[0].isalpha())
        if len(words) <= 10 and (big or caps >= max(1, len(words) // 2) or len(words) <= 3):
            if _math_score(t) < 0.1 and not _is_tabular(title):
                return m["num"].rstrip(".").count(".") + 1, t
    if (big and len(t.split()) <= 12 and sum(c.isalpha() for c in t) >= 3 and not t.endswith(".")
            and _math_score(t) < 0.05):
        return 1, t
    return None


# --------------------------------------------------------------------------- classification


@dataclass(slots=True)
class _Line:
    ln: TextLine
    text: str
    role: str = Role.BODY
    section: str = ""
    heading_level: int = 0
    small_label: bool = False


def _in_region(ln: TextLine, regions: Iterable[tuple[float, float, float, float]]) -> bool:
    cx, cy = (ln.x0 + ln.x1) / 2, (ln.top + ln.bottom) / 2
    return any(x0 - 2 <= cx <= x1 + 2 and t - 2 <= cy <= b + 2 for x0, t, x1, b in regions)


def _continues(lines: list[_Line], i: int) -> bool:
    """True if line ``i`` continues the sentence of the line before it (body text that
    happens to begin with "Table 10.")."""
    if i == 0:
        return False
    prev, cur = lines[i - 1], lines[i].ln
    gap = cur.top - prev.ln.bottom
    return (prev.role == Role.BODY and abs(prev.ln.size - cur.size) <= 0.3
            and prev.ln.x0 < cur.x1 and cur.x0 < prev.ln.x1 and -2 <= gap < 0.8 * max(cur.size, 1)
            and not prev.text.rstrip().endswith((".", ":", "!", "?")))


def _caption_runs(page: PageLayout, lines: list[_Line], stats: _DocStats) -> None:
    """Mark caption starts and their continuation lines."""
    i = 0
    while i < len(lines):
        cur = lines[i]
        if not _CAPTION.match(cur.text) or cur.role == Role.HEADER_FOOTER or _continues(lines, i):
            i += 1
            continue
        cur.role = Role.CAPTION
        prev = cur.ln
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            ln = nxt.ln
            gap = ln.top - prev.bottom
            spacing = max(prev.size, 1.0)
            same_size = abs(ln.size - cur.ln.size) <= 0.45
            same_column = ln.x0 >= cur.ln.x0 - 6 and ln.x0 <= cur.ln.x1
            if (not same_size or not same_column or gap > 1.2 * spacing or gap < -2
                    or _CAPTION.match(nxt.text) or nxt.role == Role.HEADER_FOOTER):
                break
            # Same-size body text right under a body-size caption: stop at a paragraph break.
            if stats.body_size and abs(ln.size - stats.body_size) <= 0.3 and gap > 0.8 * spacing:
                break
            nxt.role = Role.CAPTION
            prev = ln
            j += 1
        i = j


def _classify_page(page: PageLayout, stats: _DocStats, state: dict) -> list[_Line]:
    lines = [_Line(ln, page.text[ln.start:ln.end]) for ln in page.lines]
    has_geometry = any(ln.size for ln in page.lines)
    body = stats.body_size
    # 1. margins, running heads/feet, page numbers
    for x in lines:
        ln = x.ln
        if not has_geometry:
            continue
        band = ln.top < page.height * 0.09 or ln.bottom > page.height * 0.91
        t = _clean(x.text)
        if ln.x1 < stats.text_left - 4 or ln.x0 > stats.text_right + 4:
            x.role = Role.HEADER_FOOTER
        elif band and (_norm_repeat(t) in stats.repeated
                       or (_PAGE_NUMBER.match(t) and ln.size >= 0.75 * stats.body_size)):
            x.role = Role.HEADER_FOOTER
        elif (ln.top < page.height * 0.06 or ln.bottom > page.height * 0.94) and len(t) < 80 \
                and (re.search(r"arxiv|preprint|doi|www\.|https?://|©|journal|vol\.", t, re.I)):
            x.role = Role.HEADER_FOOTER
    # 2. captions
    _caption_runs(page, lines, stats)
    # 3. figure regions (images, forms)
    for x in lines:
        if x.role == Role.BODY and _in_region(x.ln, page.regions):
            x.role = Role.FIGURE
    # 4. headings, sections, reference zone, front matter
    first_page = page.number == 1
    in_front = first_page and not state.get("front_done")
    for x in lines:
        if x.role != Role.BODY:
            if x.role != Role.HEADER_FOOTER:
                x.section = SECTION_SEP.join(h for _, h in state.get("path", []))
            continue
        level = (_heading_level(x.text, x.ln.size, stats, state.get("number", 0), state.get("refs_seen", False))
                 if has_geometry else None)
        t = _clean(x.text)
        if level is not None and in_front and not (_KNOWN_HEADINGS.match(t) or re.match(r"\s*\d", t)):
            level = None  # the title and other large lines of the title block
        if level is not None:
            lvl, title = level
            x.role, x.heading_level = Role.HEADING, lvl
            if (num := _NUMBERED_HEADING.match(t)) and num["num"].split(".")[0].isdigit():
                state["number"] = int(num["num"].split(".")[0])
            if _REF_HEADING.match(t):
                state["refs"] = state["refs_seen"] = True
            elif state.get("refs") and (_APPENDIX_HEADING.match(t) or not _KNOWN_HEADINGS.match(t)
                                         or re.match(r"^\s*(appendix|supplementary)", t, re.I)):
                state["refs"] = False
            path: list[tuple[int, str]] = state.setdefault("path", [])
            while path and path[-1][0] >= lvl:
                path.pop()
            path.append((lvl, title))
            in_front = False
            state["front_done"] = True
        x.section = SECTION_SEP.join(h for _, h in state.get("path", []))
        if x.role == Role.HEADING:
            continue
        if in_front:
            x.role = Role.FRONT_MATTER
        elif state.get("refs"):
            x.role = Role.REFERENCE
    if first_page:
        state["front_done"] = True
    # A page-1 title block that the heading rule did not end (no "Abstract"): keep only the
    # lines above the first paragraph of body-size text as front matter.
    if first_page and not any(x.role == Role.HEADING for x in lines):
        _trim_front_matter(lines, body)
    # 5. the rest: footnotes, floats, tables, small figure labels, equations
    if has_geometry:
        _footnotes(page, lines, body)
    for x in lines:
        if x.role == Role.BODY and _is_equation(x.text):
            x.role = Role.EQUATION
    if has_geometry:
        _footnotes(page, lines, body)
    for x in lines:
        if x.role not in (Role.BODY, Role.FRONT_MATTER, Role.REFERENCE) or not has_geometry:
            continue
        ln, t = x.ln, _clean(x.text)
        small = body and ln.size < body - 0.6
        if x.role != Role.BODY:
            continue
        if (stats.two_columns and ln.x0 < stats.gutter[0] - 8 and ln.x1 > stats.gutter[1] + 8
                and ln.bottom - ln.top < 2.5 * max(ln.size, 1)):
            x.role = Role.FIGURE  # a full-width float in a two-column paper
        elif small and len(t.split()) <= 10 and ln.size < body * 0.85:
            x.role, x.small_label = Role.FIGURE, True
    _table_runs(lines)
    _unheaded_references(lines, state)
    if has_geometry:
        _inline_fragments(lines, body)
    return lines


def _footnotes(page: PageLayout, lines: list[_Line], body: float) -> None:
    """Small lines in the lower part of a page that sit under larger text of their column
    (or under another footnote line) are footnotes; on page 1 notes about authors are front
    matter."""
    order = sorted(range(len(lines)), key=lambda k: lines[k].ln.top)
    for k in order:
        x = lines[k]
        ln = x.ln
        if (x.role not in (Role.BODY, Role.REFERENCE) or not body or ln.size >= body - 0.6
                or ln.top < page.height * 0.55 or _math_score(x.text) > 0.04):
            continue
        above = [y for y in lines if y is not x and y.role != Role.HEADER_FOOTER
                 and y.ln.x0 < ln.x1 and ln.x0 < y.ln.x1 and y.ln.bottom <= ln.top + 2]
        if not above:
            continue
        near = max(above, key=lambda y: y.ln.bottom)
        if near.role in (Role.FOOTNOTE, Role.FRONT_MATTER) and near.ln.top > page.height * 0.55 \
                or near.ln.size > ln.size + 0.6 and near.role in (Role.BODY, Role.REFERENCE, Role.EQUATION):
            if page.number == 1 and (_FRONT_LINE.search(x.text) or near.role == Role.FRONT_MATTER):
                x.role = Role.FRONT_MATTER
            else:
                x.role = Role.FOOTNOTE


def _inline_fragments(lines: list[_Line], body: float) -> None:
    """Sub- and superscripts that pdfium put on lines of their own take the role of the
    larger line they sit on; small pieces next to equation lines belong to the equation."""
    for k, x in enumerate(lines):
        if len(x.text.strip()) > 40 or x.role in (Role.CAPTION, Role.HEADER_FOOTER, Role.HEADING):
            continue
        mid = (x.ln.top + x.ln.bottom) / 2
        for y in lines[max(0, k - 1):k + 2]:
            if (y is x or y.small_label or y.role in (Role.HEADER_FOOTER, Role.CAPTION)
                    or y.ln.size <= x.ln.size + 0.5):
                continue
            if y.ln.top - 3 <= mid <= y.ln.bottom + 3:
                x.role, x.small_label = y.role, False
                break
    changed = True
    while changed:
        changed = False
        for k, x in enumerate(lines):
            if not ((x.small_label and x.role == Role.FIGURE)
                    or (x.role == Role.FOOTNOTE and len(x.text.strip()) <= 40)):
                continue
            near = {lines[j].role for j in (k - 1, k + 1) if 0 <= j < len(lines)}
            if Role.EQUATION in near:
                x.role, changed = Role.EQUATION, True


def _trim_front_matter(lines: list[_Line], body: float) -> None:
    """Page 1 without an "Abstract"/first-section heading: the title block ends at the first
    body-size line that is not an author, affiliation or e-mail line."""
    for k, x in enumerate(lines):
        if x.role != Role.FRONT_MATTER:
            continue
        if body and abs(x.ln.size - body) <= 0.6 and not _FRONT_LINE.search(x.text) \
                and not _looks_like_names(x.text):
            for y in lines[k:]:
                if y.role == Role.FRONT_MATTER:
                    y.role = Role.BODY
            return


def _looks_like_names(text: str) -> bool:
    parts = [p.strip() for p in re.split(r",|\band\b|;", _FOOTNOTE_MARKS.sub(" ", _clean(text))) if p.strip()]
    return len(parts) >= 2 and all(
        1 <= len(p.split()) <= 4 and all(w[:1].isupper() for w in p.split()) for p in parts)


def _table_runs(lines: list[_Line]) -> None:
    """Runs of two or more number-heavy lines (table rows) are figure/table content, and so
    is a short header line right above such a run."""
    k = 0
    while k < len(lines):
        if lines[k].role in (Role.BODY, Role.EQUATION) and _is_tabular(lines[k].text):
            j = k
            while j < len(lines) and lines[j].role in (Role.BODY, Role.EQUATION) and _is_tabular(lines[j].text):
                j += 1
            if j - k >= 2:
                for x in lines[k:j]:
                    x.role = Role.FIGURE
                head = lines[k - 1] if k else None
                if head and head.role == Role.BODY and len(head.text) < 80 and not head.text.rstrip().endswith("."):
                    head.role = Role.FIGURE
            k = j
        else:
            k += 1


def _unheaded_references(lines: list[_Line], state: dict) -> None:
    """A run of numbered entries that carry years is a reference list even without a heading."""
    if state.get("refs"):
        return
    starts = [k for k, x in enumerate(lines) if x.role == Role.BODY and _REF_ENTRY_START.match(x.text)]
    if len(starts) < 3:
        return
    with_year = 0
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        entry = " ".join(x.text for x in lines[a:b] if x.role == Role.BODY)
        with_year += bool(_YEAR.search(entry))
    if with_year < 0.7 * len(starts):
        return
    for x in lines[starts[0]:]:
        if x.role == Role.BODY:
            x.role = Role.REFERENCE


def analyze(pages: Sequence[PageLayout]) -> list[list[Span]]:
    """Role spans of every page (same order as ``pages``)."""
    stats = _doc_stats(pages)
    state: dict = {}
    out: list[list[Span]] = []
    for page in pages:
        lines = _classify_page(page, stats, state)
        spans: list[Span] = []
        for x in lines:
            role = str(x.role)
            if spans and spans[-1].role == role and spans[-1].section == x.section:
                spans[-1] = Span(spans[-1].start, x.ln.end, role, x.section)
            else:
                spans.append(Span(x.ln.start, x.ln.end, role, x.section))
        out.append(spans)
    return out


# --------------------------------------------------------------------------- chunking support

_MERGE_INTO_BODY = frozenset({Role.HEADING, Role.EQUATION})
_SHORT_EQUATION_CHARS = 200


def segments(spans: Sequence[Span]) -> list[Span]:
    """Group a page's spans into runs to chunk separately.

    A heading joins the run after it (a heading alone is no passage), and a short
    equation between body text stays inside that body passage; every other role change,
    and every section change, starts a new run.
    """
    out: list[Span] = []
    pending_heading: Span | None = None
    for s in spans:
        role = s.role
        if role == Role.HEADING:
            if pending_heading is None:
                pending_heading = s
            else:
                pending_heading = Span(pending_heading.start, s.end, Role.HEADING, s.section)
            continue
        if role == Role.EQUATION and s.end - s.start <= _SHORT_EQUATION_CHARS and out \
                and out[-1].role == Role.BODY and out[-1].section == s.section:
            out[-1] = Span(out[-1].start, s.end, Role.BODY, s.section)
            continue
        start = s.start
        if pending_heading is not None:
            if role != Role.HEADER_FOOTER:
                start = pending_heading.start  # "References" opens the reference run, etc.
            else:
                out.append(Span(pending_heading.start, pending_heading.end, Role.BODY,
                                pending_heading.section))
            pending_heading = None
        if out and out[-1].role == role and out[-1].section == s.section:
            out[-1] = Span(out[-1].start, s.end, role, s.section)
        else:
            out.append(Span(start, s.end, role, s.section))
    if pending_heading is not None:
        if out and out[-1].role == Role.BODY:
            out[-1] = Span(out[-1].start, pending_heading.end, Role.BODY, out[-1].section)
        else:
            out.append(Span(pending_heading.start, pending_heading.end, Role.BODY, pending_heading.section))
    return out
