"""A paper's title, authors, DOI and year from its first page and its document info."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bayes_app.library.pdf.document import PDFIUM_LOCK, PdfMetadata, TextBudget, bounded_text
from bayes_app.library.pdf.layout import PageLayout

# --------------------------------------------------------------------------- metadata

_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+")
_OPENER = {")": "(", "]": "["}
_DOI_LABEL = re.compile(r"(?:doi(?:\.org)?\s*[:/]?\s*)$", re.IGNORECASE)
_ARXIV_NEW = r"arXiv:\s*(\d{2})(\d{2})\.\d{4,5}"
_ARXIV_OLD = r"arXiv:\s*[a-z-]+(?:\.[a-z]{2})?/(\d{2})(\d{2})\d{3}"
_ARXIV_STAMP = r"v\d+\s*\[[\w.-]+\]"  # the margin stamp "arXiv:2501.10120v1 [cs.IR]"
_YEAR = r"\b((?:19|20)\d{2})\b"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_YEAR_MARKERS = [  # in order of trust
    re.compile(r"\b(?:published(?:\s+online)?|available\s+online)\b[^\n]{0,40}?" + _YEAR, re.I),
    re.compile(r"(?:©|\(c\)|\bcopyright\b)[^\n]{0,40}?" + _YEAR, re.I),
    # the venue line: "Journal 10 (2012) 100-120", "J. Chem. 12(3) (2019) 45–67"
    re.compile(r"[A-Za-z.]\s+\d{1,4}\s*(?:\(\d{1,4}\)\s*)?\(" + _YEAR[2:-2] + r"\)\s*,?\s*(?:pp?\.\s*)?[A-Za-z]?\d+"),
    # "Vol. 12, No. 3, 2019" / "Volume 12 (2019)" / Vancouver "2019;12(3):45-67" / ACS "2019, 59, 1324"
    re.compile(r"\bvol(?:\.|ume)\s*\d+[^\n]{0,30}?" + _YEAR, re.I),
    re.compile(_YEAR + r";\s*\d+\s*(?:\(\d+\))?\s*:\s*\d+"),
    re.compile(r"[A-Za-z.]\s+" + _YEAR + r",\s*\d{1,4},\s*\d+"),
    re.compile(r"\baccepted\b[^\n]{0,40}?" + _YEAR, re.I),
    re.compile(r"\breceived\b[^\n]{0,40}?" + _YEAR, re.I),
]
# a date line under the title: "March 12, 2019", "12 March 2019", "March 2019", "2019-03-12"
_DATE_LINE = re.compile(
    rf"^\W*(?:(?:\d{{1,2}}\s+)?{_MONTH}\s+(?:\d{{1,2}},?\s+)?{_YEAR}|{_YEAR}-\d{{2}}-\d{{2}})\W*$", re.I
)
_HEAD_LINES = 25  # a date line or journal header is near the top of the first page
_JUNK_AUTHOR = re.compile(r"\b(?:user|admin\w*|owner|microsoft|office|unknown|author)\b", re.I)
_FILE_EXT = re.compile(r"\.(?:pdf|docx?|tex|dvi|ps|rtf|odt|indd|qxd|txt|eps)\b", re.I)
_JUNK_TITLES = re.compile(r"^(?:untitled|no title|title|layout \d+|pii\b|doi\b|microsoft \w+ -)", re.I)
_NOT_TITLE_LINE = re.compile(
    r"arxiv:|https?://|www\.|@|\bdoi\b|©|copyright|\bjournal\b|\bvol\.|\bvolume\b|\bissn\b|"
    r"preprint|proceedings|\bpublished\b|\breceived\b|\baccepted\b|licen[cs]e|downloaded",
    re.I,
)
_SECTION_HEADERS = frozenset(
    {
        "research article",
        "original article",
        "review article",
        "article",
        "review",
        "letter",
        "open access",
        "perspective",
        "communication",
        "full paper",
        "technical note",
        "abstract",
        "preprint",
    }
)
_STOP_AUTHOR_LINE = re.compile(
    r"@|https?://|abstract|universit|institut|department|dept\.|laborator|\blab\b|research|"
    r"college|school|cent(?:er|re)|\binc\b|corporation|company|hospital|e-?mail|\d{4,}",
    re.I,
)
_FOOTNOTE_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆✉]+")
_NAME_PARTICLES = frozenset(
    {
        "van",
        "von",
        "de",
        "der",
        "den",
        "del",
        "della",
        "da",
        "di",
        "du",
        "dos",
        "la",
        "le",
        "y",
        "bin",
        "ibn",
        "al",
        "el",
    }
)
_SPACING_ACCENTS = {
    "¨": "\u0308",
    "´": "\u0301",
    "`": "\u0300",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "ˇ": "\u030c",
    "˘": "\u0306",
    "˚": "\u030a",
    "¸": "\u0327",
}
_DETACHED_ACCENT = re.compile("([" + "".join(_SPACING_ACCENTS) + r"])([^\W\d_])")


def _clean(text: str) -> str:
    """Join pdfium hyphenation, re-attach detached accents ("M¨uller"), collapse whitespace."""
    text = text.replace("\ufffe", "").replace("\u00ad", "")
    text = _DETACHED_ACCENT.sub(lambda m: unicodedata.normalize("NFC", m[2] + _SPACING_ACCENTS[m[1]]), text)
    return " ".join(text.split())


def _is_junk_title(title: str) -> bool:
    t = title.strip()
    return (
        len(t) < 4
        or " " not in t  # file names, ids such as "duplicate_media_template"
        or bool(_FILE_EXT.search(t))
        or bool(_JUNK_TITLES.match(t))
        or not re.search(r"[^\W\d_]{3}", t)
    )


def _is_title_line(line: str) -> bool:
    letters = sum(c.isalpha() for c in line)
    return (
        len(line.split()) >= 2
        and letters >= 10
        and letters >= 0.6 * len(line.replace(" ", ""))
        and line.lower().rstrip(".:") not in _SECTION_HEADERS
        and not _NOT_TITLE_LINE.search(line)
    )


def _lines_with_sizes(pdf: pdfium.PdfDocument) -> tuple[str, list[tuple[str, float]]]:
    """First page text and its lines with the font size of each line's first visible char."""
    page = pdf[0]
    try:
        textpage = page.get_textpage()
        try:
            text = bounded_text(textpage, 1, TextBudget())
            lines: list[tuple[str, float]] = []
            pos = 0
            for raw_line in text.split("\r\n"):
                stripped = raw_line.lstrip()
                size = 0.0
                if stripped:
                    first = pos + len(raw_line) - len(stripped)
                    size = pdfium_c.FPDFText_GetFontSize(textpage, first)
                lines.append((_clean(raw_line), size))
                pos += len(raw_line) + 2
            return text, lines
        finally:
            textpage.close()
    finally:
        page.close()


def _title_span(lines: list[tuple[str, float]], tolerance: float = 0.3) -> tuple[int, int] | None:
    """Line range of the title on the first page: first title-like line plus same-size lines."""
    start = next((k for k, (line, _) in enumerate(lines[:40]) if _is_title_line(line)), None)
    if start is None:
        return None
    size = lines[start][1]
    end = start + 1
    while (
        end < len(lines)
        and end - start < 3
        and size > 0
        and abs(lines[end][1] - size) < tolerance
        and lines[end][0]
        and not _NOT_TITLE_LINE.search(lines[end][0])
    ):
        end += 1
    return start, end


def _looks_like_name(name: str) -> bool:
    tokens = name.split()
    if not 2 <= len(tokens) <= 5 or len(name) > 60:
        return False
    for tok in tokens:
        if tok.lower() in _NAME_PARTICLES:
            continue
        if not tok[0].isupper() or not all(c.isalpha() or c in ".-'’" for c in tok):
            return False
    return True


def _split_names(text: str) -> list[str]:
    text = _FOOTNOTE_MARKS.sub(",", text)
    parts = re.split(r"\s*(?:,|;|&|\band\b)\s*", text)
    return [" ".join(p.split()) for p in parts if p.strip()]


def _authors_from_page(lines: list[tuple[str, float]], after: int) -> list[str]:
    block: list[str] = []
    for line, _ in lines[after : after + 6]:
        if not line or _STOP_AUTHOR_LINE.search(line):
            break
        block.append(line)
    names = _split_names(" ".join(block))
    good = [n for n in names if _looks_like_name(n)]
    # All-or-nothing: a block that does not parse cleanly is more likely not an author list.
    return good if names and len(good) == len(names) else []


def _authors_from_info(author: str) -> list[str]:
    author = _clean(author)
    if not author:
        return []
    parts = re.split(r"\s*;\s*", author) if ";" in author else _split_names(author)
    names = [p for p in parts if p and not _JUNK_AUTHOR.search(p)]
    return names if any(" " in n for n in names) else []


def _find_doi(texts: list[str]) -> str | None:
    fallback = None
    for text in texts:
        for m in _DOI.finditer(text):
            doi = m.group(0).rstrip(".,;:")
            # drop a closing bracket that belongs to the surrounding text, not to the DOI
            while doi[-1] in _OPENER and doi.count(doi[-1]) > doi.count(_OPENER[doi[-1]]):
                doi = doi[:-1].rstrip(".,;:")
            if _DOI_LABEL.search(text[max(0, m.start() - 20) : m.start()]):
                return doi
            fallback = fallback or doi
    return fallback


def _valid_year(year: int) -> int | None:
    return year if 1900 <= year <= dt.date.today().year + 1 else None


def _arxiv_year(text: str, stamp: bool) -> int | None:
    for pattern in (_ARXIV_NEW, _ARXIV_OLD):
        for m in re.finditer(pattern + (_ARXIV_STAMP if stamp else ""), text, re.I):
            if 1 <= int(m[2]) <= 12:
                yy = int(m[1])
                year = 2000 + yy if pattern is _ARXIV_NEW or yy < 91 else 1900 + yy
                if (found := _valid_year(year)) is not None:
                    return found
    return None


def find_year(first_page: str) -> int | None:
    """The year the first page prints, most trusted evidence first: arXiv stamp, "Published"
    and ©, the venue line ("Journal 10 (2012) 100-120", "Vol. 3, 2019", "2019;12(3):45"),
    "Accepted"/"Received", a date line near the top, any arXiv id. None when it prints none:
    the file's CreationDate is a download or conversion date, never the paper's year."""
    if (year := _arxiv_year(first_page, stamp=True)) is not None:
        return year
    for pattern in _YEAR_MARKERS:
        m = pattern.search(first_page)
        if m and (found := _valid_year(int(m[1]))) is not None:
            return found
    for line in first_page.splitlines()[:_HEAD_LINES]:
        m = _DATE_LINE.match(line.strip())
        if m and (found := _valid_year(int(m[1] or m[2]))) is not None:
            return found
    return _arxiv_year(first_page, stamp=False)  # may be a cited preprint, hence last


def title_from_layout(page: PageLayout) -> str | None:
    """The printed title of a page whose lines came from OCR (sizes estimated from word boxes:
    a wider size tolerance): the first title-like line among the largest on the page's top."""
    lines = [(" ".join(page.text[ln.start : ln.end].split()), ln.size) for ln in page.lines[:40]]
    if not lines:
        return None
    sizes = sorted(size for _, size in lines)
    median = sizes[len(sizes) // 2]
    # a margin stamp set vertically ("arXiv:… [cs.IR]") has the height of its length: not a size
    # and a stray letter of a figure ("a" of a logo) is no title line
    biggest = max(
        (size for t, size in lines[:15] if size <= 3 * median and sum(c.isalpha() for c in t) >= 4), default=0.0
    )
    top = [(t, sz) if 0.9 * biggest <= sz <= biggest else ("", sz) for t, sz in lines]
    span = _title_span(top, tolerance=0.05 * biggest)
    return " ".join(t for t, _ in top[span[0] : span[1]]) or None if span else None


def extract_metadata(pdf: pdfium.PdfDocument, first_page_text: str | None = None) -> PdfMetadata:
    """Title, authors, year and DOI from the info dict, falling back to first-page heuristics.

    Info fields that look like junk ("Microsoft Word - x.docx", file names, ids) are ignored.
    The year is the one the first page prints (:func:`find_year`), never the info CreationDate.
    ``first_page_text`` defaults to page 1's text; font sizes are read from page 1 either way.
    """
    with PDFIUM_LOCK:
        info = {k: _clean(v) for k, v in pdf.get_metadata_dict(skip_empty=True).items()}
        page_text, lines = _lines_with_sizes(pdf)
    first_page = page_text if first_page_text is None else first_page_text
    span = _title_span(lines)

    title = info.get("Title")
    if not title or _is_junk_title(title):
        title = " ".join(line for line, _ in lines[span[0] : span[1]]) if span else None

    authors = _authors_from_info(info.get("Author", ""))
    if not authors and span:
        authors = _authors_from_page(lines, span[1])

    doi = _find_doi([info.get(k, "") for k in ("Subject", "Keywords", "Title")] + [first_page])
    year = find_year(first_page)
    return PdfMetadata(title=title or None, authors=authors, year=year, doi=doi)
