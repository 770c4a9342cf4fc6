"""Quote matching against PDF page text: a normaliser that keeps a map back to raw offsets.

Normalisation (applied identically to page text and quote, so matching is exact afterwards):
- whitespace runs (incl. ``\\r\\n``, form feeds, NBSP, C0 controls and private-use glyphs that
  pdfium emits for large math delimiters) become one space; no leading/trailing space;
- soft hyphens U+00AD and pdfium's hyphenation markers U+FFFE / U+0002 are dropped together with
  a following line break ("pa\\ufffepers" -> "papers");
- dashes (‐ ‑ ‒ – — ― −) become "-"; a "-" directly followed by a line break is glued to the
  next line; a "-" between two letters/digits is dropped, so "hyphen-\\nation", "hyphenation",
  "state-of-\\nthe-art" and "state-of-the-art" all compare equal (and so do "a—b" and "ab");
- curly/typographic quotes and primes become ' or ";
- compatibility forms are decomposed (ligatures ﬁ ﬂ ﬀ ﬃ ﬄ -> fi fl ff ffi ffl, "…" -> "..."),
  accents are stripped (incl. pdfium's detached spacing accents: "M¨uller" -> "muller"), and
  the result is case-folded.
Every normalised character maps to the raw offset of the character it came from (each letter of
an expanded ligature maps to the ligature's offset).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_DROP_MARKERS = frozenset("\u00ad\ufffe\u0002\u200b\u200c\u200d\u2060\ufeff")
_DASHES = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
_QUOTES = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
}
_LINE_BREAKS = frozenset("\r\n\u2028\u2029\x0b\x0c\x85")
_SPACE = " "


@dataclass(frozen=True, slots=True)
class Normalized:
    """Normalised text plus ``index_map[i]`` = raw offset of normalised character ``i``."""

    text: str
    index_map: tuple[int, ...]


def _is_space(c: str) -> bool:
    o = ord(c)
    return c.isspace() or o < 0x20 or 0x7F <= o < 0xA0 or 0xE000 <= o <= 0xF8FF


@lru_cache(maxsize=4096)
def _fold(c: str) -> str:
    """Fold one non-space, non-dash, non-marker character to its comparison form."""
    if c in _QUOTES:
        return _QUOTES[c]
    decomposed = unicodedata.normalize("NFKD", c)
    kept = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    if kept.strip() == "" and decomposed != c:
        return ""  # a spacing accent such as "¨" or "´" (NFKD gives space + combining mark)
    return kept.casefold()


def normalize(text: str) -> Normalized:
    """Normalise ``text`` for quote matching; see the module docstring for the rules."""
    out: list[str] = []
    idx: list[int] = []
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        if c in _DROP_MARKERS:
            i = _after_marker(text, i)
        elif _is_space(c):
            if out and out[-1] != _SPACE:
                out.append(_SPACE)
                idx.append(i)
            i = _space_end(text, i + 1)
        elif c in _DASHES:
            i = _dash(text, i, out, idx)
        else:
            for ch in _fold(c):
                out.append(ch)
                idx.append(i)
            i += 1
    if out and out[-1] == _SPACE:
        out.pop()
        idx.pop()
    return Normalized("".join(out), tuple(idx))


def _space_end(text: str, j: int) -> int:
    """The end of the run of spaces at ``j``."""
    n = len(text)
    while j < n and _is_space(text[j]):
        j += 1
    return j


def _after_marker(text: str, i: int) -> int:
    """Where to go on after the hyphenation marker at ``i``: past the line break when the marker
    ended a line (the two halves of the word join), else the next character."""
    i += 1
    j = _space_end(text, i)
    return j if any(text[k] in _LINE_BREAKS for k in range(i, j)) else i


def _dash(text: str, i: int, out: list[str], idx: list[int]) -> int:
    """The dash at ``i``: kept as "-", or dropped inside a word; returns where to go on."""
    j = _space_end(text, i + 1)
    line_end = j > i + 1 and any(text[k] in _LINE_BREAKS for k in range(i + 1, j))
    nxt = j if line_end else i + 1  # "-" at the end of a line: glue to the next line
    # an intra-word hyphen is dropped (see module docstring)
    if not (out and out[-1].isalnum() and nxt < len(text) and text[nxt].isalnum()):
        out.append("-")
        idx.append(i)
    return nxt


@lru_cache(maxsize=32)
def _normalized_cached(text: str) -> Normalized:
    # Critics check many quotes against the same page; normalising it once is the main cost.
    return normalize(text)


def locate_quote(page_text: str, quote: str) -> tuple[int, int] | None:
    """Return raw ``(start, end)`` offsets of the first match of ``quote`` in ``page_text``.

    Matching is exact after normalisation (no fuzzy fallback). ``page_text[start:end]`` spans
    the matched passage, including any line breaks or hyphenation markers inside it.
    """
    q = normalize(quote).text
    if not q:
        return None
    norm = _normalized_cached(page_text)
    k = norm.text.find(q)
    if k < 0:
        return None
    return norm.index_map[k], norm.index_map[k + len(q) - 1] + 1


def quote_in_text(text: str, quote: str) -> bool:
    """True if ``quote`` occurs in ``text`` after normalisation (empty quotes never match)."""
    q = normalize(quote).text
    return bool(q) and q in _normalized_cached(text).text


@lru_cache(maxsize=32)
def _letters_cached(text: str) -> Normalized:
    norm = _normalized_cached(text)
    keep = [k for k, c in enumerate(norm.text) if c.isalnum()]
    return Normalized("".join(norm.text[k] for k in keep), tuple(norm.index_map[k] for k in keep))


def locate_quote_loose(page_text: str, quote: str) -> tuple[int, int] | None:
    """Like :func:`locate_quote`, comparing letters and digits only (as the viewer's text-layer
    highlighter does): punctuation, spacing and the order pdf.js gives hyphens do not matter."""
    found = locate_quote(page_text, quote)
    if found is not None:
        return found
    q = "".join(c for c in normalize(quote).text if c.isalnum())
    if len(q) < 8:  # too short to be located reliably by letters alone
        return None
    letters = _letters_cached(page_text)
    k = letters.text.find(q)
    if k < 0:
        return None
    return letters.index_map[k], letters.index_map[k + len(q) - 1] + 1
