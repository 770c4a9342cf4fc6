"""Living maps, the measuring half: is a new paper relevant to a map, and where in the map does
each of its claims belong. Pure functions over unit vectors (cosine = dot product), no I/O.

    map_texts(nodes) -> [str]                      what a map is about: its question and themes
    relevance(passage_vecs, text_vecs) -> float    how strongly a paper's passages match a map
    place(claim_vec, tree) -> Placement            Co-STORM's top-down placement in the tree

Placement follows Co-STORM's knowledge-base insertion: starting at the root, the candidate
branches (theme children) are pre-ranked by embedding similarity to the claim; the best one
above `descend_floor` is stepped into when it has sub-themes, else the claim is inserted there;
when no branch passes at the root level a new theme is created; below the root the claim is
inserted in the theme reached (the closest at that depth).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bayes_app.maps.tree import bottom_up
from bayes_app.models import MapNode, NodeKind

BRANCH_KINDS = (NodeKind.THEME, NodeKind.CHAPTER)
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)
TOP_PASSAGES = 3  # a map text's match with a paper: the mean of its best passages
DESCEND_FLOOR = 0.45  # cosine of a claim to a branch below which it does not belong there (MiniLM scale)


def map_texts(nodes: Sequence[MapNode]) -> list[str]:
    """The texts a map is about: its root question, then its theme and chapter titles."""
    root = [n.title for n in nodes if n.parent_id is None and n.title.strip()]
    branches = [n.title for n in nodes if n.kind in BRANCH_KINDS and n.title.strip()]
    return root + branches


def relevance(passage_vecs: np.ndarray, text_vecs: np.ndarray, top: int = TOP_PASSAGES) -> float:
    """How strongly a paper matches a map: for each map text the mean cosine of its `top` best
    passages, and the best of those (0 when either side is empty). A paper that speaks to one
    theme of the map strongly counts, not only one that matches the question as a whole."""
    if len(passage_vecs) == 0 or len(text_vecs) == 0:
        return 0.0
    sims = np.asarray(passage_vecs, dtype=np.float32) @ np.asarray(text_vecs, dtype=np.float32).T
    k = min(top, sims.shape[0])
    best = np.sort(sims, axis=0)[-k:].mean(axis=0)
    return float(best.max())


def passage_scores(passage_vecs: np.ndarray, text_vecs: np.ndarray) -> np.ndarray:
    """Each passage's best cosine to any of the map's texts (to pick the passages to read)."""
    if len(passage_vecs) == 0 or len(text_vecs) == 0:
        return np.zeros(len(passage_vecs), dtype=np.float32)
    return (np.asarray(passage_vecs, dtype=np.float32) @ np.asarray(text_vecs, dtype=np.float32).T).max(axis=1)


@dataclass
class Branch:
    """A theme (or chapter) of the tree: its vector (title and claims) and its sub-branches."""

    id: str
    title: str
    vec: np.ndarray
    children: list[Branch] = field(default_factory=list)


@dataclass(frozen=True)
class Placement:
    action: str  # "insert" (under parent_id) | "create" (a new theme under the root)
    parent_id: str
    parent_title: str
    path: tuple[str, ...]  # the titles stepped through, root's children first
    score: float


def _unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) or 1.0)


def build_tree(nodes: Sequence[MapNode], vec_of: dict[str, np.ndarray]) -> list[Branch]:
    """The map's branches under the root, each with the centroid of its title's vector and its
    claims' vectors (`vec_of`: node id → unit vector of its wording)."""
    kids: dict[str | None, list[MapNode]] = {}
    for n in sorted(nodes, key=lambda n: n.order_index):
        kids.setdefault(n.parent_id, []).append(n)
    root = next((n for n in nodes if n.parent_id is None), None)

    if root is None:
        return []

    def sub(n: MapNode) -> list[MapNode]:
        return [k for k in kids.get(n.id, []) if k.kind in BRANCH_KINDS]

    built: dict[str, Branch | None] = {}
    for n in bottom_up(sub(root), sub):  # children first, so each branch finds its sub-branches built
        vecs = [vec_of[n.id]] if n.id in vec_of else []
        vecs += [vec_of[k.id] for k in kids.get(n.id, []) if k.kind in CLAIM_KINDS and k.id in vec_of]
        children = [b for k in sub(n) if (b := built.get(k.id)) is not None]
        built[n.id] = Branch(n.id, n.title, _unit(np.mean(vecs, axis=0)), children) if vecs else None
    return [b for k in sub(root) if (b := built.get(k.id)) is not None]


def place(claim_vec: np.ndarray, root_id: str, tree: list[Branch], descend_floor: float = DESCEND_FLOOR) -> Placement:
    """Where a claim goes: step down the best-matching branches while they match at least
    `descend_floor`; insert under the last one reached, or create a new theme when not even a
    top-level branch matches."""
    level, path, parent, parent_title, score = tree, [], None, "", 0.0
    while level:
        ranked = sorted(((float(claim_vec @ b.vec), b) for b in level), key=lambda x: -x[0])
        best_score, best = ranked[0]
        if best_score < descend_floor:
            break
        parent, parent_title, score = best, best.title, best_score
        path.append(best.title)
        level = best.children
    if parent is None:
        return Placement("create", root_id, "", (), 0.0)
    return Placement("insert", parent.id, parent_title, tuple(path), score)
