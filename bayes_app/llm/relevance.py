"""Does this sentence answer this question? A learned relevance model (pure domain code).

    score(question, sentences, passages=…, positions=…, roles=…, embed=…) -> probabilities
    features(question, sentences, …) -> (n, len(FEATURES)) array   the model's inputs
    THRESHOLD                                                       a sentence worth a claim

A logistic regression over features the app already computes, for each candidate sentence
among the others retrieved for the same question: embedding cosine to the question and to its
passage (absolute and relative to the best candidate), cosine to the question's subject alone,
BM25 and (local-IDF) coverage of the question's terms and of its focus terms
(`llm.choose.focus_terms`), position in the passage, length, numbers (and whether the question
asks "how much"), the form the question asks for (results, definition, procedure), list
structure (announces / enumerates / leans on the sentence before), cue phrases, section role.

Trained by `scripts/train_relevance.py` (SciFact train claims → rationale sentences, and the
hand-labelled questions of `tests/support/answer_labels.py`; fixed seeds) into
`llm/data/relevance.json`: the feature names, the standardisation and the coefficients. Nothing
is trained at run time, and scoring needs numpy only. Without a loadable embedding model the
dense features are 0 and the term features alone rank (a weaker but sane order).

Used by the offline Ask answer (`llm.offline`), the sentences a model is shown first
(`chat.library_search.ranked_sentences`), offline research claims (`agents.extractive`) and
may be used by any caller judging whether a passage answers a question: pass the candidate
sentences of one question together (several features are relative to the pool).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

import numpy as np

from bayes_app.llm import choose
from bayes_app.search.sparse import tokens

log = logging.getLogger("bayes.llm.relevance")

Embed = Callable[[Sequence[str]], np.ndarray]
WEIGHTS = Path(__file__).with_name("data") / "relevance.json"

FEATURES: tuple[str, ...] = (
    "cos_q",  # cosine(question, sentence)
    "cos_q_rel",  # … minus the best candidate's
    "cos_q_z",  # … standardised among the candidates
    "cos_subject",  # cosine(sentence, the question's subject words alone); 0 without a subject
    "cos_passage",  # cosine(question, the sentence's passage)
    "cos_passage_rel",  # … minus the best passage's
    "passage_best_rel",  # best cos_q in the same passage minus the best overall
    "neighbour_rel",  # best cos_q of the sentence before/after minus the best overall
    "terms",  # share of the question's terms in the sentence
    "rare_terms",  # the same, each term weighted by its rarity among the candidates
    "bm25_rel",  # BM25 of the sentence for the question / the best candidate's
    "focus_share",  # share of the question's focus terms (not its subject) in the sentence
    "position",  # place in its passage, 0 (first) … 1 (last)
    "first",  # first sentence of its passage
    "log_words",  # log(1 + words)
    "number",  # states a number
    "number_for_amount",  # states a number and the question asks how much / how many / what value
    "form_results",  # results form (%, comparatives) for a "how does X perform / compare" question
    "form_definition",  # definitional form for a "what is / what are" question
    "form_procedure",  # procedure form for a "how is X done" question
    "announces",  # "… comprises two stages." / "the following:"
    "enumerates",  # "In the first stage, …" / "2) …"
    "leans",  # opens with a word pointing to the sentence before ("This…", "It…")
    "cue_finding",  # "we show / find / demonstrate", "results", "outperform"
    "cue_method",  # "we propose / design / train / use", "is trained"
    "cue_background",  # citations, "et al.", "has been", "previous", "recent"
    "caption",  # the passage is a figure/table caption
    "section_setup",  # under a structured abstract's BACKGROUND / OBJECTIVE / METHODS / DESIGN … label
    "section_findings",  # under its RESULTS / FINDINGS / CONCLUSIONS / INTERPRETATION label
)

_AMOUNT_Q = re.compile(
    r"\bhow\s+(?:much|many|large|small|high|low|long|often|well|fast|accurate)\b|\bwhat\s+(?:is|are|was|were)\s+the\s+"
    r"(?:\w+\s+)?(?:recall|precision|accuracy|value|rate|number|size|score|percentage|proportion|share|cost|time)\b"
    r"|\b(?:recall|precision|accuracy|rate|percentage|proportion)\b",
    re.I,
)
_NUMBER = re.compile(r"\d")
_CUE_FINDING = re.compile(
    r"\b(?:we\s+(?:show|find|found|observe|demonstrate|report)|results?\s+(?:show|indicate|suggest|demonstrate)"
    r"|outperform\w*|surpass\w*|achiev\w*|significantly|associated\s+with|increase[sd]?|decrease[sd]?|reduce[sd]?)\b",
    re.I,
)
_CUE_METHOD = re.compile(
    r"\b(?:we\s+(?:propose|present|introduce|design|develop|train|use|apply|adopt|employ|build|construct)"
    r"|(?:is|are|was|were)\s+(?:trained|computed|defined|designed|built|constructed|obtained|used))\b",
    re.I,
)
# A structured abstract's section labels, in capitals, run into the text ("RESULTS At 12 weeks, …",
# "DESIGN, SETTING, AND PARTICIPANTS Observational …"): what follows sets up the study, or reports it.
_SECTION_LABEL = re.compile(
    rf"\b(?:(?P<findings>{choose.FINDINGS_LABELS})|(?P<setup>{choose.SETUP_LABELS}))\b(?![a-z])"
)
_CUE_BACKGROUND = re.compile(
    r"\[\d+(?:[,–-]\s*\d+)*\]|\bet\s+al\b|\b(?:has|have)\s+been\b|\b(?:previous|prior|recent(?:ly)?|traditional(?:ly)?)\b",
    re.I,
)


@functools.lru_cache(maxsize=1)
def _model() -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """(mean, scale, coefficients, intercept, threshold) from `data/relevance.json`."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise RuntimeError("llm/data/relevance.json was trained on other features: re-run scripts/train_relevance.py")
    return (
        np.asarray(data["mean"], dtype=np.float64),
        np.asarray(data["scale"], dtype=np.float64),
        np.asarray(data["coef"], dtype=np.float64),
        float(data["intercept"]),
        float(data["threshold"]),
    )


def threshold() -> float:
    """The probability above which a sentence is taken to answer the question (chosen on the
    training data by `scripts/train_relevance.py`: best F1 of answering sentences)."""
    return _model()[4]


def _bm25(question: str, sentences: Sequence[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of each sentence for the question, IDF and length norm over the candidates."""
    docs = [Counter(tokens(s)) for s in sentences]
    n = len(docs)
    if not n:
        return np.zeros(0)
    lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
    avg = float(lengths.mean()) or 1.0
    out = np.zeros(n)
    for t in set(tokens(question)):
        df = sum(t in d for d in docs)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        f = np.array([d.get(t, 0) for d in docs], dtype=np.float64)
        out += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths / avg))
    return out


def _unit(m: np.ndarray) -> np.ndarray:
    return np.asarray(m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9), dtype=np.float32)


def _dense(
    question: str,
    subject: str,
    sentences: Sequence[str],
    passages: Sequence[str],
    embed: Embed | None,
    vecs: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(cos to question, cos to subject, cos of the question to each sentence's passage), or None
    without a model."""
    uniq = list(dict.fromkeys(passages))
    try:
        fn = embed or choose.default_embed
        head = [question, subject] if subject else [question]
        q = _unit(np.asarray(fn(head + uniq), dtype=np.float32))
        s = _unit(np.asarray(vecs if vecs is not None else fn(list(sentences)), dtype=np.float32))
    except Exception as err:  # noqa: BLE001 - no model: the term features alone rank
        log.warning("relevance without embeddings: %s", err)
        return None
    cos_q = s @ q[0]
    cos_s = s @ q[1] if subject else np.zeros(len(sentences), dtype=np.float32)
    p_cos = dict(zip(uniq, q[len(head) :] @ q[0]))
    return cos_q, cos_s, np.array([p_cos[p] for p in passages], dtype=np.float32)


def features(
    question: str,
    sentences: Sequence[str],
    passages: Sequence[str] | None = None,
    positions: Sequence[int] | None = None,
    roles: Sequence[str | None] | None = None,
    embed: Embed | None = None,
    vecs: np.ndarray | None = None,
) -> np.ndarray:
    """The model's inputs (columns: FEATURES) for `sentences`, all candidates for one question.

    `passages[i]`: the text of the passage holding sentence i (the same string for sentences of
    one passage; default: each sentence its own passage); `positions[i]`: its index in that
    passage (default 0); `roles[i]`: the passage's role ("body", "caption", …); `vecs`: the
    sentences' embeddings when the caller has them."""
    n = len(sentences)
    if not n:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    passages = list(passages) if passages is not None else list(sentences)
    positions = list(positions) if positions is not None else [0] * n
    roles = list(roles) if roles is not None else ["body"] * n
    subject = " ".join(choose.subject_words(question, sentences))
    dense = _dense(question, subject, sentences, passages, embed, vecs)
    if dense is None:
        cos_q = cos_s = cos_p = np.zeros(n, dtype=np.float32)
    else:
        cos_q, cos_s, cos_p = dense
    best = float(cos_q.max())
    sd = float(cos_q.std()) or 1.0
    by_passage, last_pos, neighbour = _in_passage(passages, positions, cos_q)
    bm = _bm25(question, sentences)
    pool = list(sentences)
    focus = choose.focus_terms(question, pool)
    amount = bool(_AMOUNT_Q.search(question))
    form = _question_form(question)
    terms = choose.term_coverage(question, pool)
    rare = choose.rare_term_coverage(question, pool)
    sections = [section_of(s, p) for s, p in zip(sentences, passages)]
    rows = []
    for k, s in enumerate(sentences):
        toks = set(tokens(s))
        has_num = bool(_NUMBER.search(choose.wording(s)))
        p = passages[k]
        rows.append(
            (
                cos_q[k],
                cos_q[k] - best,
                (cos_q[k] - float(cos_q.mean())) / sd,
                cos_s[k],
                cos_p[k],
                cos_p[k] - float(cos_p.max()),
                by_passage[p] - best,
                neighbour[k] - best,
                terms[k],
                rare[k],
                bm[k] / (float(bm.max()) or 1.0),
                len(focus & toks) / len(focus) if focus else 0.0,
                positions[k] / last_pos[p] if last_pos[p] else 0.0,
                float(positions[k] == 0),
                math.log1p(len(s.split())),
                float(has_num),
                float(has_num and amount),
                float(form["results"] and bool(choose._RESULTS_S.search(s))),
                float(form["definition"] and bool(choose._DEFINITION_S.search(s))),
                float(form["procedure"] and bool(choose._PROCEDURE_S.search(s))),
                float(choose.announces(s)),
                float(choose.enumerates(s)),
                float(choose.leans_on_previous(s)),
                float(bool(_CUE_FINDING.search(s))),
                float(bool(_CUE_METHOD.search(s))),
                float(bool(_CUE_BACKGROUND.search(s))),
                float((roles[k] or "") == "caption"),
                float(sections[k] == "setup"),
                float(sections[k] == "findings"),
            )
        )
    return np.asarray(rows, dtype=np.float32)


def section_of(sentence: str, passage: str) -> str | None:
    """ "setup" or "findings" when the sentence lies under a structured abstract's label (the last
    one before it in its passage, or the one it opens with), else None."""
    at = passage.find(sentence)
    before = (passage[:at] if at >= 0 else "") + sentence[:60]
    labels = list(_SECTION_LABEL.finditer(before))
    return None if not labels else ("findings" if labels[-1].group("findings") else "setup")


def _in_passage(
    passages: list[str], positions: list[int], cos_q: np.ndarray
) -> tuple[dict[str, float], dict[str, int], np.ndarray]:
    """Per passage, its best cosine and its last position; per sentence, its best neighbour's
    cosine (its own when it has no neighbour)."""
    by_passage: dict[str, float] = {}
    last_pos: dict[str, int] = {}
    at: dict[tuple[str, int], float] = {}
    for p, i, c in zip(passages, positions, cos_q):
        by_passage[p] = max(by_passage.get(p, -1.0), float(c))
        last_pos[p] = max(last_pos.get(p, 0), i)
        at[(p, i)] = float(c)
    neighbour = np.array([max(at.get((p, i - 1), -1.0), at.get((p, i + 1), -1.0)) for p, i in zip(passages, positions)])
    neighbour = np.where(neighbour < -0.5, cos_q, neighbour)  # no neighbour: as the sentence itself
    return by_passage, last_pos, neighbour


def _question_form(question: str) -> dict[str, bool]:
    """Does the question ask for results, a definition or a procedure?"""
    form = {
        "results": bool(choose._RESULTS_Q.search(question)),
        "definition": bool(choose._DEFINITION_Q.search(question)),
    }
    form["procedure"] = not (form["results"] or form["definition"]) and bool(choose._PROCEDURE_Q.search(question))
    return form


def probabilities(x: np.ndarray) -> np.ndarray:
    """The model's probability that each row of `features` is an answering sentence."""
    mean, scale, coef, intercept, _ = _model()
    z = ((x - mean) / scale) @ coef + intercept
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float32)


def score(
    question: str,
    sentences: Sequence[str],
    passages: Sequence[str] | None = None,
    positions: Sequence[int] | None = None,
    roles: Sequence[str | None] | None = None,
    embed: Embed | None = None,
    vecs: np.ndarray | None = None,
    drop_off_subject: bool = False,
) -> np.ndarray:
    """P(the sentence answers `question`) for each of `sentences` (the candidates for one
    question, scored together; arguments as `features`). Compare with `threshold()`.
    `drop_off_subject`: sentences about something else altogether (`off_subject`) score 0."""
    if not len(sentences):
        return np.zeros(0, dtype=np.float32)
    x = features(question, sentences, passages, positions, roles, embed, vecs)
    return without_off_subject(x, probabilities(x)) if drop_off_subject else probabilities(x)


OFF_SUBJECT_COS = 0.15


def off_subject(x: np.ndarray) -> np.ndarray:
    """Rows of `features` about something else altogether: none of the question's terms and a
    cosine under OFF_SUBJECT_COS, among candidates some of which do share its terms (a question in
    another language shares none: then nothing is set aside). The Ask answer scores them 0
    whatever their neighbours: the model lifts every sentence of the best passage (answering
    sentences sit together), and a running head or the next section's first line sits there too.
    Map claims do not drop them: a list item of the answer shares no term with the question
    either (on the bundled papers, dropping them cost Research recall 0.70 → 0.65). On SciFact
    train this sets aside 11 % of the non-answering sentences and 2 of 710 answering ones (held:
    4 of 315; the bundled papers' labelled questions: 3 of 71, list items that an announcing
    sentence brings back, `choose.with_list_items`)."""
    if not len(x):
        return np.zeros(0, dtype=bool)
    terms, cos = x[:, FEATURES.index("terms")], x[:, FEATURES.index("cos_q")]
    return np.asarray((terms == 0) & (cos < OFF_SUBJECT_COS) & bool(terms.max() > 0), dtype=bool)


def without_off_subject(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The probabilities `p` of the rows of `features` `x`, those `off_subject` set to 0."""
    return np.where(off_subject(x), 0.0, p).astype(np.float32)


def passage_keys(keys: Sequence[Hashable], texts: Sequence[str]) -> list[str]:
    """A passage text per sentence from a key per sentence (chunk id, passage number) and the
    sentences themselves: the sentences sharing a key joined in order."""
    joined: dict[Hashable, list[str]] = {}
    for k, t in zip(keys, texts):
        joined.setdefault(k, []).append(t)
    text = {k: " ".join(v) for k, v in joined.items()}
    return [text[k] for k in keys]
