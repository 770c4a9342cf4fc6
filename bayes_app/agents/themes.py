"""Themes a reader would choose: claims grouped by meaning into balanced groups, each named by
a short noun phrase taken from its own claims, no two names on a map alike.

    balanced_groups(vecs) -> [[index]]          average-linkage clusters, none over half the claims
    name(texts, vecs, taken, embed) -> title    the group's key phrase, distinct from `taken`
    group(texts, embed, taken) -> [(title, [index])]   restructure offline: both of the above
    same_name(a, b) -> bool                     equal titles, ignoring case and inflection
    on_topic(texts, node_texts, others) -> [bool]  about the node: floor, and closer to it than to
                                                   any other theme (Expand, Dive deeper)

Naming is `agents.naming`: the noun phrase the group's claims share and the rest of the map does
not (c-TF-IDF and KeyBERT with the app's embedder), 2-4 words. Clustering is SciPy's hierarchical
(average linkage on cosine distance); a cluster larger than half the claims is split in two,
and single-claim clusters join their closest group while it has room.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from bayes_app.agents import naming
from bayes_app.agents.extractive import Embed, default_embed

MIN_GROUPS, MAX_GROUPS = 2, 8
MAX_SHARE = 0.5  # no group holds more than this share of the claims
MAX_NAME_WORDS = naming.MAX_WORDS


# ---- grouping ----------------------------------------------------------------------------------
def _split(vecs: np.ndarray, idx: list[int], k: int) -> list[list[int]]:
    """`idx` in at most `k` average-linkage clusters (their order of first member)."""
    if len(idx) <= 1 or k <= 1:
        return [list(idx)]
    from scipy.cluster.hierarchy import fcluster, linkage  # half a second to import: on first use

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


# ---- naming (agents/naming.py) ------------------------------------------------------------------
same_name = naming.same_name
shared = naming.shared
holds = naming.holds


def name(
    texts: Sequence[str],
    vecs: np.ndarray | None = None,
    taken: Iterable[str] = (),
    embed: Embed | None = None,
    taken_vecs: np.ndarray | None = None,
    others: Sequence[str] = (),
) -> str:
    """The group's name: its claims' shared key noun phrase, distinct from `taken` (see
    `agents.naming`); `others`: the rest of the map's claims."""
    return naming.name(texts, vecs, taken, embed or default_embed, taken_vecs, others)


def group(
    texts: list[str], embed: Embed | None = None, taken: Iterable[str] = (), others: Sequence[str] = ()
) -> list[tuple[str, list[int]]]:
    """All of `texts` in balanced groups, each titled by its own key phrase, names distinct
    from each other and from `taken` (`others`: the map's other claims, which a name should not
    fit as well). A group whose claims share no noun phrase is split by
    meaning until its parts do (a single claim always names itself)."""
    if not texts:
        return []
    embed = embed or default_embed
    vecs = np.asarray(embed(texts), dtype=np.float32)
    names = list(taken)
    out = []
    todo = balanced_groups(vecs)
    while todo:
        g = todo.pop(0)
        mine = [texts[i] for i in g]
        rest = [t for i, t in enumerate(texts) if i not in set(g)] + list(others)
        title = name(mine, vecs[g], names, embed, others=rest)
        if len(g) > 1 and not holds(title, mine):
            parts = _split(vecs, g, 2)
            todo[:0] = sorted(parts if len(parts) > 1 else [[i] for i in g], key=lambda p: (-len(p), p[0]))
            continue
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
