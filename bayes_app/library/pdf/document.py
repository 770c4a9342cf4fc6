"""Opening a PDF safely (header, encryption, page limit, damage → PdfError) and its pages' text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal, Protocol, TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bayes_app.library.pdf.fair_lock import FairRLock

PdfErrorCode = Literal[
    "not_pdf", "encrypted", "corrupt", "empty", "no_text", "too_many_pages", "too_much_text", "missing_file"
]
PdfSource = bytes | bytearray | Path | str


class _PageRead(Protocol):
    @property
    def text(self) -> str: ...


P = TypeVar("P", bound=_PageRead)  # what a page reader returns (it has `.text`)

_HEADER_WINDOW = 1024  # bytes read to check the header
_BOM = b"\xef\xbb\xbf"
_PDF_WHITESPACE = b"\x00\t\n\x0c\r "
# Text bombs: a few KB of PDF (pages sharing one compressed content stream) can hold millions
# of characters; the bounds are checked on pdfium's count before the text is read.
MAX_PAGE_CHARS = 200_000
MAX_TEXT_CHARS = 10_000_000
_TEXT_PAGE_MIN_CHARS = 50  # non-space characters for a page to count as having text
_MIN_TEXT_PAGE_FRACTION = 0.2

# pdfium is not thread-safe, not even across documents, and Dramatiq runs actors in threads:
# every pdfium call in this module holds this lock. Code that calls pdfium on a document
# directly (close(), rendering) should hold it too. Handed over in arrival order, so a small
# document's pages are read between a long one's, not after it (issue 36.6).
PDFIUM_LOCK = FairRLock()


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


def has_pdf_header(head: bytes) -> bool:
    """True when the bytes start with `%PDF-`, after at most a UTF-8 BOM and PDF whitespace.

    Readers (pdfium too) accept `%PDF-` anywhere in the first KiB, so an HTML or SVG page with
    `%PDF-` in a comment would pass for a PDF and could be served back; we require it first."""
    return head.removeprefix(_BOM).lstrip(_PDF_WHITESPACE).startswith(b"%PDF-")


def check_opens(source: PdfSource | BinaryIO) -> None:
    """Raise :class:`PdfError` unless pdfium can open the document (from bytes, a path or a
    seekable stream, which is left where it was). A password-protected PDF is a PDF: its
    ``encrypted`` error is raised too, for the caller to decide."""
    stream = None if isinstance(source, (bytes, bytearray, Path, str)) else source
    position = stream.tell() if stream is not None else 0
    try:
        with PDFIUM_LOCK:
            try:
                pdfium.PdfDocument(bytes(source) if isinstance(source, bytearray) else source).close()
            except pdfium.PdfiumError as err:
                raise _load_error(err) from None
    finally:
        if stream is not None:
            stream.seek(position)


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
    if not has_pdf_header(head):
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
def pdf_document(source: PdfSource, *, max_pages: int | None = None) -> Iterator[pdfium.PdfDocument]:
    """``with pdf_document(data) as pdf:`` — :func:`open_pdf`, closed under the lock on exit."""
    pdf = open_pdf(source, max_pages=max_pages)
    try:
        yield pdf
    finally:
        with PDFIUM_LOCK:
            pdf.close()


# --------------------------------------------------------------------------- text


@contextmanager
def open_page(pdf: pdfium.PdfDocument, index: int) -> Iterator[tuple[pdfium.PdfPage, pdfium.PdfTextPage]]:
    """Page `index` and its text page, under the pdfium lock, both closed afterwards; any
    pdfium failure while reading it is `PdfError("corrupt")` naming the page."""
    damaged = PdfError("corrupt", f"Page {index + 1} of this PDF is damaged and could not be read.")
    with PDFIUM_LOCK:
        try:
            page = pdf[index]
        except pdfium.PdfiumError:
            raise damaged from None
        try:
            textpage = page.get_textpage()
            try:
                yield page, textpage
            finally:
                textpage.close()
        except pdfium.PdfiumError:
            raise damaged from None
        finally:
            page.close()


@dataclass(frozen=True, slots=True)
class TextBudget:
    """How much text may be taken: from one page, and from the whole document."""

    page_chars: int = MAX_PAGE_CHARS
    total_chars: int = MAX_TEXT_CHARS


def bounded_text(textpage: pdfium.PdfTextPage, number: int, budget: TextBudget, used: int = 0) -> str:
    """Page `number`'s text, refused (`PdfError("too_much_text")`) when pdfium counts more
    characters than the page bound or than what is left of the document's bound after `used`."""
    count = textpage.count_chars()
    if count > budget.page_chars:
        raise PdfError(
            "too_much_text",
            f"Page {number} holds more text than {budget.page_chars:,} "
            f"characters (it has {count:,}; BAYES_MAX_PAGE_CHARS), so this PDF cannot be "
            "indexed. A real page holds a few thousand; this file is probably damaged or built "
            "to exhaust the server.",
        )
    if used + count > budget.total_chars:
        raise PdfError(
            "too_much_text",
            f"This PDF holds more text than {budget.total_chars:,} characters "
            f"(BAYES_MAX_DOCUMENT_CHARS), reached on page {number}; split it into smaller files.",
        )
    return textpage.get_text_range()


def _page_text(pdf: pdfium.PdfDocument, index: int, budget: TextBudget, used: int) -> str:
    with open_page(pdf, index) as (_page, textpage):
        return bounded_text(textpage, index + 1, budget, used)


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
    budget: TextBudget = TextBudget(),
) -> Iterator[PageText]:
    """Yield the pages' text one at a time; each page's pdfium objects are closed at once.

    Given bytes or a path, the document is opened and closed here (also when the consumer stops
    early); an open ``PdfDocument`` is left open. Like any generator it does nothing until the
    first ``next()``, so opening errors surface there (call :func:`open_pdf` first to fail
    early). With ``require_text``, ``PdfError("no_text")`` is raised after the last page if
    fewer than 20% of pages have a text layer, so a scanned PDF fails after yielding only
    near-empty pages. Past the ``budget`` (a page's or the document's text), ``PdfError
    ("too_much_text")`` is raised before that page's text is read.
    """
    return each_page(
        source,
        lambda pdf, i, b, used: PageText(i + 1, _page_text(pdf, i, b, used)),
        max_pages=max_pages,
        require_text=require_text,
        budget=budget,
    )


def each_page(
    source: PdfSource | pdfium.PdfDocument,
    read: Callable[[pdfium.PdfDocument, int, TextBudget, int], P],
    *,
    max_pages: int | None = None,
    require_text: bool = True,
    budget: TextBudget = TextBudget(),
) -> Iterator[P]:
    """`read(pdf, index, budget, chars used so far)` for every page, one at a time, with
    `iter_pages`' opening, page limit, text budget and text-layer check (`.text` of what
    `read` returns)."""
    own = not isinstance(source, pdfium.PdfDocument)
    pdf: pdfium.PdfDocument = open_pdf(source, max_pages=max_pages) if own else source
    try:
        count = len(pdf)
        if not own and max_pages is not None and count > max_pages:
            raise _too_many_pages(count, max_pages)
        with_text = used = 0
        for index in range(count):
            page = read(pdf, index, budget, used)
            used += len(page.text)
            with_text += page_has_text(page.text)
            yield page
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
    budget: TextBudget = TextBudget(),
) -> list[PageText]:
    """All pages' text as a list (see :func:`iter_pages` for errors and ownership)."""
    return list(iter_pages(source, max_pages=max_pages, require_text=require_text, budget=budget))
