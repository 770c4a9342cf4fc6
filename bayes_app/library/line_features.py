"""What structure analysis reads lines with: the patterns (captions, headings, reference
entries, page numbers, front matter), per-document statistics (body font size, running lines
repeated across pages) and per-line features (math, equations, tables, heading levels)."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from bayes_app.library.pdf import PageLayout

# --------------------------------------------------------------------------- patterns

CAPTION = re.compile(
    r"^\s*(?:Figure|Fig\.?|Table|Tab\.|Scheme|Chart|Algorithm|Listing|Exhibit|Box|"
    r"Supplementary\s+(?:Figure|Table))\s*(?:S?\d+|[IVX]+)[a-z]?\s*(?:[:.|—–-]|\s*$)",
    re.I,
)
PAGE_NUMBER = re.compile(r"^\s*(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?\s*(?:(?:of|/)\s*\d{1,4})?\s*$", re.I)
REF_HEADING = re.compile(
    r"^\s*(?:[\dIVX]+\.?\s+)?(?:references?(?:\s+and\s+notes)?|bibliography|literature\s+cited|"
    r"works\s+cited|cited\s+literature|reference\s+list)\s*:?\s*$",
    re.I,
)
KNOWN_HEADINGS = re.compile(
    r"^\s*(?:[\dIVX]+\.?\s+)?(?:abstract|introduction|background|related\s+work|methods?|methodology|"
    r"materials\s+and\s+methods|experiments?|experimental(?:\s+section)?|results(?:\s+and\s+discussion)?|"
    r"discussion|conclusions?|summary|acknowledge?ments?|appendix|appendices|"
    r"supplementary\s+(?:material|information)|limitations|future\s+work|keywords|"
    r"author\s+contributions|data\s+availability|conflicts?\s+of\s+interest|funding)\s*:?\s*$",
    re.I,
)
NUMBERED_HEADING = re.compile(
    r"^\s*(?P<num>(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?)|(?:[A-H](?:\.\d{1,2}){0,2}\.?)|(?:[IVX]{1,4}\.))"
    r"\s+(?P<title>[A-Z][^\n]{1,90})$"
)
APPENDIX_HEADING = re.compile(r"^\s*(?:appendix\b|appendices\b|supplementary\b|[A-H](?:\.\d+)?\.?\s+[A-Z])")
FRONT_LINE = re.compile(
    r"@|e-?mail|\bcorrespond|equal\s+contribution|contributed\s+equally|universit|institut|"
    r"department|dept\.|laborator|school\s+of|college|\binc\.|received|accepted|published|"
    r"copyright|©|licen[cs]e|keywords?\s*:|doi\s*:|orcid|affiliat|preprint|arxiv",
    re.I,
)
REF_ENTRY_START = re.compile(r"^\s*(?:\[\d{1,4}\]|\(\d{1,4}\)|\d{1,4}\.\s+[A-Z]|\d{1,4}\s+[A-Z][a-z]+,)")
YEAR = re.compile(r"\b(?:19|20)\d{2}[a-z]?\b")
FOOTNOTE_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆✉]+")
_MATH_CHARS = set("=+−×÷∑∏∫√≤≥≈≠∈∉∀∃∂∇∞±∝⊂⊆∪∩→←↔⇒⇔^_|‖∥·⋅")
_GREEK = re.compile(r"[\u0370-\u03ff\u1d00-\u1dbf\U0001d400-\U0001d7ff]")
_WORD = re.compile(r"[^\W\d_]{3,}")
_TOKEN = re.compile(r"\S+")
_NUMERIC_TOKEN = re.compile(r"^[(\[]?[-+±~<>≤≥]?\d[\d.,:/%×x±]*[)\]]?\*?$|^[-–—/|·*†‡✓✗]+$")


@lru_cache(maxsize=8192)
def clean_line(text: str) -> str:
    return " ".join(text.replace("\ufffe", "").replace("\u00ad", "").split())


# --------------------------------------------------------------------------- document stats


@dataclass(frozen=True, slots=True)
class DocStats:
    body_size: float
    two_columns: bool
    gutter: tuple[float, float]  # x range between the columns (two-column documents)
    text_left: float  # leftmost x of body text (margins are outside)
    text_right: float
    repeated: frozenset[str]  # normalised texts of running heads/feet


def norm_repeat(text: str) -> str:
    return re.sub(r"\d+", "#", clean_line(text).lower())


def doc_stats(pages: Sequence[PageLayout]) -> DocStats:
    sizes: Counter[float] = Counter()
    for p in pages:
        for ln in p.lines:
            if ln.size > 0:
                sizes[round(ln.size * 2) / 2] += ln.end - ln.start
    body_size = sizes.most_common(1)[0][0] if sizes else 0.0
    body = [
        (ln, p)
        for p in pages
        for ln in p.lines
        if body_size and abs(ln.size - body_size) <= 0.6 and ln.end - ln.start > 30
    ]
    width = statistics.median(p.width for p in pages) if pages else 612.0
    lefts = [ln.x0 for ln, _ in body]
    text_left = min(lefts, default=0.0)
    text_right = max((ln.x1 for ln, _ in body), default=width)
    # Two columns: many body lines start right of the middle and few cross it.
    right_starts = [ln for ln, p in body if ln.x0 > p.width * 0.45]
    crossing = [ln for ln, p in body if ln.x0 < p.width * 0.4 and ln.x1 > p.width * 0.6]
    two = len(right_starts) > 0.25 * max(1, len(body)) and len(crossing) < 0.25 * max(1, len(body))
    gutter = (width / 2, width / 2)
    if two:
        left_col_right = statistics.median(
            [ln.x1 for ln, p in body if ln.x0 < p.width * 0.4 and ln.x1 < p.width * 0.6] or [width / 2]
        )
        right_col_left = statistics.median([ln.x0 for ln in right_starts])
        gutter = (min(left_col_right, right_col_left), max(left_col_right, right_col_left))
    # Running heads/feet: the same text (numbers folded) near the top or bottom of many pages.
    seen: Counter[str] = Counter()
    for p in pages:
        keys = set()
        for ln in p.lines:
            if ln.size and (ln.top < p.height * 0.09 or ln.bottom > p.height * 0.91):
                keys.add(norm_repeat(p.text[ln.start : ln.end]))
        seen.update(keys)
    need = max(3, int(0.3 * len(pages)))
    repeated = frozenset(k for k, n in seen.items() if n >= need and k.strip("# "))
    return DocStats(body_size, two, gutter, text_left, text_right, repeated)


# --------------------------------------------------------------------------- line features


@lru_cache(maxsize=8192)
def math_score(text: str) -> float:
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    math = sum(c in _MATH_CHARS for c in chars) + len(_GREEK.findall(text))
    return math / len(chars)


@lru_cache(maxsize=8192)
def is_equation(text: str) -> bool:
    t = clean_line(text)
    words = _WORD.findall(t)
    long_words = [w for w in words if len(w) >= 4 and w.islower()]
    wordy = sum(len(w) for w in words) / max(1, len(t.replace(" ", "")))
    if re.search(r"[=≤≥≈]", t) and len(long_words) <= 1 and wordy < 0.5 and len(t) < 160:
        return True
    if re.search(r"\(\d{1,3}[a-z]?\)\s*$", t) and math_score(t) >= 0.05 and len(long_words) <= 4:
        return True
    return math_score(t) >= 0.2 and len(long_words) <= 1


@lru_cache(maxsize=8192)
def is_tabular(text: str) -> bool:
    tokens = _TOKEN.findall(clean_line(text))
    if len(tokens) < 2:
        return False
    numeric = sum(bool(_NUMERIC_TOKEN.match(t)) for t in tokens)
    return numeric >= 3 and numeric / len(tokens) >= 0.5


def _plausible_number(num: str, last: int) -> bool:
    """A section number follows the previous one ("8" right after "5.1" is a line of text)."""
    top = num.split(".")[0]
    return not top.isdigit() or last == 0 or last <= int(top) <= last + 1


def heading_level(
    text: str, size: float, stats: DocStats, last_number: int = 0, appendix: bool = False
) -> tuple[int, str] | None:
    """(level, heading text) if the line looks like a section heading."""
    t = clean_line(text)
    if not t or len(t) > 100 or len(t.split()) > 14 or t.endswith((",", ";", "-")):
        return None
    if "//" in t or "www." in t.casefold():  # a URL line (a footnote's) is no heading
        return None
    if REF_HEADING.match(t) or KNOWN_HEADINGS.match(t):
        m = NUMBERED_HEADING.match(t)
        level = (m["num"].rstrip(".").count(".") + 1) if m else 1
        return level, t
    m = NUMBERED_HEADING.match(t)
    big = stats.body_size > 0 and size >= stats.body_size * 1.12
    if (
        m
        and not t.endswith(".")
        and size >= stats.body_size - 0.6
        and not YEAR.search(m["title"])
        and ". " not in m["title"]
        and _plausible_number(m["num"], last_number)
        and (m["num"][0].isdigit() or appendix)
    ):
        title = m["title"]
        words = title.split()
        # Headings are short and mostly capitalised; body lines that start with a number are not.
        caps = sum(w[0].isupper() for w in words if w[0].isalpha())
        if (
            len(words) <= 10
            and (big or caps >= max(1, len(words) // 2) or len(words) <= 3)
            and math_score(t) < 0.1
            and not is_tabular(title)
        ):
            return m["num"].rstrip(".").count(".") + 1, t
    first_letter = next((c for c in t if c.isalpha()), "")
    if (
        big
        and len(t.split()) <= 12
        and first_letter.isupper()  # a larger body line ("the papers that …", OCR's size estimates) is no heading
        and sum(c.isalpha() for c in t) >= 3
        and not t.endswith(".")
        and math_score(t) < 0.05
    ):
        return 1, t
    return None
