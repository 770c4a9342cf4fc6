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

Consumers: chunking (:func:`chunking.segments` groups spans into chunkable runs), search filters
(:data:`SEARCH_EXCLUDED`), claim extraction (:data:`QUOTABLE`, :func:`role_at`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bayes_app.library.line_features import (
    APPENDIX_HEADING,
    CAPTION,
    FOOTNOTE_MARKS,
    FRONT_LINE,
    KNOWN_HEADINGS,
    NUMBERED_HEADING,
    PAGE_NUMBER,
    REF_ENTRY_START,
    REF_HEADING,
    YEAR,
    DocStats,
    clean_line,
    doc_stats,
    heading_level,
    is_equation,
    is_tabular,
    math_score,
    norm_repeat,
)
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
    Role.FIGURE: "Figure text",
    Role.CAPTION: "Caption",
    Role.EQUATION: "Equation",
    Role.FOOTNOTE: "Footnote",
    Role.REFERENCE: "Reference list",
    Role.HEADER_FOOTER: "Page header",
    Role.FRONT_MATTER: "Title and authors",
    Role.HEADING: "Heading",
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
    return (
        prev.role == Role.BODY
        and abs(prev.ln.size - cur.size) <= 0.3
        and prev.ln.x0 < cur.x1
        and cur.x0 < prev.ln.x1
        and -2 <= gap < 0.8 * max(cur.size, 1)
        and not prev.text.rstrip().endswith((".", ":", "!", "?"))
    )


def _caption_runs(lines: list[_Line], stats: DocStats) -> None:
    """Mark caption starts and their continuation lines."""
    i = 0
    while i < len(lines):
        cur = lines[i]
        if not CAPTION.match(cur.text) or cur.role == Role.HEADER_FOOTER or _continues(lines, i):
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
            if (
                not same_size
                or not same_column
                or gap > 1.2 * spacing
                or gap < -2
                or CAPTION.match(nxt.text)
                or nxt.role == Role.HEADER_FOOTER
            ):
                break
            # Same-size body text right under a body-size caption: stop at a paragraph break.
            if stats.body_size and abs(ln.size - stats.body_size) <= 0.3 and gap > 0.8 * spacing:
                break
            nxt.role = Role.CAPTION
            prev = ln
            j += 1
        i = j


def _classify_page(page: PageLayout, stats: DocStats, state: dict) -> list[_Line]:
    lines = [_Line(ln, page.text[ln.start : ln.end]) for ln in page.lines]
    has_geometry = any(ln.size for ln in page.lines)
    _page_furniture(page, lines, stats, has_geometry)
    _sections(page, lines, stats, state, has_geometry)
    _small_print(page, lines, stats, state, has_geometry)
    return lines


def _page_furniture(page: PageLayout, lines: list[_Line], stats: DocStats, has_geometry: bool) -> None:
    """Steps 1-3: margins, running heads/feet and page numbers; captions; figure regions."""
    # 1. margins, running heads/feet, page numbers
    if has_geometry:
        for x in lines:
            if _is_running_line(x, page, stats):
                x.role = Role.HEADER_FOOTER
    # 2. captions
    _caption_runs(lines, stats)
    # 3. figure regions (images, forms)
    for x in lines:
        if x.role == Role.BODY and _in_region(x.ln, page.regions):
            x.role = Role.FIGURE


def _sections(page: PageLayout, lines: list[_Line], stats: DocStats, state: dict, has_geometry: bool) -> None:
    """Step 4: headings, sections, reference zone, front matter."""
    first_page = page.number == 1
    _zones(lines, stats, state, has_geometry, in_front=first_page and not state.get("front_done"))
    if first_page:
        state["front_done"] = True
    # A page-1 title block that the heading rule did not end (no "Abstract"): keep only the
    # lines above the first paragraph of body-size text as front matter.
    if first_page and not any(x.role == Role.HEADING for x in lines):
        _trim_front_matter(lines, stats.body_size)


def _small_print(page: PageLayout, lines: list[_Line], stats: DocStats, state: dict, has_geometry: bool) -> None:
    """Step 5, the rest: footnotes, floats, tables, small figure labels, equations."""
    body = stats.body_size
    if has_geometry:
        _footnotes(page, lines, body)
    for x in lines:
        if x.role == Role.BODY and is_equation(x.text):
            x.role = Role.EQUATION
    if has_geometry:
        _footnotes(page, lines, body)
        _floats(lines, stats)
    _table_runs(lines)
    _unheaded_references(lines, state)
    if has_geometry:
        _inline_fragments(lines)


def _is_running_line(x: _Line, page: PageLayout, stats: DocStats) -> bool:
    """Outside the text block, a running head or foot, a page number, or a journal or preprint
    line at the page's very edge."""
    ln = x.ln
    band = ln.top < page.height * 0.09 or ln.bottom > page.height * 0.91
    t = clean_line(x.text)
    if ln.x1 < stats.text_left - 4 or ln.x0 > stats.text_right + 4:
        return True
    if band and (norm_repeat(t) in stats.repeated or (PAGE_NUMBER.match(t) and ln.size >= 0.75 * stats.body_size)):
        return True
    return bool(
        (ln.top < page.height * 0.06 or ln.bottom > page.height * 0.94)
        and len(t) < 80
        and (re.search(r"arxiv|preprint|doi|www\.|https?://|©|journal|vol\.", t, re.I))
    )


def _zones(lines: list[_Line], stats: DocStats, state: dict, has_geometry: bool, in_front: bool) -> None:
    """Headings, each line's section, the reference zone and the front matter (`in_front`: the
    page starts in the title block)."""
    for x in lines:
        if x.role != Role.BODY:
            if x.role != Role.HEADER_FOOTER:
                x.section = SECTION_SEP.join(h for _, h in state.get("path", []))
            continue
        level = _heading(x, stats, state, in_front) if has_geometry else None
        if level is not None:
            lvl, title = level
            x.role, x.heading_level = Role.HEADING, lvl
            _enter_heading(state, clean_line(x.text), lvl, title)
            in_front = False
        x.section = SECTION_SEP.join(h for _, h in state.get("path", []))
        if x.role == Role.HEADING:
            continue
        if in_front:
            x.role = Role.FRONT_MATTER
        elif state.get("refs"):
            x.role = Role.REFERENCE


def _heading(x: _Line, stats: DocStats, state: dict, in_front: bool) -> tuple[int, str] | None:
    """(level, title) when the line is a heading; in the title block only known or numbered ones."""
    level = heading_level(x.text, x.ln.size, stats, state.get("number", 0), state.get("refs_seen", False))
    t = clean_line(x.text)
    if level is not None and in_front and not (KNOWN_HEADINGS.match(t) or re.match(r"\s*\d", t)):
        return None  # the title and other large lines of the title block
    return level


def _enter_heading(state: dict, t: str, lvl: int, title: str) -> None:
    """A heading starts a section: its number, the reference zone (entered or left), the path."""
    if (num := NUMBERED_HEADING.match(t)) and num["num"].split(".")[0].isdigit():
        state["number"] = int(num["num"].split(".")[0])
    if REF_HEADING.match(t):
        state["refs"] = state["refs_seen"] = True
    elif state.get("refs") and (
        APPENDIX_HEADING.match(t) or not KNOWN_HEADINGS.match(t) or re.match(r"^\s*(appendix|supplementary)", t, re.I)
    ):
        state["refs"] = False
    path: list[tuple[int, str]] = state.setdefault("path", [])
    while path and path[-1][0] >= lvl:
        path.pop()
    path.append((lvl, title))
    state["front_done"] = True


def _floats(lines: list[_Line], stats: DocStats) -> None:
    """Full-width floats in a two-column paper, and small figure labels."""
    body = stats.body_size
    for x in lines:
        if x.role != Role.BODY:
            continue
        ln, t = x.ln, clean_line(x.text)
        small = body and ln.size < body - 0.6
        if (
            stats.two_columns
            and ln.x0 < stats.gutter[0] - 8
            and ln.x1 > stats.gutter[1] + 8
            and ln.bottom - ln.top < 2.5 * max(ln.size, 1)
        ):
            x.role = Role.FIGURE  # a full-width float in a two-column paper
        elif small and len(t.split()) <= 10 and ln.size < body * 0.85:
            x.role, x.small_label = Role.FIGURE, True


def _footnotes(page: PageLayout, lines: list[_Line], body: float) -> None:
    """Small lines in the lower part of a page that sit under larger text of their column
    (or under another footnote line) are footnotes; on page 1 notes about authors are front
    matter."""
    order = sorted(range(len(lines)), key=lambda k: lines[k].ln.top)
    for k in order:
        x = lines[k]
        ln = x.ln
        if (
            x.role not in (Role.BODY, Role.REFERENCE)
            or not body
            or ln.size >= body - 0.6
            or ln.top < page.height * 0.55
            or math_score(x.text) > 0.04
        ):
            continue
        above = [
            y
            for y in lines
            if y is not x
            and y.role != Role.HEADER_FOOTER
            and y.ln.x0 < ln.x1
            and ln.x0 < y.ln.x1
            and y.ln.bottom <= ln.top + 2
        ]
        if not above:
            continue
        near = max(above, key=lambda y: y.ln.bottom)
        if (
            near.role in (Role.FOOTNOTE, Role.FRONT_MATTER)
            and near.ln.top > page.height * 0.55
            or near.ln.size > ln.size + 0.6
            and near.role in (Role.BODY, Role.REFERENCE, Role.EQUATION)
        ):
            if page.number == 1 and (FRONT_LINE.search(x.text) or near.role == Role.FRONT_MATTER):
                x.role = Role.FRONT_MATTER
            else:
                x.role = Role.FOOTNOTE


def _inline_fragments(lines: list[_Line]) -> None:
    """Sub- and superscripts that pdfium put on lines of their own take the role of the
    larger line they sit on; small pieces next to equation lines belong to the equation."""
    for k, x in enumerate(lines):
        if len(x.text.strip()) > 40 or x.role in (Role.CAPTION, Role.HEADER_FOOTER, Role.HEADING):
            continue
        mid = (x.ln.top + x.ln.bottom) / 2
        for y in lines[max(0, k - 1) : k + 2]:
            if y is x or y.small_label or y.role in (Role.HEADER_FOOTER, Role.CAPTION) or y.ln.size <= x.ln.size + 0.5:
                continue
            if y.ln.top - 3 <= mid <= y.ln.bottom + 3:
                x.role, x.small_label = y.role, False
                break
    changed = True
    while changed:
        changed = False
        for k, x in enumerate(lines):
            if not (
                (x.small_label and x.role == Role.FIGURE) or (x.role == Role.FOOTNOTE and len(x.text.strip()) <= 40)
            ):
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
        if body and abs(x.ln.size - body) <= 0.6 and not FRONT_LINE.search(x.text) and not _looks_like_names(x.text):
            for y in lines[k:]:
                if y.role == Role.FRONT_MATTER:
                    y.role = Role.BODY
            return


def _looks_like_names(text: str) -> bool:
    parts = [p.strip() for p in re.split(r",|\band\b|;", FOOTNOTE_MARKS.sub(" ", clean_line(text))) if p.strip()]
    return len(parts) >= 2 and all(1 <= len(p.split()) <= 4 and all(w[:1].isupper() for w in p.split()) for p in parts)


def _table_runs(lines: list[_Line]) -> None:
    """Runs of two or more number-heavy lines (table rows) are figure/table content, and so
    is a short header line right above such a run."""
    k = 0
    while k < len(lines):
        if lines[k].role in (Role.BODY, Role.EQUATION) and is_tabular(lines[k].text):
            j = k
            while j < len(lines) and lines[j].role in (Role.BODY, Role.EQUATION) and is_tabular(lines[j].text):
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
    starts = [k for k, x in enumerate(lines) if x.role == Role.BODY and REF_ENTRY_START.match(x.text)]
    if len(starts) < 3:
        return
    with_year = 0
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        entry = " ".join(x.text for x in lines[a:b] if x.role == Role.BODY)
        with_year += bool(YEAR.search(entry))
    if with_year < 0.7 * len(starts):
        return
    for x in lines[starts[0] :]:
        if x.role == Role.BODY:
            x.role = Role.REFERENCE


def analyze(pages: Sequence[PageLayout]) -> list[list[Span]]:
    """Role spans of every page (same order as ``pages``)."""
    stats = doc_stats(pages)
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
