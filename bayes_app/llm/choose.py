"""Choosing sentences for a question: relevance first, then diversity (pure domain code).

    relevance(question, sentences, embed) -> scores     dense cosine to the question + term coverage
    focus_relevance(question, sentences, …) -> scores   what the question asks, not only its subject
    mmr(scores, vecs, limit) -> [index]                  maximal marginal relevance: one fact once
    leans_on_previous(sentence) -> bool                  opens with words pointing outside itself
    wording(sentence) -> str                             list prefix and glued footnote digits removed
    announces(sentence) / enumerates(sentence) -> bool   "… comprises two stages." / "In the first stage, …"
    answer_length(question) -> int                       more sentences for how/which/what-are questions
    checks_statement(question) -> bool                   a statement to check, not a question or request
    with_list_items(chosen, …) -> [index]                a chosen announcing sentence pulls in its list's items

Used by the offline provider (Ask answers), the grounding of model answers and offline research
(map claims). The dense part uses the app's embedding model (`bayes_app.search.runtime`); when no
model can be loaded the term part alone ranks.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

import numpy as np

from bayes_app.search.sparse import tokens

log = logging.getLogger("bayes.llm.choose")

Embed = Callable[[Sequence[str]], np.ndarray]

DENSE_WEIGHT = 0.75  # score = 0.75 · cosine(question, sentence) + 0.25 · share of question terms covered
PASSAGE_WEIGHT = 0.3  # a sentence's score: 0.7 · its own relevance + 0.3 · its passage's
NEIGHBOUR_WEIGHT = 0.2  # and a share of the best score next to it ("… comprises two stages. In the first …")
MMR_LAMBDA = 0.7  # MMR: 0.7 · relevance − 0.3 · closeness to a sentence already chosen
SAME_FACT_COSINE = 0.9  # a sentence this close to a chosen one repeats it: never chosen

# Openers whose referent lies in an earlier sentence ("This challenge…", "It can…", "Among these…").
# "This paper/work/study…" names the document itself and stands alone.
_SELF = r"(?:paper|work|study|article|review|survey|perspective|thesis|report|chapter|manuscript|section)\b"
_DEPENDENT = re.compile(
    r"^(?:(?:This|These|That|Those|Such)\b(?!\s+" + _SELF + r")"
    r"|(?:It|Its|They|Their|Them|He|She|His|Her)\b"
    r"|(?:Subsequently|Ultimately|Consequently|Accordingly|Thereafter|Afterwards|Hence|Thus|Therefore|Then|"
    r"Similarly|Likewise|Conversely|Instead|Otherwise|Nonetheless|Nevertheless|Still)\b"
    r"|(?:Among|Of|Between|For|In|Like|Unlike|Beyond|Besides|Despite|With)\s+(?:these|those|them|this|that|"
    r"such|which|both|all of these|each of these)\b"
    r"|(?:The\s+)?(?:latter|former|above|aforementioned)\b"
    r"|(?:Both|Neither|Either)\s+(?:of\s+)?(?:these|those|them|approaches|methods|models)\b"
    r"|(?:In\s+(?:turn|addition|contrast)|On the other hand|As a result|To this end|For this reason|"
    r"In doing so|By doing so|In this way|Additionally|Furthermore|Moreover)\b)",
    re.I,
)
# "2) long trajectories: …", "(b) The …", "iii. …": a list prefix, not part of the wording
_LIST_PREFIX = re.compile(r"^\s*(?:\(?(?:\d{1,2}|[a-h]|[ivx]{1,4})\)|(?:\d{1,2}|[ivx]{1,4})\.(?=\s+[A-Za-z]))\s+")
# "ChatGPT9 ," / "models17 ." — digits glued to a word and cut off from the punctuation that
# follows: the text layer of a superscript footnote or reference mark.
# "The training process comprises two stages." / "… the following attributes:" — the sentences after
# it list the parts, and the answer is the list
_COUNT = r"(?:two|three|four|five|six|several|multiple|2|3|4|5)"
_ANNOUNCES = re.compile(
    r"(?:\b" + _COUNT + r"\s+(?:[\w-]+\s+){0,2}?(?:stages?|steps?|phases?|parts?|components?|modules?|agents?|"
    r"challenges?|problems?|issues?|purposes?|goals?|types?|kinds?|categories|classes|ways?|approaches|"
    r"strategies|methods|criteria|attributes|properties|aspects|factors|reasons|advantages|limitations)\b"
    r"|\bthe\s+following\b|:\s*$)",
    re.I,
)
# "First, …", "In the second stage, …", "2) long trajectories: …", "Finally, …": one item of a list
_ENUMERATES = re.compile(
    r"^(?:\(?(?:\d{1,2}|[a-h]|[ivx]{1,4})\)\s"
    r"|(?:First|Second|Third|Fourth|Fifth|Firstly|Secondly|Thirdly|Finally|Lastly|Next|Then)\b"
    r"|(?:In|At|During|For)\s+the\s+(?:first|second|third|fourth|fifth|final|last|next)\b"
    r"|The\s+(?:first|second|third|fourth|fifth|final|last)\s+(?:stage|step|phase|part|component|module|agent|"
    r"challenge|problem|issue|purpose|type|kind|category|approach|method|criterion|attribute)\b)",
    re.I,
)
# questions whose answer has parts ("How is …", "Which steps …", "What are …", "… and how …")
_WIDE_QUESTION = re.compile(r"^\s*(?:how|which|why|what\s+(?:are|were|steps|stages|kinds|types))\b", re.I)
_ASKS = re.compile(
    r"\?\s*$|^\s*(?:what|how|which|why|who|whom|whose|where|when|is|are|was|were|does|do|did|can|could|should|"
    r"will|would|has|have|had|may|might|must|list|name|describe|explain|summari[sz]e|tell|give|show|find)\b",
    re.I,
)  # a question or a request; anything else is a statement to check against the library
_TWO_PART = re.compile(r"\band\s+(?:how|what|why|which|who|where|when)\b|\b(?:each|differ\w*|compare\w*)\b", re.I)
LIST_EXTRA = 2  # sentences a list's items may add beyond the answer's length
_LIST_ITEMS = 4  # items followed after a sentence that announces them
ANSWER_MARGIN = 0.25  # a sentence scoring this far below the best one is not quoted (a floor under the answer)
ANSWER_SENTENCES = 5  # a plain question ("What is X?")
WIDE_ANSWER_SENTENCES = 8  # a question whose answer has parts or steps
# Focus (claims): the question's words that run through the candidate sentences name its subject
# ("PaSa", "Crawler"); the rarer ones say what is asked ("trained", "compared").
SUBJECT_SHARE = 0.25  # a question word in at least this share of the candidates is part of the subject
SUBJECT_LAMBDA = 0.4  # dense part: cos(sentence, question) − 0.4 · cos(sentence, subject only)
FOCUS_TERMS_WEIGHT = 0.25  # share of the question's terms covered, each weighted by its rarity among the candidates
FOCUS_PASSAGE_WEIGHT = 0.3  # and a share of the best score in the sentence's passage (answers sit together)
FORM_BONUS = 0.05  # a sentence whose form fits the question's type (results, definition, procedure)
_QUESTION_WORDS = frozenset(
    tokens("how what which why who whom whose when where does do did is are was were be been can could should would")
)
_RESULTS_Q = re.compile(
    r"\b(?:perform\w*|compar\w*|outperform\w*|better|worse|accura\w*|effective\w*|results?)\b", re.I
)
_DEFINITION_Q = re.compile(r"^\s*what\s+(?:is|are)\b", re.I)
_PROCEDURE_Q = re.compile(r"^\s*how\s+(?:is|are|was|were|do|does|did|can)\b", re.I)
_RESULTS_S = re.compile(
    r"\d+(?:\.\d+)?\s*%|\b(?:outperform\w*|surpass\w*|improv\w*|better|worse|higher|lower|exceed\w*|than)\b", re.I
)
_DEFINITION_S = re.compile(
    r"\b(?:is|are)\s+(?:a|an|the|defined|called|known|referred)\b|\brefers?\s+to\b|\bdefined\s+as\b|\bdescribes?\b",
    re.I,
)
_PROCEDURE_S = re.compile(
    r"\b(?:we|is|are|was|were)\s+(?:\w+\s+)?(?:\w+ed|used|built|trained|applied)\b"
    r"|\b(?:first|then|second|stages?|steps?)\b",
    re.I,
)
# "[1, 3]", "[12–14]": the paper's own reference markers, not part of a claim's or answer's wording
_PAPER_MARKER = re.compile(r"\s*\[\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*\](?=[\s.,;:)]|$)")
_GLUED_MARK = re.compile(r"(?<=[A-Za-z\)])(\d{1,3}(?:[,–-]\d{1,3})*)\s+(?=[,.;:])")


def default_embed(texts: Sequence[str]) -> np.ndarray:
    """The app's embedding model (passages side)."""
    from bayes_app.search import runtime

    return runtime.embedder().embed_passages(list(texts))


def _safe_embed(embed: Embed | None, texts: Sequence[str]) -> np.ndarray | None:
    try:
        vecs = np.asarray((embed or default_embed)(texts), dtype=np.float32)
    except Exception as err:  # noqa: BLE001 - no model: rank by terms alone
        log.warning("sentence ranking without embeddings: %s", err)
        return None
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1.0, norms)


def term_coverage(question: str, sentences: Sequence[str]) -> np.ndarray:
    """Share of the question's distinct stemmed terms each sentence contains."""
    q = set(tokens(question))
    if not q:
        return np.zeros(len(sentences), dtype=np.float32)
    return np.array([len(q & set(tokens(s))) / len(q) for s in sentences], dtype=np.float32)


def relevance(
    question: str, sentences: Sequence[str], embed: Embed | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """(score per sentence, unit sentence vectors or None): dense similarity to the question
    blended with term coverage (terms alone without a model)."""
    terms = term_coverage(question, sentences)
    if not sentences:
        return terms, None
    vecs = _safe_embed(embed, [question, *sentences])
    if vecs is None:
        return terms, None
    dense = vecs[1:] @ vecs[0]
    return DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * terms, vecs[1:]


def subject_words(question: str, pool: Sequence[str]) -> list[str]:
    """The question's content words found in at least SUBJECT_SHARE of `pool` (the candidate
    sentences): what the question is about, as opposed to what it asks."""
    sets = [set(tokens(s)) for s in pool]
    if not sets:
        return []
    out = []
    for w in dict.fromkeys(re.findall(r"[\w-]+", question)):
        t = tokens(w)
        if t and t[0] not in _QUESTION_WORDS and sum(t[0] in s for s in sets) >= SUBJECT_SHARE * len(sets):
            out.append(w)
    return out


def focus_terms(question: str, pool: Sequence[str]) -> set[str]:
    """The stemmed terms of what `question` asks: its content terms that are not its subject
    (`subject_words` among `pool`) nor question words ("how", "does")."""
    subject = {t for w in subject_words(question, pool) for t in tokens(w)}
    return {t for t in tokens(question) if t not in _QUESTION_WORDS and t not in subject}


def rare_term_coverage(question: str, sentences: Sequence[str]) -> np.ndarray:
    """Share of the question's terms each sentence contains, each term weighted by its inverse
    frequency among `sentences` (local IDF): the focus counts more than the subject."""
    sets = [set(tokens(s)) for s in sentences]
    terms = [t for t in dict.fromkeys(tokens(question)) if t not in _QUESTION_WORDS]
    n = len(sets)
    weight = {t: float(np.log((n + 1) / (sum(t in s for s in sets) + 1))) for t in terms}
    total = sum(weight.values())
    if not total:
        return np.zeros(n, dtype=np.float32)
    return np.array([sum(weight[t] for t in terms if t in s) / total for s in sets], dtype=np.float32)


def form_prior(question: str, sentences: Sequence[str]) -> np.ndarray:
    """FORM_BONUS for a sentence whose form fits the question's type: results (numbers,
    comparatives) for "how does X perform / compare", a definition for "what is", a procedure
    ("we trained …", stages, steps) for "how is X done"."""
    wanted = [rx for q_rx, rx in ((_RESULTS_Q, _RESULTS_S), (_DEFINITION_Q, _DEFINITION_S)) if q_rx.search(question)]
    if not wanted and _PROCEDURE_Q.search(question):  # "how does X perform" asks for results, not steps
        wanted = [_PROCEDURE_S]
    return np.array([FORM_BONUS * sum(bool(rx.search(s)) for rx in wanted) for s in sentences], dtype=np.float32)


def focus_relevance(
    question: str,
    sentences: Sequence[str],
    embed: Embed | None = None,
    passages: Sequence[object] | None = None,
    vecs: np.ndarray | None = None,
) -> np.ndarray:
    """Relevance to what the question asks, for claims: cosine to the question minus
    SUBJECT_LAMBDA · cosine to its subject alone (`subject_words` among `sentences`), plus
    local-IDF term coverage and the question type's form prior, blended with the best score of
    the same passage (`passages`: a key per sentence). Terms and form alone without a model."""
    if not len(sentences):
        return np.zeros(0, dtype=np.float32)
    terms = rare_term_coverage(question, sentences)
    subject = " ".join(subject_words(question, sentences))
    if vecs is not None:
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    qv = _safe_embed(embed, [question, subject] if subject else [question])
    if qv is not None and vecs is None:
        vecs = _safe_embed(embed, list(sentences))
    if qv is None or vecs is None:
        score = terms
    else:
        dense = vecs @ qv[0] - (SUBJECT_LAMBDA * (vecs @ qv[1]) if subject else 0.0)
        score = (1 - FOCUS_TERMS_WEIGHT) * dense + FOCUS_TERMS_WEIGHT * terms
    score = np.asarray(np.asarray(score, dtype=np.float32) + form_prior(question, sentences), dtype=np.float32)
    if passages is None:
        return score
    best: dict[object, float] = {}
    for key, v in zip(passages, score):
        best[key] = max(best.get(key, -1e9), float(v))
    blended = (1 - FOCUS_PASSAGE_WEIGHT) * score + FOCUS_PASSAGE_WEIGHT * np.array([best[k] for k in passages])
    return np.asarray(blended, dtype=np.float32)


def mmr(
    scores: np.ndarray,
    vecs: np.ndarray | None,
    limit: int,
    lam: float = MMR_LAMBDA,
    same: float = SAME_FACT_COSINE,
    eligible: Sequence[bool] | None = None,
) -> list[int]:
    """Indices of up to `limit` items by maximal marginal relevance; an item closer than `same`
    to one already chosen (the same fact said again) is never chosen."""
    order = [int(i) for i in np.argsort(-scores, kind="stable") if eligible is None or eligible[int(i)]]
    if vecs is None:
        return order[:limit]
    chosen: list[int] = []
    pool = list(order)
    while pool and len(chosen) < limit:
        best, best_val = None, -1e9
        for i in pool:
            sim = max((float(vecs[i] @ vecs[j]) for j in chosen), default=0.0)
            val = lam * float(scores[i]) - (1 - lam) * sim
            if sim < same and val > best_val:
                best, best_val = i, val
        if best is None:
            break
        chosen.append(best)
        pool.remove(best)
    return chosen


def with_neighbours(scores: np.ndarray, places: Sequence[tuple[int, int]], weight: float | None = None) -> np.ndarray:
    """Scores raised by a share of the better neighbour's score (the sentence just before or after
    it in the same passage; `places` = (position, passage) of each): answers run over a few
    adjacent sentences."""
    w = NEIGHBOUR_WEIGHT if weight is None else weight
    at = {place: float(v) for place, v in zip(places, scores)}
    best = np.array([max(at.get((pos - 1, p), 0.0), at.get((pos + 1, p), 0.0)) for pos, p in places])
    return (1 - w) * scores + w * np.maximum(best, 0.0) if len(scores) else scores


def leans_on_previous(sentence: str) -> bool:
    """True when the sentence opens with words whose referent is in an earlier sentence."""
    return bool(_DEPENDENT.match(wording(sentence)))


_REFERS_BACK = re.compile(
    r"\b(?:this|these|those|such|said)\s+(?:[a-z-]+\s+)?(?:drawbacks?|problems?|issues?|limitations?|challenges?|"
    r"shortcomings?|gaps?|difficult(?:y|ies)|observations?|findings?|approach(?:es)?|methods?|techniques?|"
    r"strategies|strategy|settings?|phenomen(?:on|a)|effects?|obstacles?|weakness(?:es)?|bottlenecks?|"
    r"deficienc(?:y|ies)|concerns?|questions?|goals?|aims?)\b",
    re.I,
)


def refers_back(sentence: str) -> bool:
    """True when the sentence names something only the sentence before says ("PaSa addresses this
    drawback by …", "… to overcome these challenges"): quoted alone, it leans on missing context."""
    return bool(_REFERS_BACK.search(wording(sentence)))


def needs_previous(sentence: str) -> bool:
    """True when the sentence makes sense only with the one before it (`leans_on_previous` or
    `refers_back`)."""
    return leans_on_previous(sentence) or refers_back(sentence)


# A structured abstract's section labels ("RESULTS At 12 weeks, …", "DESIGN, SETTING, AND
# PARTICIPANTS Observational …"): what the sentences after them do. Shared with `llm.relevance`.
FINDINGS_LABELS = r"RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION|DISCUSSION|IMPLICATIONS|SIGNIFICANCE|RELEVANCE"
SETUP_LABELS = (
    r"BACKGROUND|CONTEXT|INTRODUCTION|OBJECTIVES?|AIMS?|PURPOSE|METHODS?|METHODOLOGY|DESIGN|SETTINGS?"
    r"|PARTICIPANTS|PATIENTS|SUBJECTS|INTERVENTIONS?|MEASUREMENTS|(?:MAIN\s+)?OUTCOME\s+MEASURES?|DATA\s+SOURCES"
    r"|STUDY\s+SELECTION|DATA\s+EXTRACTION|STUDIES\s+REVIEWED|REVIEW\s+METHODS"
)
_LABEL_WORD = rf"(?:{FINDINGS_LABELS}|{SETUP_LABELS})"
_LEADING_LABEL = re.compile(
    rf"^(?:Abstract\s+)?{_LABEL_WORD}(?:\s*,?\s*(?:AND\s+|&\s+)?{_LABEL_WORD})*\s*[:.]?\s+(?=[A-Z0-9(\[])"
)


def wording(sentence: str) -> str:
    """The sentence without a list prefix ("2) "), a structured abstract's label run into it
    ("RESULTS At 12 weeks" → "At 12 weeks"), footnote digits glued to a word ("ChatGPT9 ," →
    "ChatGPT,") or the paper's reference markers ("[1, 3]")."""
    s = _LEADING_LABEL.sub("", _LIST_PREFIX.sub("", sentence.strip(), count=1), count=1)
    s = _GLUED_MARK.sub("", s)
    s = _PAPER_MARKER.sub("", s)  # "… black boxes [1, 3]." → "… black boxes."
    return s[:1].upper() + s[1:] if s[:1].islower() and s != sentence.strip() else s


def announces(sentence: str) -> bool:
    """True when the sentence announces a list that the next sentences give ("… comprises two
    stages.", "… the following attributes:")."""
    return bool(_ANNOUNCES.search(sentence))


def enumerates(sentence: str) -> bool:
    """True when the sentence is one item of a list ("First, …", "In the second stage, …", "2) …")."""
    return bool(_ENUMERATES.match(sentence.strip()))


def answer_length(question: str) -> int:
    """How many sentences an extractive answer quotes: more when the question asks how, which
    or what-are, or has two parts, whose answers run over several sentences, and for a statement
    to check ("Dexamethasone increases the risk of bleeding."), whose evidence for and against
    runs over several sentences and papers."""
    if _WIDE_QUESTION.match(question) or _TWO_PART.search(question) or checks_statement(question):
        return WIDE_ANSWER_SENTENCES
    return ANSWER_SENTENCES


def checks_statement(question: str) -> bool:
    """True for a statement to check against the library ("Dexamethasone increases the risk of
    bleeding."), False for a question or a request ("What …?", "Describe …")."""
    return not _ASKS.search(question)


def with_list_items(
    chosen: list[int], texts: list[str], quotes: list[str], places: list[tuple[int, int]], cap: int
) -> list[int]:
    """The chosen sentences, each that announces a list ("… comprises two stages.") followed by
    the list's items from its passage ("In the first stage, …", "In the second stage, …"; one
    sentence between two items may be skipped), up to `cap` sentences in all; the items
    replace the least relevant chosen sentences."""
    at = {place: i for i, place in enumerate(places)}
    items: dict[int, list[int]] = {}
    for i in chosen:
        if announces(texts[i]) and (found := _list_items(texts, places[i], at)):
            items[i] = found
    if not items:
        return chosen
    extra = {j for js in items.values() for j in js}
    base = [i for i in chosen if i not in extra]
    # keep the most relevant chosen sentences (chosen is in MMR order) while the items fit
    while base and len(base) + len({j for i in base for j in items.get(i, [])}) > cap:
        base.pop()
    out: list[int] = []
    for i in base:
        for k in [i, *items.get(i, [])]:
            if k not in out and not any(quotes[k] in quotes[o] for o in out):
                out.append(k)
    return out[:cap]


def _list_items(texts: list[str], place: tuple[int, int], at: dict[tuple[int, int], int]) -> list[int]:
    """The items of the list announced by the sentence at `place` (its position in its passage,
    the passage's rank): the enumerating sentences after it, one sentence between two skipped."""
    pos, rank = place
    found: list[int] = []
    gap = 0
    for step in range(1, 2 * _LIST_ITEMS + 2):
        j = at.get((pos + step, rank))
        if j is not None and enumerates(texts[j]):
            found.append(j)
            gap = 0
            if len(found) == _LIST_ITEMS:
                break
        else:
            gap += 1
            if gap > 1:
                break
    return found
