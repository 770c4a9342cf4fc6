"""Checks of a map's grouping and synthesis (tests/integration/test_map_grouping.py and
benchmarks/map_quality.py): repeated theme names, themes under a node of their own name, empty
themes, the synthesis's length and its markers, and the export's references and escaping."""

from __future__ import annotations

import re

MARKER = re.compile(r"(?<!\\)\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def _norm(title: str) -> str:
    from bayes_app.agents.extractive import stem

    return " ".join(stem(w) for w in re.findall(r"[A-Za-z0-9]+", title.lower()))


def grouping(nodes: list) -> dict:
    """Counts over a map's nodes (MapNode rows or node views with kind/title/parent_id/id)."""
    get = (lambda n, k: n[k]) if nodes and isinstance(nodes[0], dict) else (lambda n, k: getattr(n, k))
    by_id = {get(n, "id"): n for n in nodes}
    heads = [n for n in nodes if get(n, "kind") in ("theme", "chapter")]
    names = [_norm(get(n, "title")) for n in heads]
    repeated = len(names) - len(set(names))
    nested_same = 0
    for n in heads:
        cur = by_id.get(get(n, "parent_id"))
        while cur is not None:
            if _norm(get(cur, "title")) == _norm(get(n, "title")):
                nested_same += 1
                break
            cur = by_id.get(get(cur, "parent_id"))
    parents = {get(n, "parent_id") for n in nodes}
    empty = sum(1 for n in heads if get(n, "id") not in parents)
    claims = [n for n in nodes if get(n, "kind") in ("claim", "counterpoint")]
    return {"themes": len(heads), "repeated_names": repeated, "nested_same_name": nested_same,
            "empty_themes": empty, "claims": len(claims)}


def synthesis_body(body: str, n_citations: int) -> dict:
    """Words of a synthesis note and its markers that point at none of its citations."""
    words = len(MARKER.sub(" ", body).split())
    bad = 0
    for m in MARKER.finditer(body):
        nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
        bad += sum(1 for k in nums if not 1 <= k <= n_citations)
    return {"words": words, "bad_markers": bad}


def export_markdown(md: str, synthesis_title: str | None = None) -> dict:
    """Markers that follow no statement (on a heading, at a line start or right after another
    sentence's end), double escaping, reference entries repeating a paper, synthesis shown twice."""
    body, _, refs = md.partition("## References")
    orphan = 0
    for line in body.splitlines():
        if line.startswith("#"):
            orphan += len(MARKER.findall(line))
            continue
        for m in MARKER.finditer(line):
            before = MARKER.sub("", line[:m.start()]).rstrip()
            if not before or before.endswith((".", "!", "?", ":")):
                orphan += 1
    titles = [re.sub(r",? (?:p|pp)\. [\d, ]+.*$", "", ln.split(". ", 1)[1]) for ln in refs.splitlines()
              if re.match(r"^\d+\. ", ln)]
    return {"orphan_markers": orphan, "double_escaped": md.count("\\\\\\[") + md.count("\\\\["),
            "repeated_references": len(titles) - len(set(titles)),
            "synthesis_shown": md.count(synthesis_title) if synthesis_title else 0}
