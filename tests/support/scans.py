"""Scanned-paper fixtures made in the tests: pages of the bundled papers rendered to images
and written into image-only PDFs (no text layer), optionally rotated, at a chosen dpi, and
mixed with text pages — the way a scanner or a "print to image" produces them."""

from __future__ import annotations

import io

import pypdfium2 as pdfium

from tests.support.pdfs import FIXTURES as PAPERS


def render(paper: str, page_number: int, dpi: int = 300):
    """A page of a bundled paper as a greyscale PIL image."""
    doc = pdfium.PdfDocument(str(PAPERS / paper))
    try:
        return doc[page_number - 1].render(scale=dpi / 72, grayscale=True).to_pil()
    finally:
        doc.close()


def text_layer(paper: str, page_number: int) -> str:
    doc = pdfium.PdfDocument(str(PAPERS / paper))
    try:
        return doc[page_number - 1].get_textpage().get_text_range()
    finally:
        doc.close()


def _add_image_page(pdf: pdfium.PdfDocument, image, dpi: int, rotate: int, index: int | None = None) -> None:
    """Append (or insert) a page showing ``image``; with ``rotate`` the image is stored turned
    back by that angle and the page carries /Rotate, so it displays upright (as scanners do)."""
    stored = image.rotate(rotate, expand=True) if rotate else image  # PIL turns counter-clockwise
    w_pt, h_pt = stored.width * 72 / dpi, stored.height * 72 / dpi
    page = pdf.new_page(w_pt, h_pt, index=index)
    obj = pdfium.PdfImage.new(pdf)
    obj.set_bitmap(pdfium.PdfBitmap.from_pil(stored.convert("RGB")))
    obj.set_matrix(pdfium.PdfMatrix().scale(w_pt, h_pt))
    page.insert_obj(obj)
    page.gen_content()
    if rotate:
        page.set_rotation(rotate)


def image_pdf(pages: list[tuple[str, int]], *, dpi: int = 300, rotate: dict[int, int] | None = None) -> bytes:
    """An image-only PDF of the given (paper, page) pairs; ``rotate`` maps a 0-based index of
    the new PDF to 90/180/270 degrees."""
    pdf = pdfium.PdfDocument.new()
    for k, (paper, number) in enumerate(pages):
        _add_image_page(pdf, render(paper, number, dpi), dpi, (rotate or {}).get(k, 0))
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def mixed_pdf(paper: str, scanned: set[int], pages: int, dpi: int = 300) -> bytes:
    """The first ``pages`` pages of a bundled paper, those in ``scanned`` (1-based) replaced
    by images of themselves: a text PDF with scanned pages in it."""
    src = pdfium.PdfDocument(str(PAPERS / paper))
    pdf = pdfium.PdfDocument.new()
    for n in range(1, pages + 1):
        if n in scanned:
            _add_image_page(pdf, src[n - 1].render(scale=dpi / 72, grayscale=True).to_pil(), dpi, 0)
        else:
            pdf.import_pages(src, [n - 1])
    buf = io.BytesIO()
    pdf.save(buf)
    src.close()
    return buf.getvalue()


def photo_pdf(seed: int = 1) -> bytes:
    """A page that is only a photo-like picture (smooth noise, no words)."""
    import random

    from PIL import Image, ImageFilter

    rng = random.Random(seed)
    img = Image.new("L", (600, 800))
    img.putdata([rng.randrange(256) for _ in range(600 * 800)])
    img = img.filter(ImageFilter.GaussianBlur(6))
    pdf = pdfium.PdfDocument.new()
    _add_image_page(pdf, img, 100, 0)
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def giant_page_pdf(side_pt: float = 10_000.0, text_page: bool = True) -> bytes:
    """A small file whose one image page measures `side_pt` × `side_pt` points (the red team's
    10000 × 10000 pt page: a low-resolution image stretched over it), after a text page of
    pasa.pdf when `text_page`."""
    pdf = pdfium.PdfDocument.new()
    if text_page:
        src = pdfium.PdfDocument(str(PAPERS / "pasa.pdf"))
        pdf.import_pages(src, [0])
    image = render("pasa.pdf", 1, dpi=150)
    image = image.crop((0, 0, image.width, image.width))  # square, as the red team's
    _add_image_page(pdf, image, image.width * 72 / side_pt, 0)
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def long_scan_pdf(pages: int, variant: int = 0, dpi: int = 50) -> bytes:
    """A cheap `pages`-page scan: page 4 of pasa.pdf as one small greyscale JPEG on every page
    (a few KB a page); `variant` makes otherwise equal files differ (another upload, not a
    duplicate)."""
    image = render("pasa.pdf", 4, dpi=dpi)
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG", quality=70)
    w_pt, h_pt = image.width * 72 / dpi, image.height * 72 / dpi
    pdf = pdfium.PdfDocument.new()
    for _ in range(pages):
        page = pdf.new_page(w_pt, h_pt)
        obj = pdfium.PdfImage.new(pdf)
        jpeg.seek(0)
        obj.load_jpeg(jpeg, autoclose=False)
        obj.set_matrix(pdfium.PdfMatrix().scale(w_pt, h_pt))
        page.insert_obj(obj)
        page.gen_content()
    buf = io.BytesIO()
    pdf.save(buf)
    return buf.getvalue() + f"% variant {variant}\n".encode()
