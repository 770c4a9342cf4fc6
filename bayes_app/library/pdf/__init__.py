"""PDF text extraction with pypdfium2: page texts, typed errors and basic metadata.

Page text is exactly what pdfium's ``FPDFText_GetText`` returns for the whole page (lines end
with ``\\r\\n``; a word hyphenated at a line end appears as ``pa\\ufffepers`` with no break).
Chunk and quote offsets are offsets into this string.

Modules: `document` (opening, errors, page text), `layout` (lines, sizes, regions, character
boxes), `metadata` (title, authors, DOI, year); the public names are re-exported here.
"""

from __future__ import annotations

from bayes_app.library.pdf.document import (
    PDFIUM_LOCK,
    PageText,
    PdfError,
    PdfErrorCode,
    PdfMetadata,
    PdfSource,
    TextBudget,
    bounded_text,
    check_opens,
    extract_pages,
    has_pdf_header,
    iter_pages,
    open_pdf,
    page_has_text,
    pdf_document,
)
from bayes_app.library.pdf.layout import PageLayout, TextLine, iter_layouts, superscripts, text_rects
from bayes_app.library.pdf.metadata import extract_metadata
