"""Offline (extractive) research: which sentences of the retrieved passages become claims, how
they group into themes, and what each theme is called — with the app's embedding model.

    claim_candidates(passages) -> [Candidate]        body/caption sentences that pass the checks
    rank(candidates, query) -> [Candidate]           relevance to the query + centrality, best first
    select_claims(query, passages, limit, avoid) -> [Candidate]   ranked, near-duplicates merged
    plan(question, passages) -> [(title, [Candidate])]            themes: clusters of candidates
    duplicate_of(texts, earlier) -> [index | None]  cosine ≥ DUPLICATE_COSINE, same numbers and polarity

A theme's title is the noun phrase its sentences share and the rest of the map does not
(`agents.naming`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

from bayes_app.agents.retrieval import Passage
from bayes_app.library.marks import strip_marks
from bayes_app.llm import choose, relevance
from bayes_app.maps import sentences as sent
from bayes_app.maps.support import polarity_clash
from bayes_app.search.sparse import tokens


def stem(word: str) -> str:
    return (tokens(word) or [word.lower()])[0]


Embed = Callable[[Sequence[str]], np.ndarray]

DUPLICATE_COSINE = 0.85  # two claims this close (and agreeing on numbers and polarity) say the same
CONTAINED_MIN_WORDS = 6  # a claim holding another of at least this many words whole repeats it
CLUSTER_COSINE = 0.42  # average-linkage merge threshold for themes
JOIN_COSINE = 0.25  # a planned sentence outside every theme joins one at least this close (mean cosine)
MAX_CANDIDATES = 36  # most relevant sentences clustered into themes (MAX_ASPECTS · CLAIMS_PER_THEME)
RELEVANCE_WEIGHT = 0.8  # rank = 0.8 · relevance to the query + 0.2 · centrality
CLAIM_FLOOR, FLOOR_MARGIN = 0.4, 0.1
# A planned claim is one of the MIN_PLAN_CLAIMS best of the question (or PART_CLAIMS of one of its
# parts) by the learned relevance model (`llm.relevance`), or any further sentence the model is
# nearly sure answers it (PLAN_THRESHOLD). The threshold is the plan's own, not the model's F1
# threshold (0.83, chosen on SciFact): chosen leave-one-paper-out on the labelled questions
# (`benchmarks/plan_threshold.py`), where 0.83 let through many same-subject sentences.
MIN_PLAN_CLAIMS = 10  # … so a map on a thin library still has claims to read (the critic may take some)
PLAN_THRESHOLD = 0.97
PART_CLAIMS = 4  # each part of a multi-part question keeps its best this many
# A map holds claims in proportion to what the library holds on the question: when two or more
# papers each give PAPER_SHARE_MIN of the MIN_PLAN_CLAIMS best, each of them keeps its PAPER_CLAIMS
# best (two answering papers: 14 claims; one paper, or one stray sentence: no change).
PAPER_CLAIMS, PAPER_SHARE_MIN = 7, 2
MAX_PAIR_WORDS = 90  # a claim quoted with the sentence it leans on stays this short
MIN_ASPECTS, MAX_ASPECTS, CLAIMS_PER_THEME = 3, 6, 6

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


@dataclass
class Candidate:
    """A sentence of a passage that may become a claim (its own verbatim quote)."""

    text: str
    passage: Passage
    vec: np.ndarray | None = None
    score: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def vector(self) -> np.ndarray:
        """`vec`, which `_embed_all` sets before the candidates are compared."""
        assert self.vec is not None, "embed the candidates first"
        return self.vec


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
    m = np.stack([c.vector for c in cands])
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
    """The ranked candidates (`rank`) that answer the question: the `least` best, each question
    part's `per_part` best, each answering paper's PAPER_CLAIMS best when several answer, and
    every other one at least PLAN_THRESHOLD, in rank order."""
    if not cands:
        return []
    least = MIN_PLAN_CLAIMS if least is None else least
    per_part = PART_CLAIMS if per_part is None else per_part
    keep = {id(c) for c in cands if c.extra.get("relevance", 0.0) >= PLAN_THRESHOLD}
    by_relevance = sorted(cands, key=lambda c: -c.extra.get("relevance", 0.0))
    top = by_relevance[:least]
    keep |= {id(c) for c in top}
    share = Counter(c.passage.document_id for c in top)
    papers = {d for d, n in share.items() if n >= PAPER_SHARE_MIN}
    if len(papers) >= 2:
        for d in papers:
            keep |= {id(c) for c in [c for c in by_relevance if c.passage.document_id == d][:PAPER_CLAIMS]}
    for k in range(len(cands[0].extra.get("parts") or [])):
        keep |= {id(c) for c in sorted(cands, key=lambda c: -c.extra["parts"][k])[:per_part]}
    return [c for c in cands if id(c) in keep]


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def same_claim(a: str, b: str, cosine: float) -> bool:
    """Near-duplicates: one holds the other whole (a sentence, and the same sentence quoted with
    the one after it that leans on it: "… into EpiSCs. Moreover, we find …"), or very close in
    meaning with the same numbers and no polarity flip."""
    return _holds(a, b) or similar_claim(a, b, cosine)


def similar_claim(a: str, b: str, cosine: float) -> bool:
    """Very close in meaning, with the same numbers and no polarity flip."""
    return cosine >= DUPLICATE_COSINE and _numbers(a) == _numbers(b) and not polarity_clash(a, b)


def _holds(a: str, b: str) -> bool:
    """One text holds the other, a sentence of CONTAINED_MIN_WORDS words at least, whole."""
    a, b = " ".join(a.split()), " ".join(b.split())
    short, long = sorted((a, b), key=len)
    return len(short.split()) >= CONTAINED_MIN_WORDS and short in long


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
    avoid_vecs = embed(list(avoid)) if avoid else np.zeros((0, cands[0].vector.shape[0]))
    kept: list[Candidate] = []
    for c in cands:
        if any(similar_claim(c.text, a, float(c.vec @ v)) for a, v in zip(avoid, avoid_vecs)):
            continue
        # a candidate holding another whole stays: the claims written from them are merged (its
        # second sentence is cited on the first's claim)
        if any(similar_claim(c.text, k.text, float(c.vector @ k.vector)) for k in kept):
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
        scores = choose.focus_relevance(question, texts, embed, keys, np.stack([c.vector for c in cands]))
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
    picked = choose.mmr(np.array([c.score for c in kept]), np.stack([c.vector for c in kept]), limit)
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


def theme_title(
    texts: list[str],
    centroid: np.ndarray,
    taken: list[tuple[str, np.ndarray]],
    embed: Embed,
    avoid_words: AbstractSet[str] = frozenset(),
    others: Sequence[str] = (),
) -> tuple[str, np.ndarray]:
    """The theme's name (`agents.naming.name`: the noun phrase its claims share and `others`, the
    rest of the map's claims, do not), distinct from titles already taken, with its vector."""
    from bayes_app.agents import naming

    tv = np.stack([v for _, v in taken]) if taken else None
    title = naming.name(texts, centroid[None, :], [t for t, _ in taken], embed, tv, others, avoid_words)
    return title, np.asarray(embed([title])[0], dtype=np.float32)


def _split_in_two(cands: list[Candidate]) -> list[list[Candidate]]:
    """The candidates in two groups by meaning (average linkage on cosine distance), in order."""
    from scipy.cluster.hierarchy import fcluster, linkage

    m = np.stack([c.vector / (np.linalg.norm(c.vector) or 1.0) for c in cands]).astype(np.float64)
    labels = fcluster(linkage(m, method="average", metric="cosine"), 2, criterion="maxclust")
    groups = [[c for c, lab in zip(cands, labels) if lab == k] for k in dict.fromkeys(labels)]
    return [g for g in groups if g]


def _join_leftovers(
    chosen: list[list[int]], m: np.ndarray, relevance: list[float], room: int, max_groups: int = MAX_ASPECTS
) -> None:
    """A planned sentence whose cluster did not become a theme (a singleton past the minimum)
    joins the theme closest in meaning (JOIN_COSINE) that holds two or more claims and has room
    (its name's words stay in two of its claims), else becomes a theme of its own while there is room for
    one: the plan chose it as answering."""
    placed = {i for g in chosen for i in g}
    for i in sorted(set(range(len(m))) - placed, key=lambda i: -relevance[i]):
        fits = [k for k, g in enumerate(chosen) if 2 <= len(g) < room]
        best = max(fits, key=lambda k: float(m[chosen[k]].mean(0) @ m[i]), default=None)
        if best is not None and float(m[chosen[best]].mean(0) @ m[i]) >= JOIN_COSINE:
            chosen[best] = [*chosen[best], i]
        elif len(chosen) < max_groups:
            chosen.append([i])


def plan(
    question: str,
    passages: list[Passage],
    embed: Embed | None = None,
    max_aspects: int = MAX_ASPECTS,
    per_theme: int = CLAIMS_PER_THEME,
    avoid: Sequence[str] = (),
) -> list[tuple[str, list[Candidate]]]:
    """Themes for `question`: the most relevant claim sentences clustered by meaning, none a
    near-duplicate of another or of a claim in `avoid`; each theme titled by its key phrase,
    its claims ranked (relevance to the question and to the theme, centrality). No theme is
    empty."""
    embed = embed or default_embed
    ranked = dedupe(rank(claim_candidates(passages), question, embed), avoid, embed)
    cands = answering(ranked)[:MAX_CANDIDATES]
    if not cands:
        return []
    m = np.stack([c.vector for c in cands])
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
    _join_leftovers(chosen, m, [c.extra["relevance"] for c in cands], per_theme, max_aspects)
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
            np.stack([c.vector for c in shown]).mean(0),
            taken,
            embed,
            avoid_words=q_words,
            others=[c.text for g in shown_by_group if g is not shown for c in g],
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
