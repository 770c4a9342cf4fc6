"""Extractive judgements used without a model (and as the fallback with one):
how well a wording is supported by a quote, and whether two claims disagree.

Support = share of the wording's content terms (stemmed, stopwords dropped) found in the
quote, lowered when the wording is categorical ("always", "proves", "all" …) where the quote
is hedged or does not say so. The suggested rewrite softens those words; a wording the
quote barely covers gets the quote's own sentence as the suggestion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bayes_app.models import SupportLabel
from bayes_app.search.sparse import tokens

_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")

# categorical word -> hedged replacement ("" drops it)
STRONG = {
    "always": "often", "never": "rarely", "all": "many", "every": "many", "proves": "suggests",
    "prove": "suggest", "proved": "suggested", "proven": "suggested", "definitely": "", "certainly": "",
    "clearly": "", "undoubtedly": "", "must": "may", "guarantees": "supports", "guarantee": "support",
    "conclusively": "", "completely": "largely", "entirely": "largely", "none": "few",
    "impossible": "unlikely", "demonstrates": "indicates", "demonstrate": "indicate",
}
HEDGES = frozenset("may might could suggest suggests suggested possibly perhaps likely unlikely some "
                   "preliminary appears appear seem seems partially limited moderate modest often".split())
NEGATIONS = frozenset("not no never none neither nor cannot without fails fail failed lack lacks "
                      "unable doesn't don't didn't isn't aren't wasn't weren't".split())
CONTRAST = frozenset("however contrary contrast unlike whereas although but despite contradicts "
                     "contradict refutes refute disputes dispute opposite".split())
# antonym pairs: one claim says the left word where the other says the right one
ANTONYMS = [("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"),
            ("higher", "lower"), ("more", "less"), ("better", "worse"), ("improves", "worsens"),
            ("improve", "worsen"), ("improved", "worsened"), ("outperforms", "underperforms"),
            ("effective", "ineffective"), ("significant", "insignificant"), ("positive", "negative"),
            ("supports", "contradicts"), ("raises", "lowers"), ("benefit", "harm"), ("helps", "hurts"),
            ("faster", "slower"), ("larger", "smaller"), ("robust", "fragile"), ("accurate", "inaccurate")]


@dataclass(frozen=True)
class SupportResult:
    score: float
    label: str
    rewrite: str | None

    def to_json(self) -> dict:
        return {"support_score": self.score, "support_label": self.label, "suggested_rewrite": self.rewrite}


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


def label_for(score: float) -> str:
    if score >= 0.7:
        return SupportLabel.SUPPORTED
    if score >= 0.35:
        return SupportLabel.PARTIAL
    return SupportLabel.UNSUPPORTED


def soften(wording: str) -> str:
    """Replace categorical words with hedged ones, keeping everything else as written."""
    def repl(m: re.Match) -> str:
        w = m.group(0)
        new = STRONG.get(w.lower())
        if new is None:
            return w
        if not new:
            return ""
        return new.capitalize() if w[0].isupper() else new
    out = re.sub(r"[A-Za-z]+", repl, wording)
    return re.sub(r"\s{2,}", " ", out).replace(" ,", ",").replace(" .", ".").strip()


def score_support(wording: str, quote: str) -> SupportResult:
    """How well `quote` supports `wording` (0..1), its label and a rewrite when it overstates."""
    w_terms = set(tokens(wording))
    q_terms = set(tokens(quote))
    if not w_terms or not q_terms:
        return SupportResult(0.0, SupportLabel.UNSUPPORTED, None)
    coverage = len(w_terms & q_terms) / len(w_terms)
    w_words, q_words = set(_words(wording)), set(_words(quote))
    overstated = sorted(w for w in w_words if w in STRONG and w not in q_words)
    hedged_source = bool(q_words & HEDGES) and not (w_words & HEDGES)
    negation_flip = bool(w_words & NEGATIONS) != bool(q_words & NEGATIONS)
    score = coverage
    if overstated:
        score -= 0.15 * min(2, len(overstated))
    if hedged_source:
        score -= 0.15
    if negation_flip:
        score -= 0.3
    score = round(max(0.0, min(1.0, score)), 3)
    label = label_for(score)
    rewrite = None
    if overstated or hedged_source:
        rewrite = soften(wording)
        if hedged_source and rewrite == wording:
            rewrite = "Evidence suggests that " + wording[:1].lower() + wording[1:]
        if label == SupportLabel.SUPPORTED:
            label = SupportLabel.PARTIAL  # it overstates the evidence
    if label == SupportLabel.UNSUPPORTED:
        rewrite = " ".join(quote.split())
    return SupportResult(score, label, rewrite if rewrite and rewrite != wording else None)


def _polarity_clash(a: set[str], b: set[str]) -> bool:
    for left, right in ANTONYMS:
        if (left in a and right in b) or (right in a and left in b):
            return True
    return False


def disagree(a: str, b: str) -> bool:
    """True when two claims are on the same topic and one contradicts the other: shared
    content terms plus opposite polarity (negation, antonyms or an explicit contrast cue)."""
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return False
    shared = ta & tb
    if len(shared) < 2 or len(shared) / min(len(ta), len(tb)) < 0.25:
        return False
    wa, wb = set(_words(a)), set(_words(b))
    if bool(wa & NEGATIONS) != bool(wb & NEGATIONS):
        return True
    if _polarity_clash(wa, wb):
        return True
    return bool((wa ^ wb) & CONTRAST) and bool({"contradicts", "refutes", "contrary", "disputes"} & (wa | wb))
