"""Offline (extractive) research: which sentences of the retrieved passages become claims, how
they group into themes, and what each theme is called — with the app's embedding model.

    claim_candidates(passages) -> [Candidate]        body/caption sentences that pass the checks
    rank(candidates, query) -> [Candidate]           relevance to the query + centrality, best first
    select_claims(query, passages, limit, avoid) -> [Candidate]   ranked, near-duplicates merged
    plan(question, passages) -> [(title, [Candidate])]            themes: clusters of candidates
    duplicate_of(texts, earlier) -> [index | None]  cosine ≥ DUPLICATE_COSINE, same numbers and polarity

A theme's title is the key phrase (a run of content words from its sentences) whose embedding
is closest to the cluster's centroid — never a pair of frequent words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bayes_app.agents.retrieval import Passage
from bayes_app.library.marks import strip_marks
from bayes_app.llm import choose, relevance
from bayes_app.maps import sentences as sent
from bayes_app.maps.support import polarity_clash
from bayes_app.search.sparse import STOPWORDS, tokens


def stem(word: str) -> str:
    return (tokens(word) or [word.lower()])[0]


Embed = Callable[[Sequence[str]], np.ndarray]

DUPLICATE_COSINE = 0.85  # two claims this close (and agreeing on numbers and polarity) say the same
CLUSTER_COSINE = 0.42  # average-linkage merge threshold for themes
MAX_CANDIDATES = 36  # most relevant sentences clustered into themes (MAX_ASPECTS · CLAIMS_PER_THEME)
RELEVANCE_WEIGHT = 0.8  # rank = 0.8 · relevance to the query + 0.2 · centrality
CLAIM_FLOOR, FLOOR_MARGIN = 0.4, 0.1
# A planned claim is a sentence the learned relevance model (`llm.relevance`) takes to answer the
# question (its probability at least the threshold chosen on its training data), or one of the
# MIN_PLAN_CLAIMS best of the question (or of one of its parts) while the library has them.
MIN_PLAN_CLAIMS = 8  # … so a map on a thin library still has claims to read (the critic may take some)
PART_CLAIMS = 3  # each part of a multi-part question keeps its best this many
MAX_PAIR_WORDS = 90  # a claim quoted with the sentence it leans on stays this short
MIN_ASPECTS, MAX_ASPECTS, CLAIMS_PER_THEME = 3, 6, 6

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_PHRASE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
# words that end a key phrase: verbs, adverbs, pronouns and vague nouns
_BREAK = frozenset(
    """also however which who whom whose what when where while this these those their there here
its our we they it he she them us his her been being was were is are be have has had do does did can could may
might will would shall should must not very more most less least than then thus so such other others each both
all any some many several few one two three four five first second third new novel based using used use uses
show shows shown showed propose proposed proposes present presents presented via between among within without
about above below after before during into onto upon over under only just even well however therefore example
examples e.g i.e et al fig figure table section paper papers work approach approaches method methods result
results study studies way ways number numbers set sets case cases type types part parts kind lot order term terms
different various certain given specific same similar recent important major main key good better best large
small high low higher lower significant significantly respectively further following like including include
includes included make makes made take takes taken give gives given lead leads need needs able often usually
from through across against toward towards per whether because since until unless upon via versus vs
argue argues argued suggest suggests suggested note notes noted find finds found observe observes observed
whereas although though lastly finally""".split()
)


@dataclass
class Candidate:
    """A sentence of a passage that may become a claim (its own verbatim quote)."""

    text: str
    passage: Passage
    vec: np.ndarray | None = None
    score: float = 0.0
    extra: dict = field(default_factory=dict)


def default_embed(texts: Sequence[str]) -> np.ndarray:
    from bayes_app.search import runtime

    return runtime.embedder().embed_passages(list(texts))


# ---- candidates ----------------------------------------------------------------------------------
def claim_candidates(passages: list[Passage]) -> list[Candidate]:
    """Claim-shaped sentences from passages whose role allows claims (body, caption; unknown
    roles unless the passage reads as a reference list), each once."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for p in passages:
        if not sent.role_allows_claims(p.role):
            continue
        raw = p.raw or p.text
        if sent.looks_like_reference_list(raw):  # also when labelled body: roles may be stale
            continue
        sentences = sent.candidate_sentences(raw)
        for i, s in enumerate(sentences):
            key = " ".join(s.lower().split())
            if key in seen or sent.claim_problem(s) is not None:
                continue
            text = s
            if choose.needs_previous(s):
                # "This challenge motivates…": quote it with the sentence it points to, or not at all
                prev = sentences[i - 1] if i else ""
                text = f"{prev} {s}"
                if (
                    not prev
                    or choose.leans_on_previous(prev)
                    or sent.claim_problem(prev) is not None
                    or len(text.split()) > MAX_PAIR_WORDS
                    or text not in " ".join(p.text.split())
                ):
                    continue
            seen.add(key)
            wording = choose.wording(strip_marks(text, getattr(p, "marks", None) or {}))
            out.append(Candidate(text, p, extra={"wording": wording, "position": i}))
    return out


def _embed_all(cands: list[Candidate], embed: Embed) -> None:
    todo = [c for c in cands if c.vec is None]
    if todo:
        for c, v in zip(todo, embed([c.text for c in todo])):
            c.vec = np.asarray(v, dtype=np.float32)


def question_parts(question: str) -> list[str]:
    """The parts of a multi-part question ("What is AutoScholarQuery and how was it built?" →
    "What is AutoScholarQuery", "how was it built?"; two questions in one), or [] for one part."""
    parts = [
        p.strip() for p in re.split(r"(?<=\?)\s+|[;,]?\s+and\s+(?=(?:how|what|why|which|who|where|when)\b)", question)
    ]
    parts = [p for p in parts if len(tokens(p)) >= 1]
    return parts if len(parts) > 1 else []


def rank(cands: list[Candidate], query: str, embed: Embed | None = None) -> list[Candidate]:
    """Best first: the learned relevance model's probability that the sentence answers the query
    (`llm.relevance`; for a multi-part question the best over the whole and each part), and a
    little centrality (mean cosine to the others)."""
    if not cands:
        return []
    embed = embed or default_embed
    _embed_all(cands, embed)
    m = np.stack([c.vec for c in cands])
    texts = [c.text for c in cands]
    ctx = (
        [" ".join(c.passage.text.split()) for c in cands],
        [int(c.extra.get("position", 0)) for c in cands],
        [c.passage.role for c in cands],
    )
    rel = relevance.score(query, texts, *ctx, embed=embed, vecs=m)
    parts = question_parts(query)
    by_part = [relevance.score(p, texts, *ctx, embed=embed, vecs=m) for p in parts]
    cen = (m @ m.T).sum(1) - 1.0
    cen = cen / max(1, len(cands) - 1)
    for k, (c, r, z) in enumerate(zip(cands, rel, cen)):
        best = max([float(r), *(float(b[k]) for b in by_part)])
        c.score = float(RELEVANCE_WEIGHT * best + (1 - RELEVANCE_WEIGHT) * z)
        c.extra["relevance"] = best
        c.extra["parts"] = [float(b[k]) for b in by_part]
    return sorted(cands, key=lambda c: -c.score)


def answering(cands: list[Candidate], least: int | None = None, per_part: int | None = None) -> list[Candidate]:
    """The ranked candidates (`rank`) that answer the question: the relevance model's probability
    at least its threshold (`llm.relevance.threshold`, chosen on its training data), plus the
    `least` best and each question part's `per_part` best, in rank order."""
    if not cands:
        return []
    least = MIN_PLAN_CLAIMS if least is None else least
    per_part = PART_CLAIMS if per_part is None else per_part
    t = relevance.threshold()
    keep = {id(c) for c in cands if c.extra.get("relevance", 0.0) >= t}
    keep |= {id(c) for c in sorted(cands, key=lambda c: -c.extra.get("relevance", 0.0))[:least]}
    for k in range(len(cands[0].extra.get("parts") or [])):
        keep |= {id(c) for c in sorted(cands, key=lambda c: -c.extra["parts"][k])[:per_part]}
    return [c for c in cands if id(c) in keep]


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def same_claim(a: str, b: str, cosine: float) -> bool:
    """Near-duplicates: very close in meaning, the same numbers, and no polarity flip."""
    return cosine >= DUPLICATE_COSINE and _numbers(a) == _numbers(b) and not polarity_clash(a, b)


def duplicate_of(texts: list[str], earlier: list[str], embed: Embed | None = None) -> list[int | None]:
    """For each of `texts`, the index (into `earlier + texts`) of the claim it repeats — one
    of `earlier` or a text before it that is not itself a repeat — or None."""
    if not texts:
        return []
    embed = embed or default_embed
    allt = list(earlier) + list(texts)
    vecs = embed(allt)
    out: list[int | None] = []
    for i, t in enumerate(texts):
        me = len(earlier) + i
        hit = next(
            (
                j
                for j in range(me)
                if (j < len(earlier) or out[j - len(earlier)] is None)
                and same_claim(t, allt[j], float(vecs[me] @ vecs[j]))
            ),
            None,
        )
        out.append(hit)
    return out


def dedupe(cands: list[Candidate], avoid: Sequence[str] = (), embed: Embed | None = None) -> list[Candidate]:
    """`cands` in order without near-duplicates of each other or of `avoid` (claims already
    written)."""
    if not cands:
        return []
    embed = embed or default_embed
    _embed_all(cands, embed)
    avoid_vecs = embed(list(avoid)) if avoid else np.zeros((0, cands[0].vec.shape[0]))
    kept: list[Candidate] = []
    for c in cands:
        if any(same_claim(c.text, a, float(c.vec @ v)) for a, v in zip(avoid, avoid_vecs)):
            continue
        if any(same_claim(c.text, k.text, float(c.vec @ k.vec)) for k in kept):
            continue
        kept.append(c)
    return kept


def on_question(
    question: str, cands: list[Candidate], embed: Embed | None = None, keep: int = 1, focus: bool = False
) -> list[Candidate]:
    """The candidates that address `question`, and at least the `keep` most relevant (a library
    that matches weakly still gets its best claims). `focus` (a plan, over all the retrieved
    candidates): within FLOOR_MARGIN of the best by `llm.choose.focus_relevance`; otherwise (a
    handful of picks, where the subject/focus split has too few sentences to go by): relevance
    (`llm.choose.relevance`) at least CLAIM_FLOOR or within FLOOR_MARGIN of the best."""
    if not cands:
        return []
    embed = embed or default_embed
    if focus:
        _embed_all(cands, embed)
        texts, keys = [c.text for c in cands], [c.passage.chunk_id for c in cands]
        scores = choose.focus_relevance(question, texts, embed, keys, np.stack([c.vec for c in cands]))
        top = [float("inf")]
    else:
        scores, _ = choose.relevance(question, [c.text for c in cands], embed)
        top = [CLAIM_FLOOR]
    ordered = np.sort(scores)[::-1]
    floor = min(*top, float(ordered[0]) - FLOOR_MARGIN, float(ordered[min(keep, len(ordered)) - 1]))
    return [c for c, s in zip(cands, scores) if s >= floor]


def select_claims(
    query: str, passages: list[Passage], limit: int, avoid: Sequence[str] = (), embed: Embed | None = None
) -> list[Candidate]:
    """Up to `limit` claim sentences for `query`: ranked, near-duplicates merged, then chosen by
    maximal marginal relevance so one fact appears once."""
    embed = embed or default_embed
    kept = dedupe(rank(claim_candidates(passages), query, embed), avoid, embed)
    if not kept:
        return []
    picked = choose.mmr(np.array([c.score for c in kept]), np.stack([c.vec for c in kept]), limit)
    return [kept[i] for i in picked]


# ---- themes --------------------------------------------------------------------------------------
def _cluster(vecs: np.ndarray, threshold: float) -> list[list[int]]:
    """Average-linkage agglomerative clustering on cosine similarity (deterministic)."""
    groups = [[i] for i in range(len(vecs))]
    sims = vecs @ vecs.T
    while len(groups) > 1:
        best, pair = threshold, None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                s = float(sims[np.ix_(groups[a], groups[b])].mean())
                if s >= best:
                    best, pair = s, (a, b)
        if pair is None:
            break
        a, b = pair
        groups[a] = groups[a] + groups[b]
        del groups[b]
    return groups


def key_phrases(texts: list[str], gerunds: bool = False) -> Counter[str]:
    """Candidate key phrases (runs of 1-4 content words, and their head-final sub-runs) with
    how many of `texts` contain them; `gerunds`: "-ing" words count ("training process",
    "reinforcement learning"), in phrases of several words."""
    counts: Counter[str] = Counter()
    for t in texts:
        found: set[str] = set()
        run: list[str] = []
        prev = ""
        for tok in re.findall(r"[A-Za-z][A-Za-z0-9'’-]*|[^\sA-Za-z]", t) + ["."]:
            w = tok.strip("'’")
            low = w.lower()
            # "PaSa-7b surpasses …": a lowercase -s word right after a name is its verb
            verb_after_name = w.islower() and low.endswith("s") and bool(re.search(r"[a-z][A-Z]|\d|[A-Z]{2}", prev))
            # "To evaluate PaSa …", "we aim to construct …": an infinitive opens a verb phrase, not a name
            infinitive = prev.lower() == "to" and w.islower()
            prev = w
            glued_citation = bool(re.fullmatch(r"[A-Za-z]{4,}\d{2,3}", w))  # "SELFIES106"
            if (
                not _PHRASE_WORD.fullmatch(w)
                or low in STOPWORDS
                or low in _BREAK
                or low.endswith("ly")
                or verb_after_name
                or glued_citation
                or infinitive
                or (not run and (low.endswith("ed") or (low.endswith("ing") and not gerunds)))
            ):
                for n in range(1, min(4, len(run)) + 1):
                    for start in range(0, len(run) - n + 1):
                        found.add(" ".join(run[start : start + n]))
                run = []
                continue
            run.append(w)
        counts.update(
            p
            for p in found
            if len(p) >= 4 and not p.lower().endswith("ed") and (gerunds and " " in p or not p.lower().endswith("ing"))
        )
    return counts


def specific(phrase: str, texts: Sequence[str] = ()) -> bool:
    """Whether `phrase` can name a theme on its own: several words ("feature attribution"), or one
    word that is a name ("AutoScholarQuery", "GPT-4o", "ICLR", or capitalised inside a sentence of
    `texts`: "the Crawler"), never a generic word ("Model")."""
    if len(phrase.split()) >= 2 or re.search(r"[a-z][A-Z]|\d|^[A-Z]{2}", phrase):
        return True
    # "Equation 2", "Table 3": a label, not a name
    return phrase[:1].isupper() and any(re.search(rf"[\w,;:]\s+{re.escape(phrase)}\b(?!\s*\d)", t) for t in texts)


def _display(phrase: str) -> str:
    """A theme title: the phrase as written, capitalised unless its first word is an acronym or a
    mixed-case name ("GPT-4o", "PaSa")."""
    first = phrase.split()[0]
    if first.islower():
        return phrase[0].upper() + phrase[1:]
    return phrase


def theme_title(
    texts: list[str],
    centroid: np.ndarray,
    taken: list[tuple[str, np.ndarray]],
    embed: Embed,
    avoid_words: set[str] = frozenset(),
    anchor: str = "",
) -> tuple[str, np.ndarray]:
    """The key phrase closest to the cluster's centroid, distinct from titles already taken
    (one of `anchor`'s when it has any)."""
    counts = key_phrases(texts)
    if not counts:
        return "Other findings", centroid
    # a phrase must recur in the cluster when the cluster has several sentences
    need = 2 if len(texts) >= 3 else 1
    phrases = [p for p, n in counts.items() if n >= need] or list(counts)

    avoid_stems = {stem(w) for w in avoid_words}

    def own(p: str) -> bool:  # not the question's own word
        return p.lower() not in avoid_words and not (len(p.split()) == 1 and stem(p.lower()) in avoid_stems)

    def named(ps: list[str]) -> list[str]:
        return [p for p in ps if specific(p, texts) and len(p.split()) <= 3 and own(p) and not sent.has_verb(p.split())]

    # a noun phrase of two or three words (or a name), never a generic word, when the claims have one
    phrases = named(phrases) or named(list(counts)) or named(list(key_phrases(texts, gerunds=True))) or phrases
    phrases = [p for p in phrases if p.lower() in anchor.lower()] or phrases
    counts = counts + Counter({p: 1 for p in phrases if p not in counts})
    by_lower: dict[str, str] = {}
    for p in sorted(phrases, key=lambda p: (-counts[p], p)):
        by_lower.setdefault(p.lower(), p)
    phrases = [p for p in sorted(by_lower.values()) if not sent.has_verb(p.split())][:200] or sorted(by_lower.values())[
        :200
    ]
    vecs = embed(phrases)
    c = centroid / (np.linalg.norm(centroid) or 1.0)
    # closeness to the centroid, a little for recurring and for multi-word (more specific) phrases
    scores = (
        vecs @ c
        + 0.02 * np.log1p([counts[p] for p in phrases])
        + 0.05 * np.array([min(len(p.split()), 3) - 1 for p in phrases])
    )
    for i in np.argsort(-scores):
        p, v = phrases[int(i)], vecs[int(i)]
        if not own(p):
            continue
        if any(float(v @ tv) >= 0.85 or p.lower() == t.lower() for t, tv in taken):
            continue
        return _display(p), v
    return _display(phrases[int(np.argmax(scores))]), vecs[int(np.argmax(scores))]


def _split_in_two(cands: list[Candidate]) -> list[list[Candidate]]:
    """The candidates in two groups by meaning (average linkage on cosine distance), in order."""
    from scipy.cluster.hierarchy import fcluster, linkage

    m = np.stack([c.vec / (np.linalg.norm(c.vec) or 1.0) for c in cands]).astype(np.float64)
    labels = fcluster(linkage(m, method="average", metric="cosine"), 2, criterion="maxclust")
    groups = [[c for c, lab in zip(cands, labels) if lab == k] for k in dict.fromkeys(labels)]
    return [g for g in groups if g]


def plan(
    question: str,
    passages: list[Passage],
    embed: Embed | None = None,
    max_aspects: int = MAX_ASPECTS,
    per_theme: int = CLAIMS_PER_THEME,
) -> list[tuple[str, list[Candidate]]]:
    """Themes for `question`: the most relevant claim sentences clustered by meaning; each
    theme titled by its key phrase, its claims ranked (relevance to the question and to the
    theme, centrality) with near-duplicates merged. No theme is empty."""
    embed = embed or default_embed
    ranked = dedupe(rank(claim_candidates(passages), question, embed), (), embed)
    cands = answering(ranked)[:MAX_CANDIDATES]
    if not cands:
        return []
    m = np.stack([c.vec for c in cands])
    groups = _cluster(m, CLUSTER_COSINE)
    # the clusters with the most relevant sentences first; singletons only to reach the minimum
    groups.sort(key=lambda g: (-min(len(g), 3), -max(cands[i].extra["relevance"] for i in g)))
    multi = [g for g in groups if len(g) >= 2]
    chosen = multi[:max_aspects]
    for g in groups:
        if len(chosen) >= MIN_ASPECTS:
            break
        if g not in chosen:
            chosen.append(g)
    q_words = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    taken: list[tuple[str, np.ndarray]] = []
    out: list[tuple[str, list[Candidate]]] = []
    shown_by_group = []
    for g in chosen:
        members = [cands[i] for i in g]
        cen = m[g].mean(0)
        cen = cen / (np.linalg.norm(cen) or 1.0)
        members.sort(key=lambda c: -(c.extra["relevance"] + float(c.vec @ cen)))
        shown_by_group.append(members[:per_theme])
    # a map keeps MIN_ASPECTS themes while its claims allow: the largest group split by meaning
    while 0 < len(shown_by_group) < MIN_ASPECTS and max(map(len, shown_by_group)) >= 2:
        big = max(range(len(shown_by_group)), key=lambda i: len(shown_by_group[i]))
        shown_by_group[big : big + 1] = _split_in_two(shown_by_group[big])
    for shown in shown_by_group:
        if not shown:
            continue
        # the title describes the claims shown: a key phrase of theirs, closest to their centroid
        # a phrase of the first claim when it has one: a claim after it may merge into another
        title, tvec = theme_title(
            [c.text for c in shown],
            np.stack([c.vec for c in shown]).mean(0),
            taken,
            embed,
            avoid_words=q_words,
            anchor=shown[0].text,
        )
        taken.append((title, tvec))
        out.append((title, shown))
    # reading order: the theme holding the most relevant sentence first
    return out


def group(texts: list[str], embed: Embed | None = None) -> list[tuple[str, list[int]]]:
    """All of `texts` grouped by meaning, each group with its key-phrase title (restructure)."""
    if not texts:
        return []
    embed = embed or default_embed
    vecs = embed(texts)
    taken: list[tuple[str, np.ndarray]] = []
    out = []
    for g in sorted(_cluster(vecs, CLUSTER_COSINE), key=lambda g: (-len(g), g[0])):
        title, tvec = theme_title([texts[i] for i in g], vecs[g].mean(0), taken, embed)
        taken.append((title, tvec))
        out.append((title, sorted(g)))
    return out
