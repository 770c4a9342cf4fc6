"""PDF text extraction with pypdfium2: page texts, typed errors and basic metadata.

Page text is exactly what pdfium's ``FPDFText_GetText`` returns for the whole page (lines end
with ``\\r\\n``; a word hyphenated at a line end appears as ``pa\\ufffepers`` with no break).
Chunk and quote offsets are offsets into this string.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

PdfErrorCode = Literal["not_pdf", "encrypted", "corrupt", "empty", "no_text", "too_many_pages"]
PdfSource = bytes | bytearray | Path | str

_HEADER_WINDOW = 1024  # readers accept "%PDF-" anywhere in the first 1 KiB
_TEXT_PAGE_MIN_CHARS = 50  # non-space characters for a page to count as having text
_MIN_TEXT_PAGE_FRACTION = 0.2

# pdfium is not thread-safe, not even across documents, and Dramatiq runs actors in threads:
# every pdfium call in this module holds this lock. Code that calls pdfium on a document
# directly (close(), rendering) should hold it too.
PDFIUM_LOCK = threading.RLock()


class PdfError(Exception):
    """A PDF we cannot use; ``code`` is machine-readable, ``message`` is for the user."""

    def __init__(self, code: PdfErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: PdfErrorCode = code
        self.message = message

    def __repr__(self) -> str:
        return f"PdfError({self.code!r}, {self.message!r})"


@dataclass(frozen=True, slots=True)
class PageText:
    """Text of one page; ``number`` is 1-based."""

    number: int
    text: str


@dataclass(frozen=True, slots=True)
class PdfMetadata:
    """Best-effort bibliographic data; any field may be missing."""

    title: str | None = None
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None


# --------------------------------------------------------------------------- opening


def _read_head(source: PdfSource) -> tuple[bytes, int]:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source[:_HEADER_WINDOW]), len(source)
    path = Path(source)
    with path.open("rb") as fh:
        return fh.read(_HEADER_WINDOW), path.stat().st_size


def _load_error(err: pdfium.PdfiumError) -> PdfError:
    code = getattr(err, "err_code", None)
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        return PdfError(
            "encrypted",
            "This PDF is password-protected. Remove the password (for example by printing it "
            "to a new PDF) and upload it again.",
        )
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return PdfError(
            "encrypted",
            "This PDF uses a copy-protection scheme that cannot be opened. Save an unprotected "
            "copy and upload that instead.",
        )
    return PdfError(
        "corrupt",
        "This PDF is damaged or incomplete and could not be opened. Try downloading it again.",
    )


def _too_many_pages(pages: int, limit: int) -> PdfError:
    message = f"Too many pages: this PDF has {pages:,} pages; the limit is {limit:,} (BAYES_MAX_PAGES)."
    return PdfError("too_many_pages", message)


def open_pdf(source: PdfSource, *, max_pages: int | None = None) -> pdfium.PdfDocument:
    """Open a PDF from bytes or a path, raising :class:`PdfError` for unusable input.

    The caller owns the document and must close it while holding ``PDFIUM_LOCK``;
    :func:`pdf_document` does that. A missing or unreadable path raises the usual ``OSError``.
    """
    head, size = _read_head(source)
    if size == 0:
        raise PdfError("empty", "The file is empty (0 bytes).")
    if b"%PDF-" not in head:
        raise PdfError("not_pdf", "This file is not a PDF.")
    data = bytes(source) if isinstance(source, bytearray) else source
    with PDFIUM_LOCK:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as err:
            raise _load_error(err) from None
        pages = len(pdf)
        if pages == 0 or (max_pages is not None and pages > max_pages):
            pdf.close()
    if pages == 0:
        raise PdfError("empty", "This PDF has no pages.")
    if max_pages is not None and pages > max_pages:
        raise _too_many_pages(pages, max_pages)
    return pdf


@contextmanager
def pdf_document(
    source: PdfSource, *, max_pages: int | None = None
) -> Iterator[pdfium.PdfDocument]:
    """``with pdf_document(data) as pdf:`` — :func:`open_pdf`, closed under the lock on exit."""
    pdf = open_pdf(source, max_pages=max_pages)
    try:
        yield pdf
    finally:
        with PDFIUM_LOCK:
            pdf.close()


# --------------------------------------------------------------------------- text


def _page_text(pdf: pdfium.PdfDocument, index: int) -> str:
    damaged = PdfError("corrupt", f"Page {index + 1} of this PDF is damaged and could not be read.")
    with PDFIUM_LOCK:
        try:
            page = pdf[index]
        except pdfium.PdfiumError:
            raise damaged from None
        try:
            textpage = page.get_textpage()
            try:
                return textpage.get_text_range()
            finally:
                textpage.close()
        except pdfium.PdfiumError:
            raise damaged from None
        finally:
            page.close()


def page_has_text(text: str) -> bool:
    """True if a page has a text layer worth indexing (more than a page number or a stamp)."""
    return len("".join(text.split())) >= _TEXT_PAGE_MIN_CHARS


def _no_text_error() -> PdfError:
    return PdfError(
        "no_text",
        "This PDF has no selectable text; it looks like a scanned document. Run it through "
        "OCR (text recognition) first, then upload it again.",
    )


def iter_pages(
    source: PdfSource | pdfium.PdfDocument,
    *,
    max_pages: int | None = None,
    require_text: bool = True,
) -> Iterator[PageText]:
    """Yield the pages' text one at a time; each page's pdfium objects are closed at once.

    Given bytes or a path, the document is opened and closed here (also when the consumer stops
    early); an open ``PdfDocument`` is left open. Like any generator it does nothing until the
    first ``next()``, so opening errors surface there (call :func:`open_pdf` first to fail
    early). With ``require_text``, ``PdfError("no_text")`` is raised after the last page if
    fewer than 20% of pages have a text layer, so a scanned PDF fails after yielding only
    near-empty pages.
    """
    own = not isinstance(source, pdfium.PdfDocument)
    pdf = open_pdf(source, max_pages=max_pages) if own else source
    try:
        count = len(pdf)
        if not own and max_pages is not None and count > max_pages:
            raise _too_many_pages(count, max_pages)
        with_text = 0
        for index in range(count):
            text = _page_text(pdf, index)
            with_text += page_has_text(text)
            yield PageText(index + 1, text)
        if require_text and with_text < max(1, _MIN_TEXT_PAGE_FRACTION * count):
            raise _no_text_error()
    finally:
        if own:
            with PDFIUM_LOCK:
                pdf.close()


def extract_pages(
    source: PdfSource | pdfium.PdfDocument,
    *,
    max_pages: int | None = None,
    require_text: bool = True,
) -> list[PageText]:
    """All pages' text as a list (see :func:`iter_pages` for errors and ownership)."""
    return list(iter_pages(source, max_pages=max_pages, require_text=require_text))


# --------------------------------------------------------------------------- layout

_FIGURE_OBJECTS = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM)
_MIN_REGION_SIDE = 40.0  # points: smaller images/forms are icons (ORCID logos, bullets)
_MAX_RULES = 200  # a page with more thin lines is a drawing, not a table


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of a page's text: ``text[start:end]`` (no line break), its box and font size.

    Coordinates are PDF points from the page's top-left corner (y grows downwards). A pdfium
    "line" can span several printed lines when a hyphenated word joins them; the box then
    covers all of them. ``size`` is the median printed font size of a few characters
    (0 when pdfium gives no boxes): the nominal size times the character matrix's scale, so
    scaled text (figure labels) gets its printed size.
    """

    start: int
    end: int
    x0: float
    top: float
    x1: float
    bottom: float
    size: float


@dataclass(frozen=True, slots=True)
class PageLayout:
    """A page's text (identical to :func:`iter_pages`), its lines and its picture regions."""

    number: int
    text: str
    width: float
    height: float
    lines: tuple[TextLine, ...]
    regions: tuple[tuple[float, float, float, float], ...]  # (x0, top, x1, bottom) of images/forms


def _char_box(textpage: pdfium.PdfTextPage, index: int, loose: bool) -> tuple[float, float, float, float] | None:
    try:
        return textpage.get_charbox(index, loose=loose)
    except pdfium.PdfiumError:
        return None


def _printed_size(textpage: pdfium.PdfTextPage, index: int) -> float:
    """Font size as printed: the nominal size scaled by the character's matrix (figures drawn
    as scaled forms report size 1.0 with a 9x matrix)."""
    matrix = pdfium_c.FS_MATRIX()
    size = pdfium_c.FPDFText_GetFontSize(textpage, index)
    if pdfium_c.FPDFText_GetMatrix(textpage, index, matrix):
        size *= abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
    return min(size, 500.0)


def _lines_of(textpage: pdfium.PdfTextPage, text: str, height: float) -> list[TextLine]:
    """Split ``text`` at its line breaks and measure each line from a few sampled characters."""
    geometry = textpage.count_chars() == len(text)  # text offsets are char indices
    lines: list[TextLine] = []
    pos = 0
    for raw in text.split("\r\n"):
        start, end = pos, pos + len(raw)
        pos = end + 2
        visible = [k for k in range(start, end) if not text[k].isspace() and text[k] != "\ufffe"]
        if not visible:
            continue
        if not geometry:
            lines.append(TextLine(start, end, 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        samples = {visible[0], visible[len(visible) // 2], visible[-1]}
        boxes = [b for k in sorted(samples) if (b := _char_box(textpage, k, True)) is not None]
        if not boxes:
            lines.append(TextLine(start, end, 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        sizes = sorted(_printed_size(textpage, k) for k in samples)
        left = min(b[0] for b in boxes)
        right = max(b[2] for b in boxes)
        top = max(b[3] for b in boxes)
        bottom = min(b[1] for b in boxes)
        lines.append(TextLine(start, end, left, height - top, right, height - bottom,
                              round(sizes[len(sizes) // 2], 2)))
    return lines


def _regions(page: pdfium.PdfPage, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Boxes of pictures (images, forms) and of ruled tables (two or more horizontal rules of
    the same width, as booktabs draws them), top-down coordinates."""
    out = []
    rules: list[tuple[float, float, float]] = []  # (left, right, y)
    for obj in page.get_objects(filter=_FIGURE_OBJECTS + (pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=1):
        if len(rules) > _MAX_RULES:
            break
        try:
            left, bottom, right, top = obj.get_bounds()
        except pdfium.PdfiumError:
            continue
        left, right = max(0.0, left), min(width, right)
        bottom, top = max(0.0, bottom), min(height, top)
        if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            if top - bottom < 2.5 and right - left > 60:
                rules.append((left, right, height - (top + bottom) / 2))
        elif right - left >= _MIN_REGION_SIDE and top - bottom >= _MIN_REGION_SIDE:
            out.append((left, height - top, right, height - bottom))
    groups: dict[tuple[int, int], list[float]] = {}
    for left, right, y in rules:
        groups.setdefault((round(left / 4), round(right / 4)), []).append(y)
    for (left4, right4), ys in groups.items():
        if len(ys) >= 2 and max(ys) - min(ys) > 8:
            out.append((left4 * 4 - 4, min(ys) - 1, right4 * 4 + 4, max(ys) + 1))
    return out


def _page_layout(pdf: pdfium.PdfDocument, index: int) -> PageLayout:
    damaged = PdfError("corrupt", f"Page {index + 1} of this PDF is damaged and could not be read.")
    with PDFIUM_LOCK:
        try:
            page = pdf[index]
        except pdfium.PdfiumError:
            raise damaged from None
        try:
            width, height = page.get_size()
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
                lines = _lines_of(textpage, text, height)
            finally:
                textpage.close()
            regions = _regions(page, width, height)
        except pdfium.PdfiumError:
            raise damaged from None
        finally:
            page.close()
    return PageLayout(index + 1, text, width, height, tuple(lines), tuple(regions))


def iter_layouts(
    source: PdfSource | pdfium.PdfDocument,
    *,
    max_pages: int | None = None,
    require_text: bool = True,
) -> Iterator[PageLayout]:
    """Like :func:`iter_pages`, with each page's lines, font sizes and picture regions."""
    own = not isinstance(source, pdfium.PdfDocument)
    pdf = open_pdf(source, max_pages=max_pages) if own else source
    try:
        count = len(pdf)
        if not own and max_pages is not None and count > max_pages:
            raise _too_many_pages(count, max_pages)
        with_text = 0
        for index in range(count):
            layout = _page_layout(pdf, index)
            with_text += page_has_text(layout.text)
            yield layout
        if require_text and with_text < max(1, _MIN_TEXT_PAGE_FRACTION * count):
            raise _no_text_error()
    finally:
        if own:
            with PDFIUM_LOCK:
                pdf.close()


def text_rects(source: PdfSource, page_number: int, start: int, end: int
               ) -> list[tuple[float, float, float, float]]:
    """Boxes of ``text[start:end]`` of a page as fractions (x0, top, x1, bottom) of its size.

    One box per printed line segment (pdfium merges neighbouring characters), for drawing a
    highlight over the rendered page. Empty when the page or the range does not exist.
    """
    with pdf_document(source) as pdf, PDFIUM_LOCK:
        if not 1 <= page_number <= len(pdf):
            return []
        page = pdf[page_number - 1]
        try:
            left, bottom, right, top = page.get_cropbox()
            width, height = (right - left) or 1.0, (top - bottom) or 1.0
            textpage = page.get_textpage()
            try:
                count = textpage.count_chars()
                start, end = max(0, start), min(end, count)
                if end <= start:
                    return []
                rects = []
                for i in range(textpage.count_rects(start, end - start)):
                    l, b, r, t = textpage.get_rect(i)
                    rects.append(((l - left) / width, (top - t) / height,
                                  (r - left) / width, (top - b) / height))
                return rects
            finally:
                textpage.close()
        finally:
            page.close()


# --------------------------------------------------------------------------- metadata

_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+")
_OPENER = {")": "(", "]": "["}
_DOI_LABEL = re.compile(r"(?:doi(?:\.org)?\s*[:/]?\s*)$", re.IGNORECASE)
_ARXIV_NEW = r"arXiv:\s*(\d{2})(\d{2})\.\d{4,5}"
_ARXIV_OLD = r"arXiv:\s*[a-z-]+(?:\.[a-z]{2})?/(\d{2})(\d{2})\d{3}"
_ARXIV_STAMP = r"v\d+\s*\[[\w.-]+\]"  # the margin stamp "arXiv:2501.10120v1 [cs.IR]"
_YEAR = r"\b((?:19|20)\d{2})\b"
_YEAR_MARKERS = [  # in order of trust
    re.compile(r"\b(?:published(?:\s+online)?|available\s+online)\b[^\n]{0,40}?" + _YEAR, re.I),
    re.compile(r"(?:©|\(c\)|\bcopyright\b)[^\n]{0,40}?" + _YEAR, re.I),
    re.compile(r"\baccepted\b[^\n]{0,40}?" + _YEAR, re.I),
    re.compile(r"\breceived\b[^\n]{0,40}?" + _YEAR, re.I),
]
_JUNK_AUTHOR = re.compile(r"\b(?:user|admin\w*|owner|microsoft|office|unknown|author)\b", re.I)
_PDF_DATE = re.compile(r"^(?:D:)?((?:19|20)\d{2})")
_FILE_EXT = re.compile(r"\.(?:pdf|docx?|tex|dvi|ps|rtf|odt|indd|qxd|txt|eps)\b", re.I)
_JUNK_TITLES = re.compile(
    r"^(?:untitled|no title|title|layout \d+|pii\b|doi\b|microsoft \w+ -)", re.I
)
_NOT_TITLE_LINE = re.compile(
    r"arxiv:|https?://|www\.|@|\bdoi\b|©|copyright|\bjournal\b|\bvol\.|\bvolume\b|\bissn\b|"
    r"preprint|proceedings|\bpublished\b|\breceived\b|\baccepted\b|licen[cs]e|downloaded",
    re.I,
)
_SECTION_HEADERS = frozenset({
    "research article", "original article", "review article", "article", "review", "letter",
    "open access", "perspective", "communication", "full paper", "technical note", "abstract",
    "preprint",
})
_STOP_AUTHOR_LINE = re.compile(
    r"@|https?://|abstract|universit|institut|department|dept\.|laborator|\blab\b|research|"
    r"college|school|cent(?:er|re)|\binc\b|corporation|company|hospital|e-?mail|\d{4,}",
    re.I,
)
_FOOTNOTE_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆✉]+")
_NAME_PARTICLES = frozenset({
    "van", "von", "de", "der", "den", "del", "della", "da", "di", "du", "dos", "la", "le", "y",
    "bin", "ibn", "al", "el",
})
_SPACING_ACCENTS = {"¨": "\u0308", "´": "\u0301", "`": "\u0300", "ˆ": "\u0302", "˜": "\u0303",
                    "ˇ": "\u030c", "˘": "\u0306", "˚": "\u030a", "¸": "\u0327"}
_DETACHED_ACCENT = re.compile("([" + "".join(_SPACING_ACCENTS) + r"])([^\W\d_])")


def _clean(text: str) -> str:
    """Join pdfium hyphenation, re-attach detached accents ("M¨uller"), collapse whitespace."""
    text = text.replace("\ufffe", "").replace("\u00ad", "")
    text = _DETACHED_ACCENT.sub(
        lambda m: unicodedata.normalize("NFC", m[2] + _SPACING_ACCENTS[m[1]]), text
    )
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
            text = textpage.get_text_range()
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


def _title_span(lines: list[tuple[str, float]]) -> tuple[int, int] | None:
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
        and abs(lines[end][1] - size) < 0.3
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


def _find_year(first_page: str, creation_date: str) -> int | None:
    """Most trusted evidence first: arXiv stamp, publication markers, any arXiv id, CreationDate."""
    if (year := _arxiv_year(first_page, stamp=True)) is not None:
        return year
    for pattern in _YEAR_MARKERS:
        m = pattern.search(first_page)
        if m and (found := _valid_year(int(m[1]))) is not None:
            return found
    if (year := _arxiv_year(first_page, stamp=False)) is not None:
        return year  # may be a cited preprint, hence after the explicit markers
    m = _PDF_DATE.match(creation_date.strip())
    return _valid_year(int(m[1])) if m else None


def extract_metadata(pdf: pdfium.PdfDocument, first_page_text: str | None = None) -> PdfMetadata:
    """Title, authors, year and DOI from the info dict, falling back to first-page heuristics.

    Info fields that look like junk ("Microsoft Word - x.docx", file names, ids) are ignored.
    The year prefers explicit first-page evidence (arXiv id, "Published", ©, "Accepted",
    "Received") over the info CreationDate, which is often the download or conversion date.
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
    year = _find_year(first_page, info.get("CreationDate", ""))
    return PdfMetadata(title=title or None, authors=authors, year=year, doi=doi)
