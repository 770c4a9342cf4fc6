"""Extractive judgements used without a model (and as the fallback with one): how well a
wording is supported by a quote, and whether two claims contradict each other.

Support is a logistic score over features of the wording and the quote sentence closest to
it: dense similarity (the app's embedding model), content-term coverage, numbers and
entities (acronyms, gene names) of the wording missing from the quote, and polarity — how
much closer the quote is to the wording than to the wording's negation (embeddings), plus
direction/negation cues. Weights were fitted on SciFact train claims (see
`benchmarks/support_tune.py`); categorical wording ("always", "proves") where the quote is
hedged lowers the score and gets a softened rewrite.

`disagree(a, b)` links two claims only when they share a subject (the same leading content
terms, high similarity) and have opposite polarity (one negates the shared predicate, or
they use opposite direction words for it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bayes_app.models import SupportLabel
from bayes_app.search.sparse import STOPWORDS, tokens

_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
# tokens with an inner capital or a digit next to letters: ADAR1, p53, PaSa, IL-6, GPT-4o
_ENTITY = re.compile(r"\b[\w-]*(?:[a-z][A-Z]|[A-Z]{2}|[A-Za-z]\d|\d[A-Za-z])[\w-]*\b")

# categorical word -> hedged replacement ("" drops it)
STRONG = {
    "always": "often",
    "never": "rarely",
    "all": "many",
    "every": "many",
    "proves": "suggests",
    "prove": "suggest",
    "proved": "suggested",
    "proven": "suggested",
    "definitely": "",
    "certainly": "",
    "clearly": "",
    "undoubtedly": "",
    "must": "may",
    "guarantees": "supports",
    "guarantee": "support",
    "conclusively": "",
    "completely": "largely",
    "entirely": "largely",
    "none": "few",
    "impossible": "unlikely",
    "demonstrates": "indicates",
    "demonstrate": "indicate",
}
HEDGES = frozenset(
    "may might could suggest suggests suggested possibly perhaps likely unlikely some "
    "preliminary appears appear seem seems partially limited moderate modest often".split()
)
NEGATIONS = frozenset(
    "not no never none neither nor cannot without fails fail failed lack lacks lacking "
    "absence absent unable doesn't don't didn't isn't aren't wasn't weren't can't won't "
    "unaffected".split()
)
NULL_WORDS = frozenset(
    "ineffective unrelated insignificant unchanged similar same equivalent comparable dispensable unnecessary".split()
)
UP = frozenset(
    "increase increases increased increasing higher more greater elevated elevate elevates enhance "
    "enhances enhanced promote promotes promoted induce induces induced activate activates "
    "activated upregulates upregulated up-regulates gain improves improve improved improvement "
    "rise rises raised raise stimulates stimulate accelerates accelerated accelerate exceed "
    "exceeds larger longer faster stronger better outperforms outperform required essential "
    "necessary effective beneficial".split()
)
DOWN = frozenset(
    "decrease decreases decreased decreasing lower less reduced reduce reduces reduction "
    "reducing inhibit inhibits inhibited inhibition suppress suppresses suppressed repress "
    "represses impair impairs impaired downregulates downregulated down-regulates loss loses "
    "worsens worsen worse diminish diminishes diminished attenuates attenuated attenuate slower "
    "smaller shorter weaker underperforms prevents prevent prevented blocks block blocked "
    "abrogated abolished ineffective harmful".split()
)
# opposite wordings, swapped both ways to build a wording's negation
_OPPOSITES = [
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("higher", "lower"),
    ("more", "less"),
    ("better", "worse"),
    ("improves", "worsens"),
    ("improve", "worsen"),
    ("improved", "worsened"),
    ("outperforms", "underperforms"),
    ("reduces", "increases"),
    ("reduce", "increase"),
    ("reduced", "increased"),
    ("promotes", "inhibits"),
    ("activates", "inhibits"),
    ("enhances", "impairs"),
    ("greater", "smaller"),
    ("effective", "ineffective"),
    ("significant", "insignificant"),
    ("positive", "negative"),
    ("positively", "negatively"),
    ("required", "dispensable"),
    ("induces", "suppresses"),
    ("upregulates", "downregulates"),
    ("raises", "lowers"),
    ("accelerates", "slows"),
    ("faster", "slower"),
    ("larger", "smaller"),
    ("benefit", "harm"),
    ("helps", "hurts"),
    ("robust", "fragile"),
    ("accurate", "inaccurate"),
    ("supports", "contradicts"),
]
SWAP: dict[str, str] = {}
for _a, _b in _OPPOSITES:
    SWAP.setdefault(_a, _b)
    SWAP.setdefault(_b, _a)
_AUX = re.compile(r"\b(is|are|was|were|can|could|does|do|did|has|have|had|may|might|will|would|should)\b")

# Logistic weights fitted on SciFact train, the `tune` split (benchmarks/support_tune.py --fit):
# support on evidence vs the top BM25 non-evidence abstract; contradiction on CONTRADICT vs
# SUPPORT evidence sentences.
SUPPORT_WEIGHTS = {
    "bias": -5.089,
    "dense": 6.391,
    "coverage": 1.665,
    "numbers_missing": -1.385,
    "entities_missing": -0.283,
}
CONTRADICTION_WEIGHTS = {
    "bias": -1.332,
    "polarity": 15.367,
    "direction": -0.317,
    "negation_mismatch": 1.206,
    "null_or_negated": 0.78,
    "polarity_x_dense": -59.259,
    "negation_mismatch_x_dense": -1.368,
    "dense": 1.059,
}
# a pair is linked as contradicting only above this (and with a shared subject and a polarity
# clash): ≤ 5 % false positives on SciFact train's SUPPORT and same-topic pairs
CONTRADICTION_THRESHOLD = 0.5

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class SupportResult:
    score: float
    label: str
    rewrite: str | None


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


def default_embed(texts: Sequence[str]) -> np.ndarray:
    """The app's embedding model (loaded once per process)."""
    from bayes_app.search import runtime

    return runtime.embedder().embed_passages(list(texts))


def label_for(score: float) -> str:
    if score >= 0.7:
        return SupportLabel.SUPPORTED
    if score >= 0.35:
        return SupportLabel.PARTIAL
    return SupportLabel.UNSUPPORTED


# ---- wording helpers -----------------------------------------------------------------------------
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


def lower_first(text: str) -> str:
    """`text` to follow other words: the first letter lower-cased only when the first word is
    an ordinary capitalised word ("The", "Most"), never an acronym, gene or name ("ADAR1", "PaSa")."""
    m = re.match(r"[A-Za-z][\w'-]*", text)
    if not m:
        return text
    w = m.group(0)
    ordinary = w[0].isupper() and w[1:].islower() and w.isalpha()
    if ordinary and (w.lower() in STOPWORDS or w.lower() in _COMMON_STARTS):
        return w[0].lower() + text[1:]
    return text


_COMMON_STARTS = frozenset(
    "the a an this these those our we most many some several each both all its their "
    "there here in on at for with after before during although while when however "
    "small large higher lower increased decreased patients children women men "
    "treatment use using".split()
)


def negate(wording: str) -> str:
    """A crude negation of a wording (for the polarity feature only): swap the first direction
    word for its opposite, drop an existing negation, or negate the first auxiliary."""
    words = wording.split()
    for i, w in enumerate(words):
        key = w.lower().strip(".,;:")
        if key in SWAP:
            words[i] = w.lower().replace(key, SWAP[key])
            return " ".join(words)
    return negate_statement(wording)


def negate_statement(wording: str) -> str:
    """The other crude negation: drop an existing "not", or negate the first auxiliary."""
    m = re.search(r"\b(not|no|never)\s+", wording)
    if m:
        return wording[: m.start()] + wording[m.end() :]
    m = _AUX.search(wording)
    if m:
        return wording[: m.end()] + " not" + wording[m.end() :]
    return "It is not true that " + lower_first(wording)


def _direction(words: set[str]) -> int:
    up, down = len(words & UP), len(words & DOWN)
    sign = (up > down) - (up < down)
    return -sign if words & NEGATIONS else sign


def _entities(text: str) -> set[str]:
    return {e.lower() for e in _ENTITY.findall(text)}


def _sentences(quote: str) -> list[str]:
    from bayes_app.maps.sentences import split_sentences

    return [s for s in split_sentences(quote) if len(s.split()) >= 3] or [quote]


# ---- support -------------------------------------------------------------------------------------
def features(wording: str, quote: str, embed: Embed | None = None) -> dict[str, float]:
    """The scorer's inputs for `wording` against `quote` (see the module docstring)."""
    embed = embed or default_embed
    sents = _sentences(quote)
    vecs = embed([wording, negate(wording), negate_statement(wording), *sents])
    w_vec, neg_vecs, s_vecs = vecs[0], vecs[1:3], vecs[3:]
    sims = s_vecs @ w_vec
    best = int(np.argmax(sims))
    best_sent = sents[best]
    w_terms, q_terms = set(tokens(wording)), set(tokens(quote))
    w_nums, q_nums = set(_NUMBER.findall(wording)), set(_NUMBER.findall(quote))
    w_ents, q_ents = _entities(wording), _entities(quote)
    ww, bw = set(_words(wording)), set(_words(best_sent))
    return {
        "dense": float(sims[best]),
        "coverage": len(w_terms & q_terms) / len(w_terms) if w_terms else 0.0,
        "numbers_missing": len(w_nums - q_nums) / len(w_nums) if w_nums else 0.0,
        "entities_missing": len(w_ents - q_ents) / len(w_ents) if w_ents else 0.0,
        # how much closer the quote is to the wording than to its closest negation
        "polarity": float(sims[best] - max(s_vecs[best] @ neg_vecs[0], s_vecs[best] @ neg_vecs[1])),
        "direction": float(_direction(ww) * _direction(bw)),
        "negation_mismatch": float(bool(ww & NEGATIONS) != bool(bw & NEGATIONS)),
        "null_or_negated": float(bool(ww & (NEGATIONS | NULL_WORDS))),
    }


def _with_interactions(f: dict[str, float]) -> dict[str, float]:
    return {
        **f,
        "polarity_x_dense": f["polarity"] * f["dense"],
        "negation_mismatch_x_dense": f["negation_mismatch"] * f["dense"],
    }


def _logistic(f: dict[str, float], weights: dict[str, float]) -> float:
    z = weights["bias"] + sum(w * f[k] for k, w in weights.items() if k != "bias")
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def support_probability(f: dict[str, float]) -> float:
    """How likely the quote is evidence for the wording (vs a plausible wrong passage)."""
    return _logistic(f, SUPPORT_WEIGHTS)


def base_score(f: dict[str, float]) -> float:
    """The support score before the overstatement checks: the probability averaged with plain
    term coverage (the probability alone is calibrated on whole abstracts and judges a short
    faithful paraphrase harshly)."""
    return 0.5 * support_probability(f) + 0.5 * f["coverage"]


def contradiction_probability(f: dict[str, float]) -> float:
    """How likely the quote contradicts the wording rather than supports it."""
    return _logistic(_with_interactions(f), CONTRADICTION_WEIGHTS)


def contradiction_score(a: str, b: str, embed: Embed | None = None) -> float:
    """0..1: how strongly `b` (a quote or another claim) contradicts claim `a`."""
    return contradiction_probability(features(" ".join(a.split()), " ".join(b.split()), embed))


def score_support(wording: str, quote: str, embed: Embed | None = None) -> SupportResult:
    """How well `quote` supports `wording` (0..1), its label and a rewrite when it overstates."""
    wording, quote = " ".join(wording.split()), " ".join(quote.split())
    if not set(tokens(wording)) or not set(tokens(quote)):
        return SupportResult(0.0, SupportLabel.UNSUPPORTED, None)
    score = base_score(features(wording, quote, embed))
    w_words, q_words = set(_words(wording)), set(_words(quote))
    overstated = sorted(w for w in w_words if w in STRONG and w not in q_words)
    hedged_source = bool(q_words & HEDGES) and not (w_words & HEDGES)
    if overstated:
        score -= 0.15 * min(2, len(overstated))
    if hedged_source:
        score -= 0.15
    score = round(max(0.0, min(1.0, score)), 3)
    label = label_for(score)
    rewrite = None
    if overstated or hedged_source:
        rewrite = soften(wording)
        if hedged_source and rewrite == wording:
            rewrite = "Evidence suggests that " + lower_first(wording)
        if label == SupportLabel.SUPPORTED:
            label = SupportLabel.PARTIAL  # it overstates the evidence
    if label == SupportLabel.UNSUPPORTED:
        rewrite = quote
    return SupportResult(score, label, rewrite if rewrite and rewrite != wording else None)


# ---- contradictions ------------------------------------------------------------------------------
def _subject_terms(text: str) -> list[str]:
    """Content terms before the first verb-like word: the claim's subject, roughly."""
    out = []
    for w in _WORDS.findall(text):
        lw = w.lower()
        if _AUX.fullmatch(lw) or lw in UP or lw in DOWN or lw in NEGATIONS or lw in NULL_WORDS:
            break
        if lw not in STOPWORDS:
            out.extend(tokens(lw))
        if len(out) >= 6:
            break
    return out


def _negated(words: list[str]) -> bool:
    """A negation that is not "not only" / "no longer"-style emphasis."""
    for i, w in enumerate(words):
        if w in NEGATIONS and not (i + 1 < len(words) and words[i + 1] in _NOT_NEGATING.get(w, ())):
            return True
    return False


_NOT_NEGATING = {
    "not": {"only", "just", "merely", "simply", "necessarily"},
    "no": {"longer", "doubt"},
    "without": {"doubt"},
}


# a concession up to the comma where the main clause's subject begins: "Although X only provides
# Y, without Z, we can …"
_CONCESSIVE = re.compile(
    r"^\s*(?:although|though|even though|even if|while|whereas|despite)\b.*?[,;]\s*"
    r"(?=(?:we|it|they|he|she|this|these|those|the|a|an|our|its|their|there|one|such)\b)",
    re.I | re.S,
)


def _main_clause(text: str) -> str:
    """``text`` without a leading concessive clause: "Although X only provides Y, we can …" states
    its finding after the comma; a negation in the concession is not the claim's polarity."""
    return _CONCESSIVE.sub("", text, count=1)


def polarity_clash(a: str, b: str) -> bool:
    """Opposite polarity on a shared predicate: exactly one of them negated, or one uses a
    direction word (increase, higher …) where the other uses its opposite."""
    wa, wb = _words(_main_clause(a)), _words(_main_clause(b))
    sa, sb = set(wa), set(wb)
    if _negated(wa) != _negated(wb):
        return True
    return any(SWAP[x] in sb and x not in sb for x in sa & set(SWAP))


def shared_subject(a: str, b: str, dense: float | None = None) -> bool:
    """Both claims are about the same thing: their subjects (content terms before the first
    verb-like word) share a term, and they are close in meaning."""
    if not set(_subject_terms(a)) & set(_subject_terms(b)):
        return False
    return dense is None or dense >= SUBJECT_SIMILARITY


SUBJECT_SIMILARITY = 0.5
NEAR_COPY, NEAR_COPY_SIMILARITY = 0.6, 0.75


def disagree(a: str, b: str, embed: Embed | None = None) -> bool:
    """True only when the two claims share a subject, have opposite polarity and the
    contradiction score agrees in both directions (precision first: a missed contradiction
    costs less than a false `contradicts` link)."""
    if not polarity_clash(a, b) or not shared_subject(a, b):
        return False
    a, b = " ".join(a.split()), " ".join(b.split())
    fab, fba = features(a, b, embed), features(b, a, embed)
    if not shared_subject(a, b, min(fab["dense"], fba["dense"])):
        return False
    ta, tb = set(tokens(a)), set(tokens(b))
    if len(ta & tb) / len(ta | tb) >= NEAR_COPY and min(fab["dense"], fba["dense"]) >= NEAR_COPY_SIMILARITY:
        return True  # the same statement with its polarity flipped
    return min(contradiction_probability(fab), contradiction_probability(fba)) >= CONTRADICTION_THRESHOLD
