"""Footnote and reference marks set as superscripts, kept out of a claim's wording.

pdfium's text runs a superscript into the word before it ("ar5iv⁸" reads "ar5iv8", "models.⁷⁵⁻⁷⁸"
reads "models.75–78"); `pdf.superscripts` finds those characters from their boxes (smaller
size, raised baseline). A claim quotes its sentence verbatim — so the quote still locates — and
its wording drops the marks: `mark_pairs` turns the marks of a text into replacements
("ar5iv8" → "ar5iv"), `strip_marks` applies them to a wording.

    mark_pairs(text, ranges) -> {with mark: without}
    strip_marks(wording, pairs) -> str
    chunk_marks(db, chunks) -> {chunk id: pairs}     from each document's stored PDF
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

log = logging.getLogger("bayes.library.marks")
_MARK = re.compile(r"[\d*∗†‡§¶,–-]+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[,.;:](?:\s|$))")
# chunk id -> its mark replacements: an indexed chunk never changes (re-indexing makes new
# chunks), so a research run's later retrievals don't reopen a PDF for chunks already read
_KNOWN: dict[str, dict[str, str]] = {}
KNOWN_MAX = 50_000


def _one_line(text: str) -> str:
    return " ".join(text.replace("\ufffe", "").replace("\u00ad", "").replace("\u0002", "").split())


def mark_pairs(text: str, ranges: Iterable[tuple[int, int]]) -> dict[str, str]:
    """For each mark (a character range of `text`): the word it follows with the mark, and
    without it ("ar5iv8" → "ar5iv", "Miller 25" → "Miller")."""
    pairs: dict[str, str] = {}
    for start, end in ranges:
        ws = start
        while ws > 0 and text[ws - 1].isspace():
            ws -= 1
        while ws > 0 and not text[ws - 1].isspace():
            ws -= 1
        with_mark, without = _one_line(text[ws:end]), _one_line(text[ws:start])
        if without and with_mark != without:
            pairs[with_mark] = without
    return pairs


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for `re.sub` that inserts `text` as it is (no backslash escapes)."""
    return lambda _m: text


def strip_marks(wording: str, pairs: Mapping[str, str]) -> str:
    """The wording with each marked word replaced by its unmarked form (the longest first), and
    no space left before the punctuation that followed a mark ("ChatGPT9 ," → "ChatGPT,")."""
    if not pairs:
        return wording
    out = wording
    for marked in sorted(pairs, key=len, reverse=True):
        out = re.sub(r"(?<!\S)" + re.escape(marked) + r"(?=[\s,;:)]|\.(?:\s|$)|$)", _literal(pairs[marked]), out)
    return _SPACE_BEFORE_PUNCT.sub("", out) if out != wording else out


def chunk_marks(db: Any, chunks: Iterable[Any]) -> dict[str, dict[str, str]]:
    """The mark replacements of each chunk, read from its document's stored PDF (each document
    opened once, each chunk read once per process); a chunk whose PDF can't be read has none."""
    from bayes_app.library import pdf, storage
    from bayes_app.models import Document

    by_doc: dict[str, list[Any]] = {}
    out: dict[str, dict[str, str]] = {}
    for c in chunks:
        if c.id in _KNOWN:
            out[c.id] = _KNOWN[c.id]
        else:
            by_doc.setdefault(c.document_id, []).append(c)
    for doc_id, cs in by_doc.items():
        doc = db.get(Document, doc_id)
        if doc is None or not doc.file_sha256:
            continue
        try:
            with storage.default_store().local_file(doc.file_sha256) as path:
                for c in cs:
                    ranges = pdf.superscripts(path, c.page, c.char_start, c.char_end)
                    local = [(s - c.char_start, e - c.char_start) for s, e in ranges]
                    # offsets into the stored text: a range that is not a mark there is not used
                    out[c.id] = mark_pairs(c.text, [(s, e) for s, e in local if _MARK.fullmatch(c.text[s:e])])
        except (OSError, pdf.PdfError, storage.StorageUnavailable) as err:
            log.info("no superscript marks for document %s: %s", doc_id, err)
            continue
        if len(_KNOWN) > KNOWN_MAX:
            _KNOWN.clear()
        _KNOWN.update({c.id: out[c.id] for c in cs})  # every chunk of a readable PDF is in `out`
    return out
