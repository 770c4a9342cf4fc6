"""PDF text extraction, typed errors and metadata heuristics on real papers."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from bayes_app.library.pdf import (
    PageText,
    PdfError,
    extract_metadata,
    extract_pages,
    iter_pages,
    pdf_document,
)

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"
PASA = PAPERS / "pasa.pdf"
REVIEW = PAPERS / "explanations-molecular-prediction-models.pdf"
MEDIA = PAPERS / "duplicate-media.pdf"
PASA_TITLE = "PaSa: An LLM Agent for Comprehensive Academic Paper Search"


def _encrypted(user_password: str, owner_password: str = "owner") -> bytes:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=MEDIA)
    writer.encrypt(user_password, owner_password, algorithm="RC4-128")  # RC4 needs no crypto lib
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _image_only_pdf(pages: int = 3) -> bytes:
    """A 'scanned' PDF: each page holds one bitmap image and no text."""
    from tests.support.pdfs import scanned_pdf

    return scanned_pdf(pages)


def _with_info(source: Path, info: dict[str, str]) -> bytes:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=source)
    writer.add_metadata(info)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _raises(code: str, source, **kwargs) -> PdfError:
    with pytest.raises(PdfError) as info:
        extract_pages(source, **kwargs)
    err = info.value
    assert err.code == code, err
    assert str(err) == err.message
    assert "pdfium" not in err.message.lower()
    assert err.message.endswith(".")
    return err


# --------------------------------------------------------------------------- extraction


def test_extract_pages_matches_pdfium_text_exactly() -> None:
    pages = extract_pages(PASA)
    assert [p.number for p in pages] == list(range(1, 16))
    doc = pdfium.PdfDocument(PASA)
    try:
        for page in pages:
            assert page.text == doc[page.number - 1].get_textpage().get_text_range()
    finally:
        doc.close()
    assert pages[0].text.startswith(PASA_TITLE + "\r\n")


def test_bytes_path_and_str_sources_agree() -> None:
    from_path = extract_pages(MEDIA)
    assert extract_pages(MEDIA.read_bytes()) == from_path
    assert extract_pages(bytearray(MEDIA.read_bytes())) == from_path
    assert extract_pages(str(MEDIA)) == from_path
    assert all(isinstance(p, PageText) for p in from_path)


def test_iter_pages_is_lazy_and_can_stop_early() -> None:
    pages = iter_pages(REVIEW)
    first = next(pages)
    assert first.number == 1
    assert "Explanations of Molecular" in first.text
    pages.close()  # closes the document; must not raise


def test_iter_pages_leaves_an_open_document_open() -> None:
    with pdf_document(PASA) as pdf:
        assert len(list(iter_pages(pdf))) == 15
        assert len(pdf) == 15
        assert pdf[0].get_textpage().get_text_range()  # still usable


def test_owner_password_only_pdf_is_readable() -> None:
    pages = extract_pages(_encrypted(user_password=""))
    assert len(pages) == 5
    assert "Andy Warhol" in pages[0].text


# --------------------------------------------------------------------------- bad input


def test_zero_bytes_is_empty(tmp_path: Path) -> None:
    _raises("empty", b"")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    _raises("empty", empty)


def test_non_pdf_is_rejected_before_pdfium(tmp_path: Path) -> None:
    _raises("not_pdf", b"Hello, this is a text file.\n")
    png = tmp_path / "paper.pdf"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    _raises("not_pdf", png)


def test_password_protected_pdf_is_encrypted() -> None:
    err = _raises("encrypted", _encrypted(user_password="secret"))
    assert "password" in err.message


def test_truncated_pdf_is_corrupt() -> None:
    data = PASA.read_bytes()
    _raises("corrupt", data[: len(data) // 2])
    _raises("corrupt", b"%PDF-1.4\n this is not really a PDF")


def test_scanned_pdf_without_text_layer_is_no_text() -> None:
    data = _image_only_pdf()
    err = _raises("no_text", data)
    assert "scanned" in err.message
    # The caller can opt out and still get the (empty) pages.
    assert [p.text for p in extract_pages(data, require_text=False)] == ["", "", ""]


def test_no_text_is_raised_after_the_last_page() -> None:
    pages = iter_pages(_image_only_pdf(pages=2))
    assert [next(pages).number, next(pages).number] == [1, 2]
    with pytest.raises(PdfError) as info:
        next(pages)
    assert info.value.code == "no_text"


def test_page_limit() -> None:
    err = _raises("too_many_pages", PASA, max_pages=10)
    assert "15 pages" in err.message
    assert "10" in err.message
    assert len(extract_pages(PASA, max_pages=15)) == 15
    with pdf_document(PASA) as pdf, pytest.raises(PdfError) as info:
        list(iter_pages(pdf, max_pages=3))
    assert info.value.code == "too_many_pages"


# --------------------------------------------------------------------------- metadata


def test_metadata_pasa() -> None:
    with pdf_document(PASA) as pdf:
        meta = extract_metadata(pdf)
    assert meta.title == PASA_TITLE  # info Title is empty: found on the first page
    assert meta.year == 2025  # arXiv:2501.10120 stamp
    assert meta.authors[:2] == ["Yichen He", "Guanhua Huang"]
    assert meta.authors[-1] == "Weinan E"
    assert len(meta.authors) == 7
    assert meta.doi is None


def test_metadata_two_line_title_and_comma_separated_authors() -> None:
    with pdf_document(REVIEW) as pdf:
        meta = extract_metadata(pdf)
    assert meta.title == "A Perspective on Explanations of Molecular Prediction Models"
    assert meta.authors == [
        "Geemi P. Wellawatte",
        "Heta A. Gandhi",
        "Aditi Seshadri",
        "Andrew D. White",
    ]
    assert meta.year is None  # the page prints no year; the info CreationDate is not the paper's


def test_metadata_ignores_junk_info_title() -> None:
    with pdf_document(MEDIA) as pdf:
        meta = extract_metadata(pdf)
        assert pdf.get_metadata_value("Title") == "duplicate_media_template"
    assert meta.title == "SF Districts in the style of Andy Warhol"


def test_metadata_from_info_dict() -> None:
    data = _with_info(
        PASA,
        {
            "/Title": "Microsoft Word - draft_v3.docx",
            "/Author": "Jane Doe; John Smith",
            "/Subject": "Journal of Tests 12 (2019) 1-10. doi:10.1234/jot.2019.5678.",
            "/CreationDate": "D:20190101000000Z",
        },
    )
    with pdf_document(data) as pdf:
        meta = extract_metadata(pdf)
    assert meta.title == PASA_TITLE
    assert meta.authors == ["Jane Doe", "John Smith"]
    assert meta.doi == "10.1234/jot.2019.5678"
    assert meta.year == 2025  # the arXiv stamp on page 1 beats the CreationDate

    good = _with_info(PASA, {"/Title": "A Good Title From The Publisher", "/Author": "admin"})
    with pdf_document(good) as pdf:
        meta = extract_metadata(pdf)
    assert meta.title == "A Good Title From The Publisher"
    assert meta.authors[0] == "Yichen He"  # junk info Author: fall back to the first page


def test_year_and_doi_heuristics_on_first_page_text() -> None:
    text = (
        "Some Title of a Journal Article\r\nReceived 3 May 2018; accepted 2 Jan 2019\r\n"
        "© 2019 The Authors. Published by Elsevier B.V.\r\n"
        "Code and data (10.5281/zenodo.1234) are archived.\r\n"
        "DOI: https://doi.org/10.1039/D2SC01234A).\r\n"
    )
    with pdf_document(MEDIA) as pdf:  # CreationDate 2025
        meta = extract_metadata(pdf, first_page_text=text)
        assert meta.year == 2019
        assert meta.doi == "10.1039/D2SC01234A"  # the labelled DOI wins; trailing ")." dropped
        assert extract_metadata(pdf, first_page_text="arXiv:hep-th/9901001v2").year == 1999
        cited_then_stamp = "as in arXiv:1706.03762.\r\narXiv:2101.00001v3 [cs.CL] 1 Jan 2021"
        assert extract_metadata(pdf, first_page_text=cited_then_stamp).year == 2021
        assert extract_metadata(pdf, first_page_text="nothing here").year is None  # not the file's date
