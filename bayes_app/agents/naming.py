"""Theme names taken from their claims: the noun phrase the theme's claims share and the rest of
the map does not, scored like c-TF-IDF (BERTopic) and KeyBERT with the app's embedding model.

    noun_phrases(text) -> [phrase]               2-4 word noun phrases (and one-word nouns) of a text
    support(name, texts) -> int                  in how many of `texts` its rarest word occurs
    shared(name, texts) -> bool                  every word in ≥ 2 of them (in the one, for one text)
    holds(name, texts) -> bool                   shared, and written as a phrase in one of them
    name(texts, vecs, taken, embed, others=…) -> title

A candidate is a run of a part-of-speech-tagged sentence (TextBlob's pattern tagger: a lexicon
and contextual rules shipped in the package, no model download) made of adjectives and nouns
and ending in a noun: "Understand why", "Predictions due", "Quantitative metrics tell" or "Now
predict molecular properties" cannot be one. A name holds 2-4 words, each of which occurs in at
least two of the theme's claims when it has two or more; among those, the score is the phrase's
cosine to the claims' centroid plus its class-based TF-IDF (the share of the theme's claims that
hold all its words, against how many claims of the whole map do). A single noun names a theme
only when no phrase qualifies; a theme whose claims share no noun gets the best phrase of its
own claims (`shared` tells the caller, which may split the group).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bayes_app.search.sparse import STOPWORDS, tokens

Embed = Callable[[Sequence[str]], np.ndarray]

MIN_WORDS, MAX_WORDS = 2, 4
NAME_COSINE = 0.85  # two names this close in meaning are the same name
CTFIDF_WEIGHT = 0.3  # c-TF-IDF (0-1, scaled to the best candidate) added to the cosine
FALLBACK = "Other findings"

_NOUN = frozenset({"NN", "NNS", "NNP", "NNPS"})
_ADJ = frozenset({"JJ"})
# words that never make a name readable on their own or as its first or last word: vague nouns,
# quantities and evaluative or ordering adjectives ("Important role", "Further work")
_VAGUE = frozenset(
    """way ways work works approach approaches method methods result results study studies paper papers
number numbers set sets case cases type types part parts kind kinds lot lots order term terms example examples
fig figure figures table tables section sections use uses thing things aspect aspects end means
e.g i.e et al etc cf vs
such other others due many several few various different certain given same similar specific recent important
major main key good better best large larger small smaller high higher low lower new novel first second third
last further additional existing previous current overall respective much more most less least own whole
able possible available related corresponding particular general common total full final initial""".split()
)
# "-ing" words that are nouns in research writing, whatever their context ("deep learning models")
_ING_NOUNS = frozenset(
    """learning training pretraining pre-training fine-tuning tuning reasoning prompting clustering modeling
modelling processing understanding ranking embedding mining planning parsing labeling labelling sampling
screening docking matching encoding decoding computing forecasting filtering indexing engineering""".split()
)
_MIXED = re.compile(r"[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|^[A-Z]{2,}")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'’][A-Za-z0-9]+)*")
_CITATION = re.compile(r"[A-Za-z]{4,}\d{2,3}$")  # "SELFIES106": a reference number glued on


@dataclass(frozen=True)
class _Phrase:
    text: str  # as written in the claim
    words: tuple[str, ...]  # lower-case
    proper: bool  # a name ("AutoScholarQuery", "GPT-4o", "PaSa")


# ---- tagging -----------------------------------------------------------------------------------
_LOAD = threading.Lock()


@functools.cache
def _load_parser() -> Callable[[str], list[list[tuple[str, str]]]]:
    from textblob import en  # imported on first use: it loads NLTK

    def tag(text: str) -> list[list[tuple[str, str]]]:
        parsed = en.parse(text, tokenize=True, tags=True, chunks=False, relations=False, lemmata=False)
        return [[(tok[0], tok[1]) for tok in s] for s in parsed.split()]

    tag("Warm the lexicon.")  # its lexicon loads lazily: once, here, not from two threads at a time
    return tag


def _parser() -> Callable[[str], list[list[tuple[str, str]]]]:
    with _LOAD:
        return _load_parser()


def _retag(word: str, tag: str) -> str:
    """Corrections for scientific text: names with digits or inner capitals are proper nouns
    ("GPT-4o", "PaSa-7B", "RealScholarQuery"); hyphenated participles are adjectives ("LLM-based")."""
    if "-" in word and re.search(r"-[a-z]+(?:ed|ing|based|like|aware|driven|free|specific)$", word):
        return "JJ"
    if _MIXED.search(word) and _WORD.fullmatch(word):
        return "NNP"
    return tag


@functools.lru_cache(maxsize=8192)
def _tagged(text: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    clean = re.sub(r"\[[\d,;\s–-]*\]", " ", text)  # citation markers [1, 3]
    return tuple(tuple((w, _retag(w, t)) for w, t in s) for s in _parser()(clean))


def _usable_word(word: str) -> bool:
    low = word.lower()
    return (
        bool(_WORD.fullmatch(word))
        and len(word) >= 2
        and low not in STOPWORDS
        and not _CITATION.fullmatch(word)
        and not (len(word) == 2 and word.islower())
    )


def _runs(sentence: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Maximal runs of adjectives and nouns; an "-ing" word right after a noun ends a run as its
    head ("reinforcement learning") unless a noun phrase follows it (then it is a verb)."""
    out: list[list[tuple[str, str]]] = []
    run: list[tuple[str, str]] = []
    for i, (w, t) in enumerate(sentence):
        if t == "VBG" and w.lower() in _ING_NOUNS:
            t = "NN"
        nxt = sentence[i + 1][1] if i + 1 < len(sentence) else "."
        if t == "VBG" and run and run[-1][1] in _NOUN and w.islower() and nxt not in _NOUN | _ADJ | {"DT", "PRP", "CD"}:
            run.append((w, "NN"))
            out.append(run)
            run = []
            continue
        if (t in _NOUN or t in _ADJ) and _usable_word(w):
            run.append((w, t))
            continue
        if run:
            out.append(run)
        run = []
    if run:
        out.append(run)
    return out


def _spans(run: list[tuple[str, str]]) -> Iterable[_Phrase]:
    for end in range(len(run)):
        if run[end][1] not in _NOUN or run[end][0].lower() in _VAGUE:
            continue
        for start in range(max(0, end - MAX_WORDS + 1), end + 1):
            words = run[start : end + 1]
            if words[0][0].lower() in _VAGUE:
                continue
            proper = any(t in ("NNP", "NNPS") or bool(_MIXED.search(w)) for w, t in words)
            yield _Phrase(" ".join(w for w, _ in words), tuple(w.lower() for w, _ in words), proper)


def _phrases(text: str) -> list[_Phrase]:
    seen: dict[tuple[str, ...], _Phrase] = {}
    for s in _tagged(" ".join(text.split())):
        for run in _runs(s):
            for p in _spans(run):
                seen.setdefault(p.words, p)
    return list(seen.values())


def noun_phrases(text: str) -> list[str]:
    """The noun phrases of `text` that could name a theme, as written (one-word nouns too)."""
    return [p.text for p in _phrases(text)]


# ---- the rule a name keeps ---------------------------------------------------------------------
@functools.lru_cache(maxsize=8192)
def _words_of(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def support(title: str, texts: Sequence[str]) -> int:
    """In how many of `texts` the rarest word of `title` occurs (case-insensitive, whole words)."""
    words = [w.lower() for w in _WORD.findall(title)]
    if not words:
        return 0
    sets = [_words_of(t) for t in texts]
    return min(sum(w in s for s in sets) for w in words)


def shared(title: str, texts: Sequence[str]) -> bool:
    """Every word of `title` occurs in at least two of `texts` (in the one, for a single text)."""
    return bool(texts) and support(title, texts) >= min(2, len(texts))


def holds(title: str, texts: Sequence[str]) -> bool:
    """`title` still names these claims: every word in two of them (`shared`) and the phrase
    itself written in one of them (claims moved away can leave "Molecular Model" with one claim
    holding "molecular" and another "model")."""
    phrase = " ".join(title.lower().split())
    return shared(title, texts) and any(phrase in " ".join(t.lower().split()) for t in texts)


# ---- naming ------------------------------------------------------------------------------------
def same_name(a: str, b: str) -> bool:
    """The same title: equal words, ignoring case, punctuation and inflection."""

    def norm(t: str) -> list[str]:
        return [(tokens(w) or [w])[0] for w in re.findall(r"[A-Za-z0-9]+", t.lower())]

    return bool(norm(a)) and norm(a) == norm(b)


def _display(phrase: str) -> str:
    return phrase[0].upper() + phrase[1:] if phrase.split()[0].islower() else phrase


def _default_embed(texts: Sequence[str]) -> np.ndarray:
    from bayes_app.search import runtime

    return runtime.embedder().embed_passages(list(texts))


def _ctfidf(ps: list[_Phrase], texts: Sequence[str], others: Sequence[str]) -> np.ndarray:
    """Class-based TF-IDF of each phrase for the theme against the rest of the map: the share
    of the theme's claims holding all its words, times log(1 + A / claims of the map holding
    them), A the mean number of claims per class."""
    mine = [_words_of(t) for t in texts]
    rest = [_words_of(t) for t in others]
    a = (len(mine) + len(rest)) / (2 if rest else 1)
    out = []
    for p in ps:
        cg = sum(all(w in s for w in p.words) for s in mine)
        co = sum(all(w in s for w in p.words) for s in rest)
        out.append(cg / len(mine) * math.log(1 + a / max(1, cg + co)))
    v = np.asarray(out, dtype=np.float64)
    return v / (v.max() or 1.0)


def name(
    texts: Sequence[str],
    vecs: np.ndarray | None = None,
    taken: Iterable[str] = (),
    embed: Embed | None = None,
    taken_vecs: np.ndarray | None = None,
    others: Sequence[str] = (),
    avoid_words: Iterable[str] = (),
) -> str:
    """The name of a theme holding `texts` (their unit vectors `vecs`, embedded when None): its
    best noun phrase (see the module docstring) that is not the same name as, nor within
    NAME_COSINE in meaning of, any of `taken`; `others`: the map's other claims; `avoid_words`:
    words that do not name a theme alone (the question's own)."""
    texts = [t for t in texts if t and t.strip()]
    if not texts:
        return FALLBACK
    embed = embed or _default_embed
    taken = [t for t in taken if t]
    avoid = {w.lower() for w in avoid_words}
    found: dict[tuple[str, ...], _Phrase] = {}
    for t in texts:
        for p in _phrases(t):
            found.setdefault(p.words, p)
    cands = [p for p in found.values() if not any(same_name(p.text, x) for x in taken)]
    need = min(2, len(texts))

    def ok(p: _Phrase) -> bool:
        return support(p.text, texts) >= need

    multi = [p for p in cands if len(p.words) >= MIN_WORDS and ok(p)]
    single = [p for p in cands if len(p.words) == 1 and ok(p) and p.words[0] not in avoid]
    loose = [p for p in cands if len(p.words) >= MIN_WORDS]
    for tier in (multi, sorted(single, key=lambda p: not p.proper), loose):
        title = _best(tier, texts, vecs, embed, taken, taken_vecs, others)
        if title:
            return title
    return _fallback(taken)


def _best(
    ps: list[_Phrase],
    texts: Sequence[str],
    vecs: np.ndarray | None,
    embed: Embed,
    taken: list[str],
    taken_vecs: np.ndarray | None,
    others: Sequence[str],
) -> str | None:
    if not ps:
        return None
    ps = sorted(ps, key=lambda p: p.words)[:300]
    pv = np.asarray(embed([p.text for p in ps]), dtype=np.float32)
    v = np.asarray(vecs if vecs is not None else embed(list(texts)), dtype=np.float32)
    c = v.mean(0)
    c = c / (np.linalg.norm(c) or 1.0)
    score = pv @ c + CTFIDF_WEIGHT * _ctfidf(ps, texts, others)
    score += 0.03 * np.array([len(p.words) in (2, 3) for p in ps])  # a two- or three-word phrase reads best
    tv = taken_vecs if taken_vecs is not None else (embed(taken) if taken else np.zeros((0, pv.shape[1])))
    for i in np.argsort(-score, kind="stable"):
        if len(tv) and float((np.asarray(tv) @ pv[int(i)]).max()) >= NAME_COSINE:
            continue
        return _display(ps[int(i)].text)
    return None


def _fallback(taken: Sequence[str]) -> str:
    k = 1
    while any(same_name(f"{FALLBACK} {k}" if k > 1 else FALLBACK, t) for t in taken):
        k += 1
    return FALLBACK if k == 1 else f"{FALLBACK} {k}"
