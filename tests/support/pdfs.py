"""PDF fixtures: the real papers, and bad inputs made on the fly."""

from __future__ import annotations

import io
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "papers"
PASA = FIXTURES / "pasa.pdf"
REVIEW = FIXTURES / "explanations-molecular-prediction-models.pdf"
MEDIA = FIXTURES / "duplicate-media.pdf"
# A sentence from page 7 of pasa.pdf (two-column text, crosses line breaks in the PDF).
PASA_P7_PHRASE = "the decision token is presented before the rationale"


def encrypted_pdf() -> bytes:
    from pypdf import PdfReader, PdfWriter

    w = PdfWriter()
    for p in PdfReader(MEDIA).pages[:1]:
        w.add_page(p)
    w.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def truncated_pdf() -> bytes:
    data = MEDIA.read_bytes()
    return data[: len(data) // 4]


def scanned_pdf(pages: int = 2) -> bytes:
    """An image-only PDF (no text layer), like a scan."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    pdf = pdfium.PdfDocument.new()
    for _ in range(pages):
        page = pdf.new_page(300, 400)
        image = pdfium.PdfImage.new(pdf)
        bitmap = pdfium.PdfBitmap.new_native(60, 80, pdfium_c.FPDFBitmap_BGR)
        bitmap.fill_rect((230, 230, 230, 255), 0, 0, 60, 80)
        image.set_bitmap(bitmap)
        image.set_matrix(pdfium.PdfMatrix().scale(300, 400))
        page.insert_obj(image)
        page.gen_content()
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def pasa_with_extra_page() -> bytes:
    """pasa.pdf plus page 1 of another paper: a 'changed file' for re-ingestion."""
    from pypdf import PdfReader, PdfWriter

    w = PdfWriter()
    for p in PdfReader(PASA).pages:
        w.add_page(p)
    w.add_page(PdfReader(MEDIA).pages[0])
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def many_pages_pdf(pages: int = 2000) -> bytes:
    """A very long PDF (real text pages of pasa.pdf repeated), for the 2,000-page case."""
    from pypdf import PdfReader, PdfWriter

    src = PdfReader(PASA).pages
    w = PdfWriter()
    for i in range(pages):
        w.add_page(src[i % len(src)])
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()
