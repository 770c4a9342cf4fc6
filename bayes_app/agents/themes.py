"""Themes a reader would choose: claims grouped by meaning into balanced groups, each named by
a short noun phrase taken from its own claims, no two names on a map alike.

    balanced_groups(vecs) -> [[index]]          average-linkage clusters, none over half the claims
    name(texts, vecs, taken, embed) -> title    the group's key phrase, distinct from `taken`
    group(texts, embed, taken) -> [(title, [index])]   restructure offline: both of the above
    same_name(a, b) -> bool                     equal titles, ignoring case and inflection
    on_topic(texts, node_texts, others) -> [bool]  about the node: floor, and closer to it than to
                                                   any other theme (Expand, Dive deeper)

Naming follows KeyBERT's method with the app's embedder: candidate phrases are runs of content
words of the claims (`extractive.key_phrases`), scored by cosine to the group's centroid, and
the best one not too close to a name already taken wins. Clustering is SciPy's hierarchical
(average linkage on cosine distance); a cluster larger than half the claims is split in two,
and single-claim clusters join their closest group while it has room.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from bayes_app.agents.extractive import Embed, default_embed, key_phrases, specific, stem
from bayes_app.maps import sentences as sent

MIN_GROUPS, MAX_GROUPS = 2, 8
MAX_SHARE = 0.5  # no group holds more than this share of the claims
NAME_COSINE = 0.85  # two names this close in meaning are the same name
MAX_NAME_WORDS = 4


# ---- grouping ----------------------------------------------------------------------------------
def _split(vecs: np.ndarray, idx: list[int], k: int) -> list[list[int]]:
    """`idx` in at most `k` average-linkage clusters (their order of first member)."""
    if len(idx) <= 1 or k <= 1:
        return [list(idx)]
    labels = fcluster(linkage(vecs[idx], method="average", metric="cosine"), t=k, criterion="maxclust")
    out: dict[int, list[int]] = {}
    for i, lab in zip(idx, labels):
        out.setdefault(int(lab), []).append(i)
    return list(out.values())


def _centroid(vecs: np.ndarray, g: list[int]) -> np.ndarray:
    c = vecs[g].mean(0)
    return c / (np.linalg.norm(c) or 1.0)


def balanced_groups(vecs: np.ndarray, k: int | None = None, max_share: float = MAX_SHARE) -> list[list[int]]:
    """Indices of `vecs` (unit vectors) grouped by meaning: about √n groups (2-8), none with
    more than `max_share` of the items, single items folded into their closest group.
    Largest group first."""
    n = len(vecs)
    if n < 2:
        return [list(range(n))] if n else []
    vecs = np.asarray(vecs, dtype=np.float64)
    if n < 4:  # two or three claims: the closest together, the rest on its own (never all in one)
        return sorted((sorted(g) for g in _split(vecs, list(range(n)), 2)), key=lambda g: (-len(g), g[0]))
    k = k or min(MAX_GROUPS, max(MIN_GROUPS, round(math.sqrt(n))))
    groups = _split(vecs, list(range(n)), k)
    cap = max(2, math.floor(n * max_share))
    while (big := max(groups, key=len)) and len(big) > cap:
        parts = _split(vecs, big, 2)
        if len(parts) < 2:  # identical vectors: cut by order
            parts = [big[:cap], big[cap:]]
        groups.remove(big)
        groups.extend(parts)
    singles = [g for g in groups if len(g) == 1]
    if len(groups) - len(singles) >= MIN_GROUPS:
        for s in singles:
            rest = [g for g in groups if len(g) > 1 and len(g) < cap]
            if not rest:
                break
            best = max(rest, key=lambda g: float(vecs[s[0]] @ _centroid(vecs, g)))
            best.extend(s)
            groups.remove(s)
    return sorted((sorted(g) for g in groups), key=lambda g: (-len(g), g[0]))


# ---- naming ------------------------------------------------------------------------------------
def same_name(a: str, b: str) -> bool:
    """The same title: equal words, ignoring case, punctuation and inflection."""

    def norm(t: str) -> list[str]:
        return [stem(w) for w in re.findall(r"[A-Za-z0-9]+", t.lower())]

    return bool(norm(a)) and norm(a) == norm(b)


def _noun_phrase(p: str) -> bool:
    """A phrase that can name a group: no finite verb, not opening with a verb-like word
    ("Requires high-quality search", "Uses …"), at most MAX_NAME_WORDS words."""
    words = p.split()
    first = words[0].lower()
    if len(words) > MAX_NAME_WORDS or sent.has_verb(words):
        return False
    verb_like = len(words) > 1 and first.endswith("s") and not first.endswith(("ss", "us", "is", "ics", "sis"))
    return not verb_like and not first.endswith(("ing", "ed"))


def _display(phrase: str) -> str:
    first = phrase.split()[0]
    return phrase[0].upper() + phrase[1:] if first.islower() else phrase


def name(
    texts: Sequence[str],
    vecs: np.ndarray,
    taken: Iterable[str] = (),
    embed: Embed | None = None,
    taken_vecs: np.ndarray | None = None,
) -> str:
    """The key phrase of `texts` closest to their centroid that is a noun phrase and not the
    same name as (or too close in meaning to) any of `taken`; "Other findings" when none."""
    embed = embed or default_embed
    taken = [t for t in taken if t]
    counts = key_phrases(list(texts))
    need = 2 if len(texts) >= 3 else 1
    phrases = sorted(
        {
            p.lower(): p for p in sorted(counts, key=lambda p: (-counts[p], p)) if counts[p] >= need and _noun_phrase(p)
        }.values()
    )
    if not phrases:
        phrases = sorted({p.lower(): p for p in counts if _noun_phrase(p)}.values())
    phrases = [p for p in phrases if not any(same_name(p, t) for t in taken)]
    # two or three words, or a name ("AutoScholarQuery"), before a generic word ("Model")
    free = [p for p in counts if _noun_phrase(p) and not any(same_name(p, t) for t in taken)]
    every = sorted({p.lower(): p for p in free}.values())
    phrases = ([p for p in phrases if specific(p, texts)] or [p for p in every if specific(p, texts)] or phrases)[:200]
    if not phrases:
        return _fallback(taken)
    pv = embed(phrases)
    c = np.asarray(vecs, dtype=np.float32).mean(0)
    c = c / (np.linalg.norm(c) or 1.0)
    # KeyBERT: closeness to the group; a little for recurring and for more specific phrases
    score = (
        pv @ c
        + 0.02 * np.log1p([counts[p] for p in phrases])
        + 0.05 * np.array([min(len(p.split()), 3) - 1 for p in phrases])
    )
    tv = taken_vecs if taken_vecs is not None else (embed(taken) if taken else np.zeros((0, pv.shape[1])))
    for i in np.argsort(-score):
        if len(tv) and float((tv @ pv[int(i)]).max()) >= NAME_COSINE:
            continue
        return _display(phrases[int(i)])
    return _fallback(taken)


def _fallback(taken: Sequence[str]) -> str:
    k = 1
    while any(same_name(f"Other findings {k}" if k > 1 else "Other findings", t) for t in taken):
        k += 1
    return "Other findings" if k == 1 else f"Other findings {k}"


def group(texts: list[str], embed: Embed | None = None, taken: Iterable[str] = ()) -> list[tuple[str, list[int]]]:
    """All of `texts` in balanced groups, each titled by its own key phrase, names distinct
    from each other and from `taken`."""
    if not texts:
        return []
    embed = embed or default_embed
    vecs = np.asarray(embed(texts), dtype=np.float32)
    names = list(taken)
    out = []
    for g in balanced_groups(vecs):
        title = name([texts[i] for i in g], vecs[g], names, embed)
        names.append(title)
        out.append((title, g))
    return out


# ---- relevance to a node -----------------------------------------------------------------------
TOPIC_FLOOR = 0.25  # cosine to the node below which a sentence is not about it at all


def on_topic(
    texts: Sequence[str],
    node_texts: Sequence[str],
    others: Sequence[Sequence[str]],
    floor: float = TOPIC_FLOOR,
    embed: Embed | None = None,
) -> list[bool]:
    """For each text, whether it is about the node: its cosine to the node (the centroid of the
    node's wording and its claims) reaches `floor` and is no lower than to any other theme of
    the map (`others`: each theme's wording and claims). Expand and Dive deeper keep only these,
    so material that belongs to another theme, or to the map only, stays out."""
    if not texts or not node_texts:
        return [True] * len(texts)
    embed = embed or default_embed
    groups = [list(node_texts)] + [list(o) for o in others if o]
    flat = [t for g in groups for t in g]
    allv = np.asarray(embed(list(texts) + flat), dtype=np.float32)
    tv, gv = allv[: len(texts)], allv[len(texts) :]
    cents, k = [], 0
    for g in groups:
        cents.append(_centroid(gv, list(range(k, k + len(g)))))
        k += len(g)
    sims = tv @ np.stack(cents).T
    return [bool(row[0] >= floor and row[0] >= row[1:].max(initial=-1.0)) for row in sims]
