"""Issue 24.8: a file is a PDF only when `%PDF-` comes first (after an optional BOM and
whitespace) and pdfium opens it; HTML/SVG polyglots get a clear 415 and nothing is stored."""

from __future__ import annotations

import io

import pytest

from bayes_app.library import documents as lib
from tests.support import pdfs
from tests.support.tiny_pdf import text_pdf

GOOD = text_pdf("A real paper", ["with a real text layer"])
POLYGLOTS = {
    "html": b"<!doctype html><html><!-- %PDF-1.7 --><script>fetch('/api/v1/me')</script></html>\n" + GOOD,
    "svg": b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><!-- %PDF-1.4 --></svg>\n' + GOOD,
    "text": b"notes\n%PDF-1.4\n" + GOOD[9:],
}


@pytest.mark.parametrize("kind", sorted(POLYGLOTS))
def test_polyglots_are_refused(kind):
    with pytest.raises(lib.LibraryError) as err:
        lib.check_pdf(POLYGLOTS[kind], f"{kind}.pdf")
    assert err.value.status == 415
    assert err.value.code == "not_pdf"
    assert "%PDF-" in err.value.message
    assert f"{kind}.pdf" in err.value.message


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf", b"\r\n  \t", b"\xef\xbb\xbf\n"])
def test_real_pdfs_pass_with_a_bom_or_leading_whitespace(prefix):
    stream = io.BytesIO(prefix + GOOD)
    lib.check_pdf(stream, "paper.pdf")
    assert stream.tell() == 0  # left where it was, for storing
    lib.check_pdf(prefix + GOOD, "paper.pdf")


def test_pdfium_must_open_it_but_a_password_is_for_ingestion_to_explain():
    with pytest.raises(lib.LibraryError) as err:
        lib.check_pdf(pdfs.truncated_pdf(), "cut.pdf")
    assert err.value.code == "corrupt"
    assert err.value.status == 400
    assert "damaged" in err.value.message
    with pytest.raises(lib.LibraryError) as err:
        lib.check_pdf(b"%PDF-1.4\nnothing else", "fake.pdf")
    assert err.value.status == 400
    lib.check_pdf(pdfs.encrypted_pdf(), "locked.pdf")  # accepted; ingestion says "password"


def test_an_upload_of_a_polyglot_stores_nothing(configure, tmp_path):
    from bayes_app.library import storage, uploads

    configure(BAYES_DATA_DIR=str(tmp_path), BAYES_STORAGE_URL="")
    with pytest.raises(uploads.UploadRejected) as err:
        uploads.store_checked(io.BytesIO(POLYGLOTS["html"]), "page.html")
    assert err.value.status == 415
    assert list(storage.default_store().iter_shas()) == []
    assert uploads.store_checked(io.BytesIO(GOOD), "ok.pdf").size == len(GOOD)
