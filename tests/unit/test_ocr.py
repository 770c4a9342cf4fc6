"""OCR of pages without a text layer (Tesseract through tesserocr): detection, accuracy
against the original text layer, word boxes on the displayed page (also rotated), photos,
and the highlight boxes built from the words."""

from __future__ import annotations

import re

import pypdfium2 as pdfium
import pytest
from rapidfuzz.distance import Levenshtein

from bayes_app.library import ocr, pdf
from bayes_app.library.quotes import locate_quote_loose
from tests.support import scans

# pasa.pdf page 3: two columns of body text (what a scanned paper mostly is)
BODY = ("pasa.pdf", 3)


def _norm(text: str) -> str:
    text = text.replace("\ufffe", "-").replace("\r\n", "\n")
    return " ".join(re.sub(r"-\s*\n\s*", "", text).split())


def _cer(ref: str, hyp: str) -> float:
    ref, hyp = _norm(ref), _norm(hyp)
    return Levenshtein.distance(ref, hyp) / len(ref)


def test_needs_ocr_detects_missing_and_garbage_text_layers():
    assert ocr.needs_ocr("")
    assert ocr.needs_ocr(" 12 \r\n")
    assert ocr.needs_ocr("\ufffd" * 200 + "abc")  # unmapped glyphs
    assert ocr.needs_ocr("\r\n".join("abcdefghijklmnopqrstuvwxy"))  # one glyph per line
    assert not ocr.needs_ocr(scans.text_layer(*BODY))


@pytest.fixture(scope="module")
def body_page():
    doc = pdfium.PdfDocument(scans.image_pdf([BODY]))
    with pdf.PDFIUM_LOCK:
        image = ocr.render(doc[0])
    yield ocr.recognise_image(image)
    doc.close()


def test_character_error_rate_at_300_dpi_is_at_most_two_percent(body_page):
    assert body_page.confidence > 80
    assert _cer(scans.text_layer(*BODY), body_page.text) <= 0.02


def test_word_boxes_cover_the_words_where_the_text_layer_has_them(body_page):
    """A sentence's OCR boxes overlap the same sentence's pdfium boxes on the original page."""
    sentence = "an LLM agent designed to autonomously and comprehensively assist researchers"
    original = pdfium.PdfDocument(str(scans.PAPERS / BODY[0]))
    text = original[BODY[1] - 1].get_textpage().get_text_range()
    start, end = locate_quote_loose(text, sentence)
    truth = pdf.text_rects(str(scans.PAPERS / BODY[0]), BODY[1], start, end)
    found = locate_quote_loose(body_page.text, sentence)
    assert found is not None
    got = ocr.word_rects([w.to_json() for w in body_page.words], *found)
    assert _overlap(got, truth) >= 0.8


def _area(r) -> float:
    return max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1])


def _overlap(got, truth) -> float:
    """Share of the truth boxes' area covered by the found boxes."""
    inter = sum(_area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))) for a in got for b in truth)
    return inter / sum(_area(b) for b in truth)


def test_a_page_stored_sideways_with_rotate_is_read_upright():
    doc = pdfium.PdfDocument(scans.image_pdf([BODY], dpi=200, rotate={0: 90}))
    page = doc[0]
    assert page.get_rotation() == 90
    result = ocr.recognise(page)
    assert _cer(scans.text_layer(*BODY), result.text) <= 0.05
    # boxes are fractions of the page as displayed (upright): the first words sit top-left
    first = result.words[0]
    assert first.x0 < 0.5
    assert first.top < 0.3


def test_150_dpi_still_reads_the_text():
    doc = pdfium.PdfDocument(scans.image_pdf([BODY], dpi=150))
    assert _cer(scans.text_layer(*BODY), ocr.recognise(doc[0]).text) <= 0.05


def test_a_photo_yields_no_text():
    doc = pdfium.PdfDocument(scans.photo_pdf())
    result = ocr.recognise(doc[0])
    assert result.text == ""
    assert result.words == ()


def test_word_rects_merge_words_per_line():
    words = [[0, 4, 0.1, 0.10, 0.15, 0.12], [5, 9, 0.16, 0.10, 0.2, 0.12], [11, 15, 0.1, 0.13, 0.14, 0.15]]
    assert ocr.word_rects(words, 0, 9) == [(0.1, 0.10, 0.2, 0.12)]
    assert len(ocr.word_rects(words, 2, 14)) == 2
    assert ocr.word_rects(words, 20, 30) == []


def test_the_ocr_language_choice_is_an_installed_language_or_auto():
    assert {"eng", "deu", "fra"} <= set(ocr.ocr_languages())
    assert "osd" not in ocr.ocr_languages()
    assert ocr.check_choice("") == ocr.check_choice(" AUTO ") == ""
    assert ocr.check_choice("DEU") == "deu"
    assert ocr.chosen_lang("deu") == "deu+eng"
    assert ocr.chosen_lang("eng") == "eng"
    for bad in ("tlh", "osd", "deu+eng", "../eng"):
        with pytest.raises(ValueError, match="choose one of deu, eng, fra"):
            ocr.check_choice(bad)
    assert (ocr.lang_label("deu+eng"), ocr.lang_label("eng"), ocr.lang_label("")) == ("German", "English", "")
