"""Text for pages without a usable text layer: detection, and recognition with Tesseract
(tesserocr, in-process; Debian's `tesseract-ocr` language data).

A recognised page becomes the same text a text layer would give — words separated by spaces,
lines by ``\\r\\n`` as pdfium writes them — plus each word's box as fractions of the page as
displayed (after its rotation and crop box), which is what the viewer overlays. So search,
chunking, quotes and highlights work on OCR'd pages exactly as on text pages.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pypdfium2 as pdfium

DPI = 300
# A page is rendered at DPI, or less when that would exceed the pixel budget (settings
# BAYES_OCR_MAX_PIXELS: rendering and Tesseract's copies of the image grow with it); a page
# the budget allows less than MIN_DPI is too large to read and fails on its own.
MAX_PIXELS = 36_000_000  # an A2 page at 300 dpi
MIN_DPI = 100
MIN_WORD_CONFIDENCE = 40.0  # Tesseract's 0–100 word confidence; lower is noise
MIN_PAGE_CONFIDENCE = 55.0  # mean over kept words; below it a page (a photo) yields no text
MIN_VISIBLE_CHARS = 20  # a text layer with fewer visible characters is no text layer
# ISO 639-1 (what language detection gives) → Tesseract's language data names
TESSERACT_LANGS = {"en": "eng", "de": "deu", "fr": "fra"}
_TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)


class OcrUnavailable(RuntimeError):
    """Tesseract or its language data is not installed."""


@dataclass(frozen=True, slots=True)
class OcrWord:
    """A recognised word: ``text[start:end]`` of the page, and its box as fractions of the
    displayed page (x0, top, x1, bottom; origin top-left)."""

    start: int
    end: int
    x0: float
    top: float
    x1: float
    bottom: float

    def to_json(self) -> list[float]:
        return [self.start, self.end, round(self.x0, 5), round(self.top, 5), round(self.x1, 5), round(self.bottom, 5)]


@dataclass(frozen=True, slots=True)
class OcrPage:
    text: str
    words: tuple[OcrWord, ...]
    confidence: float  # mean word confidence of the kept words (0 when none)
    lang: str  # the Tesseract languages used ("eng", "deu+eng")


def needs_ocr(text: str) -> bool:
    """True when a page's text layer is missing or garbage: almost no visible characters,
    mostly replacement/private-use characters, or one glyph per line (a broken font map)."""
    visible = [ch for ch in text if not ch.isspace() and ch != "\ufffe"]
    if len(visible) < MIN_VISIBLE_CHARS:
        return True
    bad = sum(1 for ch in visible if ch == "\ufffd" or 0xE000 <= ord(ch) <= 0xF8FF or ord(ch) < 32)
    if bad / len(visible) > 0.3:
        return True
    lines = [ln for ln in text.replace("\r\n", "\n").split("\n") if ln.strip()]
    return len(lines) >= 20 and sum(1 for ln in lines if len(ln.strip()) <= 1) / len(lines) > 0.6


@lru_cache(maxsize=1)
def tessdata_dir() -> str:
    """Where Tesseract's language data is (TESSDATA_PREFIX, else Debian's directories)."""
    for d in ([os.environ["TESSDATA_PREFIX"]] if os.environ.get("TESSDATA_PREFIX") else []) + list(_TESSDATA_DIRS):
        if (Path(d) / "eng.traineddata").exists():
            return d
    raise OcrUnavailable("Tesseract's English language data is not installed (apt-get install tesseract-ocr-eng).")


def available_langs() -> set[str]:
    try:
        return {p.stem for p in Path(tessdata_dir()).glob("*.traineddata")}
    except OcrUnavailable:
        return set()


# Tesseract language data that is not a language one reads a paper in
_NOT_LANGUAGES = {"osd", "equ", "snum"}
# Tesseract's names → the name the UI shows (others are shown by their code)
LANG_NAMES = {"eng": "English", "deu": "German", "fra": "French", "spa": "Spanish", "ita": "Italian"}


def ocr_languages() -> list[str]:
    """The installed Tesseract languages a user can choose for an upload's OCR, sorted."""
    return sorted(lang for lang in available_langs() if lang not in _NOT_LANGUAGES)


def check_choice(choice: str | None) -> str:
    """A per-upload OCR language: "" (or "auto") = follow the detected language, else an
    installed Tesseract language ("deu"). Raises ValueError naming the valid choices."""
    choice = (choice or "").strip().lower()
    if choice in ("", "auto"):
        return ""
    valid = ocr_languages()
    if choice not in valid:
        raise ValueError(
            f"Unknown OCR language '{choice[:20]}': choose one of {', '.join(valid) or 'none (OCR not installed)'}"
            " or 'auto' (the detected language)."
        )
    return choice


def lang_label(lang: str) -> str:
    """ "German" for "deu+eng" (the first language is the one chosen or detected)."""
    first = (lang or "").split("+", 1)[0]
    return LANG_NAMES.get(first, first)


def chosen_lang(choice: str) -> str:
    """Tesseract languages for a chosen one: it plus English (papers mix in English terms)."""
    return choice if choice == "eng" else f"{choice}+eng"


def tesseract_lang(iso: str | None) -> str:
    """Tesseract languages for a detected ISO 639-1 language: that language plus English
    (papers mix in English terms), or English alone."""
    have = available_langs()
    lang = TESSERACT_LANGS.get((iso or "").lower(), "eng")
    if lang != "eng" and lang in have:
        return f"{lang}+eng"
    return "eng"


_local = threading.local()


def _api(lang: str):
    """One Tesseract engine per thread and language (loading the model takes ~0.3 s)."""
    import tesserocr

    cache = getattr(_local, "apis", None)
    if cache is None:
        cache = _local.apis = {}
    if lang not in cache:
        cache[lang] = tesserocr.PyTessBaseAPI(path=tessdata_dir(), lang=lang, psm=tesserocr.PSM.AUTO)
    return cache[lang]


class PageTooLarge(ValueError):
    """A page that cannot be read within the pixel budget at a resolution OCR can use."""


def render_dpi(width_pt: float, height_pt: float, dpi: int = DPI, max_pixels: int = MAX_PIXELS) -> float:
    """The resolution to render a page of this size at: `dpi`, lowered so that the image holds
    at most `max_pixels`; PageTooLarge (saying why) when that is below MIN_DPI."""
    area_in = max(width_pt, 1.0) * max(height_pt, 1.0) / 72**2
    fit = (max_pixels / area_in) ** 0.5
    if fit >= dpi:
        return float(dpi)
    if fit < MIN_DPI:
        raise PageTooLarge(
            f"it measures {width_pt / 72 * 2.54:,.0f} × {height_pt / 72 * 2.54:,.0f} cm, too large to read by text "
            f"recognition within {max_pixels / 1e6:.0f} megapixels (BAYES_OCR_MAX_PIXELS) at {MIN_DPI} dpi or more"
        )
    return fit


def render(page: pdfium.PdfPage, dpi: int = DPI, max_pixels: int = MAX_PIXELS):
    """The page as a greyscale image, as displayed (rotation and crop box applied), within
    `max_pixels` (see `render_dpi`; the size is checked before anything is drawn)."""
    width, height = page.get_size()
    if page.get_rotation() in (90, 270):
        width, height = height, width
    scale = render_dpi(width, height, dpi, max_pixels) / 72
    return page.render(scale=scale, grayscale=True).to_pil()


def recognise_image(image, lang: str = "eng", timeout_s: float = 60.0) -> OcrPage:
    """Recognise a page image; words below :data:`MIN_WORD_CONFIDENCE` are dropped, and a page
    whose kept words average below :data:`MIN_PAGE_CONFIDENCE` (a photo) yields no text."""
    import tesserocr
    from tesserocr import RIL

    api = _api(lang)
    api.SetImage(image)
    if not api.Recognize(timeout=int(timeout_s * 1000)):
        raise TimeoutError(f"text recognition took longer than {timeout_s:.0f} s")
    width, height = image.size
    parts: list[str] = []
    words: list[OcrWord] = []
    confidences: list[float] = []
    pos = 0
    line: list[str] = []
    ri = api.GetIterator()
    for w in tesserocr.iterate_level(ri, RIL.WORD):
        try:
            word = (w.GetUTF8Text(RIL.WORD) or "").strip()
        except RuntimeError:  # tesserocr: "No text returned" for an empty page
            break
        conf = w.Confidence(RIL.WORD)
        box = w.BoundingBox(RIL.WORD)
        last = w.IsAtFinalElement(RIL.TEXTLINE, RIL.WORD)
        if word and box and conf >= MIN_WORD_CONFIDENCE:
            if line:
                line.append(" ")
                pos += 1
            x0, y0, x1, y1 = box
            words.append(OcrWord(pos, pos + len(word), x0 / width, y0 / height, x1 / width, y1 / height))
            line.append(word)
            pos += len(word)
            confidences.append(conf)
        if last and line:
            parts.append("".join(line))
            line = []
            pos += 2  # "\r\n"
    if line:
        parts.append("".join(line))
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    if mean < MIN_PAGE_CONFIDENCE or not _looks_like_text(words, parts):
        return OcrPage("", (), mean, lang)
    return OcrPage("\r\n".join(parts), tuple(words), mean, lang)


def _looks_like_text(words: Sequence[OcrWord], lines: Sequence[str]) -> bool:
    """A photo read as text gives short, mostly non-alphabetic fragments."""
    text = " ".join(lines)
    letters = sum(ch.isalpha() for ch in text)
    return len(words) >= 3 and letters >= 0.5 * len(text.replace(" ", ""))


def recognise(
    page: pdfium.PdfPage, lang: str = "eng", *, dpi: int = DPI, timeout_s: float = 60.0, max_pixels: int = MAX_PIXELS
) -> OcrPage:
    """Render and recognise one PDF page (see :func:`recognise_image`)."""
    return recognise_image(render(page, dpi, max_pixels), lang, timeout_s)


def word_rects(words: Sequence[Sequence[float]], start: int, end: int) -> list[tuple[float, float, float, float]]:
    """Boxes of ``text[start:end]`` of an OCR'd page from its stored words
    (``OcrWord.to_json`` rows), merged per printed line: (x0, top, x1, bottom) fractions."""
    rects: list[list[float]] = []
    for w_start, w_end, x0, top, x1, bottom in words:
        if w_end <= start or w_start >= end:
            continue
        if rects and _same_line(rects[-1], top, bottom) and x0 >= rects[-1][0]:
            r = rects[-1]
            r[1], r[2], r[3] = min(r[1], top), max(r[2], x1), max(r[3], bottom)
        else:
            rects.append([x0, top, x1, bottom])
    return [(r[0], r[1], r[2], r[3]) for r in rects]


def _same_line(rect: Sequence[float], top: float, bottom: float) -> bool:
    overlap = min(rect[3], bottom) - max(rect[1], top)
    return overlap > 0.5 * min(rect[3] - rect[1], bottom - top)
