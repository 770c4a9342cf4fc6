"""Languages of passages and the cross-language leg of search.

Language detection: ``py3langid`` (langid.py's model, shipped inside the wheel; ~0.1 ms per
passage). A passage whose detection is unsure (symbols, numbers, a few words) takes its
document's language; a document's language is the one most of its text is in.

The cross-language leg (see :func:`bayes_app.search.hybrid.search`): passages that are not in
English also get a multilingual-e5-small vector (in a second collection), and an English query
is embedded by both models. Besides today's two lists (BM25 and the English MiniLM vectors),
each non-English language of the library contributes one ranked list: its passages ordered by
multilingual cosine, weighted in the RRF by :func:`cross_weight` — up to :data:`CROSS_WEIGHT`,
so that a close German match counts as much as an English passage that leads both English
lists, and nothing under :data:`CROSS_FLOOR`. (Across languages the multilingual model's
cosines are not comparable: an English passage on the same topic outscores the faithful
translation, which is why one ranking over all passages fails in a mixed library;
``benchmarks/crosslang.py`` measures it.)
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import NamedTuple

import Stemmer

from bayes_app.search import sparse

ENGLISH = "en"
UNKNOWN = ""
CROSS_MODEL = "multilingual-e5-small-int8"
# A passage's weight in its language's list ramps from 0 at CROSS_FLOOR to CROSS_WEIGHT at
# CROSS_FULL (multilingual cosine with the query). Unrelated passages score 0.70-0.85 (99th
# percentile 0.81) and faithful translations 0.79-0.90 (median 0.84) on the evaluation pool,
# so a hard cut either drops translations or lets unrelated passages in; the ramp was chosen
# on that pool (benchmarks/crosslang.py prints the sensitivity) and checked on SciFact.
CROSS_FLOOR = 0.78
CROSS_FULL = 0.84
CROSS_WEIGHT = 2.0
MIN_CONFIDENCE = 0.9
MIN_LETTERS = 20

NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "cs": "Czech",
    "ru": "Russian",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "tr": "Turkish",
    "el": "Greek",
    "hu": "Hungarian",
    "ro": "Romanian",
    "uk": "Ukrainian",
    "ar": "Arabic",
}

_identifier = None
_lock = threading.Lock()


class Detection(NamedTuple):
    lang: str  # ISO 639-1 code, or "" when unsure
    confidence: float


def _ident():
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _identifier


def detect(text: str) -> Detection:
    """The language of ``text``; ``""`` when it has too few letters or the model is unsure."""
    if sum(ch.isalpha() for ch in text[:2000]) < MIN_LETTERS:
        return Detection(UNKNOWN, 0.0)
    lang, conf = _ident().classify(text[:5000])
    return Detection(lang, float(conf)) if conf >= MIN_CONFIDENCE else Detection(UNKNOWN, float(conf))


def language_name(code: str) -> str:
    """ "German" for "de"; the code itself for others; "" for unknown."""
    return NAMES.get(code, code.upper() if code else "")


def foreign_label(code: str | None) -> str:
    """What a citation says about its passage's language: "German" for a passage not in
    English, "" for English or unknown (the common case says nothing)."""
    return "" if not code or code == ENGLISH else language_name(code)


def passage_languages(texts: list[str]) -> tuple[str, list[str]]:
    """(document language, language per passage): unsure passages take the document's."""
    found = [detect(t).lang for t in texts]
    weight: Counter[str] = Counter()
    for t, lang in zip(texts, found):
        if lang:
            weight[lang] += sum(ch.isalpha() for ch in t)
    doc = weight.most_common(1)[0][0] if weight else UNKNOWN
    return doc, [lang or doc for lang in found]


def cross_weight(cosine: float, floor: float = CROSS_FLOOR, full: float = CROSS_FULL) -> float:
    """RRF weight of a cross-language hit with this multilingual cosine (0 under the floor)."""
    if cosine <= floor:
        return 0.0
    return CROSS_WEIGHT * min(1.0, (cosine - floor) / (full - floor))


def needs_cross_vector(lang: str) -> bool:
    """Passages in a known language other than English get a multilingual vector."""
    return bool(lang) and lang != ENGLISH


# -- language-aware BM25 (compared in benchmarks/crosslang.py; not used by the app)

_STEMMERS = {
    "de": "german",
    "fr": "french",
    "en": "english",
    "es": "spanish",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
}


def document_vector(text: str, lang: str) -> sparse.SparseVec:
    """BM25 TF weights with the Snowball stemmer of ``lang`` (English for unknown ones)."""
    stemmer = Stemmer.Stemmer(_STEMMERS.get(lang, "english"))
    toks = stemmer.stemWords(sparse._words(text))
    tf = Counter(sparse.term_id(t) for t in toks)
    norm = sparse.K1 * (1.0 - sparse.B + sparse.B * len(toks) / sparse.AVGDL)
    ids = sorted(tf)
    return sparse.SparseVec(ids, [tf[i] * (sparse.K1 + 1.0) / (tf[i] + norm) for i in ids])
