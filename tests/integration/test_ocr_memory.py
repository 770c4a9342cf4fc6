"""Issue 36.5: OCR memory is bounded. A page is rendered within a pixel budget (300 dpi, less
for a large page); a page the budget cannot hold at a readable resolution — the red team's
10000 × 10000 pt image page — is not rendered at all: it fails on its own with a message naming
the page and the reason, and the document keeps its other pages. The peak RSS of a process
doing the OCR is measured (tests/support/ocr_peak.py; the unbounded page needed > 4 GB)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bayes_app.library import ocr
from bayes_app.models import DocStatus, Document
from bayes_app.settings import get_settings
from tests.support import scans
from tests.support.ingest_env import ingest as ingest_into
from tests.support.ingest_env import ingest_env


def test_render_resolution_is_bounded_by_the_pixel_budget():
    assert ocr.render_dpi(595, 842) == ocr.DPI  # A4: 300 dpi, 8.7 MP
    a1 = ocr.render_dpi(1684, 2384)  # A1 at 300 dpi would be 70 MP
    assert ocr.MIN_DPI < a1 < ocr.DPI
    assert (1684 / 72 * a1) * (2384 / 72 * a1) <= ocr.MAX_PIXELS * 1.0001
    with pytest.raises(ocr.PageTooLarge, match="353 × 353 cm"):
        ocr.render_dpi(10_000, 10_000)


def _peak(tmp_path, data: bytes) -> dict:
    path = tmp_path / "page.pdf"
    path.write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-m", "tests.support.ocr_peak", str(path)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_giant_page_fails_alone_and_the_ocr_process_stays_small(tmp_path):
    ceiling = get_settings().worker_max_rss_mb  # 3072 MB: the worker's recycle threshold
    giant = _peak(tmp_path, scans.giant_page_pdf())
    assert giant["with_text"] == [1]
    assert giant["read"] == []
    assert giant["unread"] == [
        "Page 2 was not read: it measures 353 × 353 cm, too large to read by text recognition within 36 megapixels "
        "(BAYES_OCR_MAX_PIXELS) at 100 dpi or more."
    ]
    assert giant["peak_rss_mb"] < ceiling / 4, giant
    # a large page the budget can hold is read, downscaled, within the same order of memory
    poster = _peak(tmp_path, scans.giant_page_pdf(1_700, text_page=False))
    assert poster["read"] == [1]
    assert poster["unread"] == []
    assert poster["peak_rss_mb"] < ceiling / 3, poster


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with ingest_env(tmp_path_factory.mktemp("ocrmem"), "giant@example.com") as e:
        yield e


def test_the_document_keeps_its_other_pages_and_says_which_was_not_read(env):
    from bayes_app.db import session_scope
    from bayes_app.library import ingest
    from bayes_app.library.documents import list_documents
    from bayes_app.usecases.library import document_out

    doc_id, res = ingest_into(env, scans.giant_page_pdf(), "giant.pdf", ingest.OcrOptions())
    assert res.status == DocStatus.INDEXED, res
    with session_scope(env["db_url"]) as s:
        doc = s.get(Document, doc_id)
        assert doc.page_count == 2
        assert doc.chunk_count > 0
        out = next(document_out(v) for v in list_documents(s, env["owner"]) if v.id == doc_id)
    assert out.error is None
    assert out.unread_pages.startswith("Page 2 was not read: it measures 353 × 353 cm")

    only, err = ingest_into(env, scans.giant_page_pdf(text_page=False), "only-giant.pdf", ingest.OcrOptions())
    assert isinstance(err, ingest.IngestError)
    assert err.code == "no_text"
    assert err.message.startswith("No page of this PDF could be read. Page 1 was not read: it measures 353")
