"""Synthesis of a map (or a branch) as a short text whose markers [k] number the synthesis
note's own citations (the export renumbers them as it numbers the papers).

    offline(db, owner_id, map_id, node_id=None, embed=None) -> Summary
        a structured extractive summary: an opening sentence, then per theme a lead naming the
        theme (its title when its claims bear it out, else their shared noun phrase) and its one
        or two most central claims (cosine to the theme's centroid), each marker pointing at the
        claim's own quote, themes in reading order (background → method → results →
        limitations, from cue words of their claims), at most MAX_WORDS words (`word_count`).
    from_prose(prose, outline) -> (Summary, dropped markers, dropped sentences)
        a model's prose over the export outline: markers kept only where the sentence shares
        content terms with a claim citing that paper, each pointed at the best matching claim's
        citation; sentences left without a marker are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlmodel import Session

from bayes_app.maps import export
from bayes_app.maps.sentences import split_sentences
from bayes_app.maps.tree import walk
from bayes_app.models import Citation, MapNode, NodeKind
from bayes_app.search.sparse import tokens

MAX_WORDS = 250
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)
ROLES = ("background", "method", "results", "limitations")
# cue words of a claim's rhetorical role (generic academic English, not any paper's terms)
_CUES = {
    "method": r"\b(we (?:propose|introduce|present|design|train|use)|is trained|are trained|training|trains?|"
    r"architecture|algorithm|framework|pipeline|approach|method|procedure|fine-?tun\w*|optimi[sz]\w*)\b",
    "results": r"\b(outperform\w*|surpass\w*|exceed\w*|improv\w*|achiev\w*|accuracy|recall|precision|"
    r"results? (?:show|indicate|demonstrate)|significant\w*|higher|lower|better|worse|gains?)\b"
    r"|\d+(?:\.\d+)?\s?%",
    "limitations": r"\b(limitation\w*|limited|drawbacks?|fail\w*|cannot|can ?not|unable|challeng\w*|future work|"
    r"remains? (?:unclear|open|difficult)|however|bias\w*|costly|expensive)\b",
}


@dataclass
class Summary:
    text: str  # paragraphs; markers [k] number `citations` from 1
    citations: list[Citation] = field(default_factory=list)


def role_of(texts: Sequence[str]) -> int:
    """The reading-order rank of a group of claims: 0 background, 1 method, 2 results, 3 limitations."""
    hits = {r: sum(bool(re.search(p, t, re.I)) for t in texts) for r, p in _CUES.items()}
    best = max(hits, key=lambda r: (hits[r], -ROLES.index(r)))
    return ROLES.index(best) if hits[best] * 2 >= max(1, len(texts)) else 0


def _default_embed(texts: Sequence[str]) -> np.ndarray:
    from bayes_app.search import runtime

    return runtime.embedder().embed_passages(list(texts))


@dataclass
class _Group:
    title: str
    claims: list[tuple[MapNode, list[Citation]]]
    order: int
    role: int = 0
    ranked: list[int] = field(default_factory=list)  # claim indices, most central first


def _groups(t: export._Tree) -> list[_Group]:
    """Every node with claim children (not a synthesis note), in tree order, with those claims."""
    out: list[_Group] = []

    def below(n: MapNode) -> list[MapNode]:
        return [k for k in t.kids.get(n.id, []) if not export.is_synthesis(k, t.cits.get(k.id, []))]

    for n, _depth in walk([t.root], below):
        kids = t.kids.get(n.id, [])
        claims = [(k, t.cits.get(k.id, [])) for k in kids if k.kind in CLAIM_KINDS and (k.title or k.body)]
        if claims:
            out.append(_Group(n.title or "Untitled", claims, len(out)))
    return out


def offline(
    db: Session,
    owner_id: str,
    map_id: str,
    node_id: str | None = None,
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    max_words: int = MAX_WORDS,
) -> Summary:
    """The structured extractive summary of the map or of the branch under `node_id`."""
    _m, t = export._tree(db, owner_id, map_id, node_id)
    groups = _groups(t)
    if not groups:
        return Summary("")
    embed = embed or _default_embed
    for g in groups:
        texts = [c.title or c.body for c, _ in g.claims]
        g.role = role_of(texts)
        v = np.asarray(embed(texts), dtype=np.float32)
        cen = v.mean(0)
        cen = cen / (np.linalg.norm(cen) or 1.0)
        g.ranked = sorted(range(len(texts)), key=lambda i: (-float(v[i] @ cen), i))
    groups.sort(key=lambda g: (g.role, g.order))
    _heads(groups, embed)
    papers = {c.document_id or c.source_title for g in groups for _, cs in g.claims for c in cs}
    n_claims = sum(len(g.claims) for g in groups)
    opening = (
        f"{n_claims} claim{'s' if n_claims != 1 else ''} from {len(papers)} "
        f"source{'s' if len(papers) != 1 else ''}, in {len(groups)} theme{'s' if len(groups) != 1 else ''}."
    )
    # the most central claim of each theme first, then second ones, while the text stays within
    # max_words (counted on the finished text, markers included)
    chosen: list[tuple[int, int]] = []
    for rank in (0, 1):
        for gi, g in enumerate(groups):
            for ci in g.ranked[rank:]:  # a shorter claim of the theme when its best one does not fit
                if (gi, ci) not in chosen and word_count(_render(opening, groups, [*chosen, (gi, ci)])[0]) <= max_words:
                    chosen.append((gi, ci))
                    break
    text, cits = _render(opening, groups, chosen)
    return Summary(text, cits)


def word_count(text: str) -> int:
    """Words of a text, counted strictly: whitespace-separated tokens (markers included) or
    word-like runs ("0.79", "GPT-4o" one each), whichever is more."""
    return max(len(text.split()), len(_WORDLIKE.findall(text)))


_WORDLIKE = re.compile(r"[A-Za-z0-9]+(?:[.'’-][A-Za-z0-9]+)*")


def _render(opening: str, groups: list[_Group], chosen: list[tuple[int, int]]) -> tuple[str, list[Citation]]:
    """The summary's text with `chosen` (group, claim) picks, its markers numbering the citations."""
    cits: list[Citation] = []
    paras = [opening]
    for gi, g in enumerate(groups):
        mine = sorted((ci for k, ci in chosen if k == gi), key=g.ranked.index)
        if not mine:
            continue
        parts = [_lead(g)] if g.title else []
        for ci in mine:
            node, cs = g.claims[ci]
            local = []
            for c in own_citations(node, cs):
                if c not in cits:
                    cits.append(c)
                local.append(cits.index(c) + 1)
            text = export.escape_brackets(_sentence(node))
            parts.append(f"{text[:-1]} [{', '.join(map(str, sorted(set(local))))}]." if local else text)
        paras.append(" ".join(parts))
    return "\n\n".join(paras), cits


def own_citations(node: MapNode, cits: list[Citation]) -> list[Citation]:
    """The citations whose quote is the claim's own sentence (the passage and page a marker
    after it should point to); all of them when none is (a model's paraphrase)."""
    claim = set(tokens(node.title or node.body))
    own = [c for c in cits if claim and len(claim & set(tokens(c.quote or ""))) >= OWN_QUOTE * len(claim)]
    return own or cits


OWN_QUOTE = 0.8  # share of the claim's content terms its own quote holds


def _heads(groups: list[_Group], embed: Callable[[Sequence[str]], np.ndarray]) -> None:
    """Each group's heading: its node's title when every word of it is in the group's claims (in
    two of them when it has two or more), else the noun phrase its claims share
    (`agents.naming`), else none (the paragraph opens with its first claim), so no heading names
    what its claims do not say."""
    from bayes_app.agents import naming

    texts = [[c.title or c.body for c, _ in g.claims] for g in groups]
    taken = [g.title for g, ts in zip(groups, texts) if naming.holds(g.title, ts)]
    for i, (g, ts) in enumerate(zip(groups, texts)):
        if not naming.holds(g.title, ts):
            rest = [t for j, o in enumerate(texts) if j != i for t in o]
            title = naming.name(ts, None, taken, embed, others=rest)
            g.title = title if naming.holds(title, ts) else ""
            taken.append(title)


def _sentence(n: MapNode) -> str:
    text = " ".join((n.title or n.body).split())
    if n.kind == NodeKind.COUNTERPOINT:
        text = "In contrast, " + text[:1].lower() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _lead(g: _Group) -> str:
    return f"{g.title}:"


_MARKER = re.compile(r"(?<!\\)\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def from_prose(prose: str, o: export.Outline, min_overlap: float = 0.2) -> tuple[Summary, list[int], int]:
    """A model's prose as a synthesis: each marker [n] (a paper in the outline) kept only when
    its sentence shares content terms with a claim citing that paper, and pointed at that
    claim's citation; a sentence left without a marker is dropped. Returns the summary, the
    markers dropped and the number of sentences dropped."""
    markers = _Markers(o, min_overlap)
    lost = 0
    paras = []
    for para in prose.split("\n"):
        kept = []
        for s in split_sentences(para) if para.strip() else []:
            out = markers.sentence(s)
            if out is None:
                lost += 1
            else:
                kept.append(out)
        if kept:
            paras.append(" ".join(kept))
    return Summary("\n\n".join(paras), markers.cits), markers.dropped, lost


class _Markers:
    """A prose's markers pointed at citations, sentence by sentence: the citations kept (the
    new numbers are their places here) and the paper numbers dropped."""

    def __init__(self, o: export.Outline, min_overlap: float) -> None:
        self.o, self.min_overlap = o, min_overlap
        self.cits: list[Citation] = []
        self.dropped: list[int] = []

    def sentence(self, s: str) -> str | None:
        """The sentence with its markers renumbered; None when none of them is kept."""
        words = set(tokens(_MARKER.sub(" ", s)))
        found = False

        def repl(m: re.Match) -> str:
            nonlocal found
            local = self._marker(m, s, words)
            found = found or bool(local)
            return f"[{', '.join(map(str, sorted(set(local))))}]" if local else ""

        out = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", _MARKER.sub(repl, s))).strip()
        return out if found else None

    def _marker(self, m: re.Match, s: str, words: set[str]) -> list[int]:
        """The new numbers of marker `m` of sentence `s` (`words`: its content terms)."""
        nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
        if not re.search(r"\w", _MARKER.sub("", s[: m.start()])):  # follows no statement
            self.dropped.extend(nums)
            return []
        # the clause the marker ends ("A [1], and B [2]."): its words pick the claim
        clause = set(tokens(_MARKER.split(s[: m.start()])[-1]))
        local = []
        for n in nums:
            cands = self.o.citations.get(n, [])
            best = None
            if len(clause) >= 2:
                best = _best_citation(clause, cands, self.o, self.min_overlap)
            best = best or _best_citation(words, cands, self.o, self.min_overlap)
            if best is None:
                self.dropped.append(n)
                continue
            if best not in self.cits:
                self.cits.append(best)
            local.append(self.cits.index(best) + 1)
        return local


def _best_citation(words: set[str], cands: list[Citation], o: export.Outline, min_overlap: float) -> Citation | None:
    """The citation whose claim (or quote) the sentence shares the most content terms with,
    when it shares enough."""
    best, best_score = None, 0.0
    for c in cands:
        behind = set(tokens(" ".join([*o.claims_of.get(c.id, []), c.quote])))
        common = len(words & behind)
        if behind and common >= max(1, min_overlap * min(len(words), len(behind))) and common > best_score:
            best, best_score = c, common
    return best
