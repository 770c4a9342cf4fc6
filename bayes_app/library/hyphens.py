"""Words broken across lines: keep the hyphen when it belongs to the word ("token-level").

pdfium marks a hyphen at a line end as a hyphenation point (U+FFFE or U+0002; a soft hyphen U+00AD
in some files) whether it was typeset for the break ("pa-pers") or is part of a compound
("token-level"). `join_broken_words` decides per word, without rules for any document:

1. the text itself: the unbroken form ("papers") elsewhere in it → joined; the hyphenated form
   elsewhere → hyphen kept;
2. a digit on either side of a name ("PaSa-7b", "GPT-4o") or an acronym after it ("Grad-CAM")
   → hyphen kept;
3. the English word list of the app's embedding tokenizer (30k WordPiece entries) or wordfreq's
   English frequencies (an inflected "surpasses" the tokenizer lacks; a joined form must be common
   in itself, or nearly as common as its rarer half, so "longterm" from informal text does not
   count): the joined word is a word → joined ("pa-pers" → "papers", "sur-passes"); both halves
   are words of three letters or more and the joined form is not ("token" + "level") → hyphen kept;
4. otherwise joined (most line-end hyphens are syllable breaks).

Quote matching ignores a hyphen between letters (`library.quotes`), so either form still locates.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

_TOKENIZER = Path(__file__).resolve().parents[1] / "search" / "data" / "all-MiniLM-L6-v2.tokenizer.json"
COMMON_ZIPF = 3.0  # a joined form at least this frequent (Zipf scale) is a word ("surpasses" 3.0)
KNOWN_ZIPF = 2.0  # a rarer one counts when within RARER_HALF of its rarer half ("counterfactual" 2.3)
RARER_HALF = 2.0  # "longterm" 2.75 is 2.5 below "term": the compound "long-term"
_BROKEN = re.compile(r"([A-Za-z0-9]*)[\u00ad\ufffe\u0002]\s*([A-Za-z0-9]*)")


@lru_cache(maxsize=1)
def _words() -> frozenset[str]:
    try:
        vocab = json.loads(_TOKENIZER.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, KeyError, ValueError):
        return frozenset()
    return frozenset(w for w in vocab if w.isalpha())


def known_word(joined: str, left: str, right: str) -> bool:
    """Whether `joined` is an English word by wordfreq's frequencies, not a run-together compound."""
    from wordfreq import zipf_frequency  # half a second to import: on a worker's first document

    freq = zipf_frequency(joined, "en")
    if freq >= COMMON_ZIPF:
        return True
    rarer_half = min(zipf_frequency(left, "en"), zipf_frequency(right, "en"))
    return freq >= KNOWN_ZIPF and freq >= rarer_half - RARER_HALF


def keeps_hyphen(left: str, right: str, text: str = "") -> bool:
    """Whether `left` + `right`, broken at a line end, is written with a hyphen."""
    if not left or not right:
        return False
    joined, hyphenated = (left + right).lower(), f"{left}-{right}".lower()
    lower = text.lower()
    if re.search(rf"(?<!\w){re.escape(joined)}(?!\w)", lower):
        return False
    if re.search(rf"(?<!\w){re.escape(hyphenated)}(?!\w)", lower):
        return True
    if (left[-1].isdigit() or right[0].isdigit()) and not left.islower():
        return True  # "PaSa-7b", "GPT-4o" (a lower-case fragment before digits is a footnote mark)
    if re.match(r"[A-Z]{2}", right):
        return True  # "Grad-CAM", "Edge-SHAPer"
    words = _words()
    if joined in words or known_word(joined, left.lower(), right.lower()):
        return False
    return len(left) >= 3 and len(right) >= 3 and left.lower() in words and right.lower() in words


def join_broken_words(raw: str) -> str:
    """`raw` with each hyphenation mark (and the line break after it) replaced by "-" when the
    hyphen belongs to the word, else removed."""

    def one(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        return f"{left}{'-' if keeps_hyphen(left, right, raw) else ''}{right}"

    return _BROKEN.sub(one, raw)
