"""Checks of a map's grouping and synthesis (tests/integration/test_map_grouping.py and
benchmarks/map_quality.py): repeated theme names, themes under a node of their own name, empty
themes, theme names against their claims (and the synthesis's headings), the synthesis's length
and its markers, and the export's references and escaping. Independent of the app's own naming
code (it runs on older commits too, for a benchmark's baseline)."""

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
    return {
        "themes": len(heads),
        "repeated_names": repeated,
        "nested_same_name": nested_same,
        "empty_themes": empty,
        "claims": len(claims),
    }


_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'’][A-Za-z0-9]+)*")
# words that leave a name dangling at its start or end: determiners, pronouns, wh-words,
# prepositions, conjunctions, adverbs of time and the like ("Understand why", "Predictions due")
_DANGLING = frozenset(
    """the a an this these those that which what why how when where who whom whose now then thus also
of to in on at by for from with into about as than due and or but not no tell tells predict understand is are
was were be been has have had do does can could may might will would should must it its their our we they""".split()
)


def _has_word(word: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.I))


def name_checks(named: list[tuple[str, list[str]]]) -> dict:
    """Theme names against their claims (`named`: (name, its claims' texts)): names whose every
    word is in two of the claims (in the one, for a single claim), absent from every claim as a
    phrase, dangling (a function word or verb at either end), of one word, generic ("Other
    findings", or one common word)."""
    out = {"names": 0, "held": 0, "absent": 0, "dangling": 0, "one_word": 0, "generic": 0, "examples": []}
    for title, claims in named:
        words = _NAME_WORD.findall(title)
        if not claims or not words:
            continue
        out["names"] += 1
        need = min(2, len(claims))
        held = all(sum(_has_word(w, c) for c in claims) >= need for w in words)
        phrase = " ".join(title.lower().split())
        absent = not any(phrase in " ".join(c.lower().split()) for c in claims)
        dangling = words[0].lower() in _DANGLING or words[-1].lower() in _DANGLING
        one = len(words) == 1
        generic = title.lower().startswith("other findings") or (one and not re.search(r"[A-Z].*[A-Z]|\d", title[1:]))
        out["held"] += held
        out["absent"] += absent
        out["dangling"] += dangling
        out["one_word"] += one
        out["generic"] += generic
        if not held or absent or dangling or generic:
            out["examples"].append(title)
    return out


def theme_claims(nodes: list) -> list[tuple[str, list[str]]]:
    """(name, claim texts) of each theme with claims directly under it (chapters' names are
    "Chapter k: …" and not checked)."""
    get = (lambda n, k: n[k]) if nodes and isinstance(nodes[0], dict) else (lambda n, k: getattr(n, k))
    kids: dict[str, list[str]] = {}
    for n in nodes:
        if get(n, "kind") in ("claim", "counterpoint") and get(n, "parent_id"):
            kids.setdefault(get(n, "parent_id"), []).append(get(n, "title"))
    return [(get(n, "title"), kids[get(n, "id")]) for n in nodes if get(n, "kind") == "theme" and get(n, "id") in kids]


def synthesis_headings(body: str, nodes: list) -> list[tuple[str, list[str]]]:
    """(heading, the claims of the theme its paragraph quotes) for each paragraph of an offline
    synthesis ("Heading: claim [k]. …") after the opening line."""
    by_parent: dict[str, list[str]] = {}
    parent_of: dict[str, str] = {}
    for n in nodes:
        if n.kind in ("claim", "counterpoint") and n.parent_id:
            by_parent.setdefault(n.parent_id, []).append(n.title)
            parent_of[" ".join(n.title.split())[:60].lower()] = n.parent_id
    out = []
    for para in body.split("\n\n")[1:]:
        head, sep, rest = para.partition(": ")
        if not sep:
            continue
        flat = " ".join(rest.replace("\\[", "[").replace("\\]", "]").split()).lower()
        parent = next((p for key, p in parent_of.items() if key in flat), None)
        if parent is not None:
            out.append((head, by_parent[parent]))
    return out


def markers_off_quote(body: str, quotes: list[str]) -> int:
    """Markers [k] of a synthesis whose k-th citation's quote (`quotes`, in the note's citation
    order) does not hold the sentence the marker ends (most of its words): a marker pointing at
    another passage than the one the sentence was taken from."""
    off = 0
    for para in body.split("\n\n"):
        start = 0
        for m in MARKER.finditer(para):
            sentence = para[start : m.start()].split(": ", 1)[-1]
            start = m.end()
            words = {w.lower() for w in _NAME_WORD.findall(sentence) if len(w) > 3}
            for k in (int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))):
                quote = {w.lower() for w in _NAME_WORD.findall(quotes[k - 1])} if 0 < k <= len(quotes) else set()
                if words and len(words & quote) < 0.8 * len(words):
                    off += 1
    return off


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
            before = MARKER.sub("", line[: m.start()]).rstrip()
            if not before or before.endswith((".", "!", "?", ":")):
                orphan += 1
    titles = [
        re.sub(r",? (?:p|pp)\. [\d, ]+.*$", "", ln.split(". ", 1)[1])
        for ln in refs.splitlines()
        if re.match(r"^\d+\. ", ln)
    ]
    return {
        "orphan_markers": orphan,
        "double_escaped": md.count("\\\\\\[") + md.count("\\\\["),
        "repeated_references": len(titles) - len(set(titles)),
        "synthesis_shown": md.count(synthesis_title) if synthesis_title else 0,
    }


def run_checks(lab, map_id: str, provider_factory) -> dict:
    """After a build: Expand the first theme, Restructure (and accept it), Synthesize; the
    grouping after each step, the proposal's balance, the synthesis and the export."""
    from sqlmodel import select

    from bayes_app.maps import export, service
    from bayes_app.models import Citation, MapNode

    def nodes() -> list:
        with lab.sessions() as db:
            return list(db.exec(select(MapNode).where(MapNode.map_id == map_id)))

    out: dict = {}

    def worst(step: str, g: dict) -> None:
        for k in ("repeated_names", "nested_same_name", "empty_themes"):
            out[k] = max(out.get(k, 0), g[k])
        out[f"{step}_grouping"] = g

    worst("build", grouping(nodes()))
    out["names_build"] = name_checks(theme_claims(nodes()))
    themes = [n for n in nodes() if n.kind == "theme"]
    if themes:
        lab.run("expand", map_id, provider_factory, node_id=themes[0].id)
        worst("expand", grouping(nodes()))
        under = {themes[0].id}
        for n in sorted(nodes(), key=lambda n: n.created_at):  # Expand's sub-themes and theirs
            if n.kind == "theme" and n.parent_id in under:
                under.add(n.id)
        out["names_expand"] = name_checks(
            [x for x in theme_claims(nodes()) if x[0] in {n.title for n in nodes() if n.id in under}]
        )
    claims_before = grouping(nodes())["claims"]
    _, evs = lab.run("restructure", map_id, provider_factory)
    props = [e.data for e in evs if e.type == "proposal"]
    if props:
        groups = props[0]["payload"]["groups"]
        sizes = [len(g["node_ids"]) for g in groups]
        out["groups"], out["largest_share"] = len(sizes), max(sizes) / max(1, claims_before)
        with lab.sessions() as db:
            service.accept_proposal(db, lab.user_id, map_id, props[0]["id"])
        g = grouping(nodes())
        out["restructure_empty"], out["restructure_repeated"] = g["empty_themes"], g["repeated_names"]
        out["restructure_claims_lost"] = claims_before - g["claims"]
        out["names_restructure"] = name_checks(theme_claims(nodes()))
        worst("accept", g)
    lab.run("synthesize", map_id, provider_factory)
    with lab.sessions() as db:
        notes = [
            n for n in db.exec(select(MapNode).where(MapNode.map_id == map_id)) if n.title.startswith("Synthesis:")
        ]
        if notes:
            rows = db.exec(select(Citation).where(Citation.node_id == notes[0].id)).all()
            n_cits = len(rows)
            out.update({f"synthesis_{k}": v for k, v in synthesis_body(notes[0].body, n_cits).items()})
            out["synthesis_words_strict"] = len(notes[0].body.split())  # markers counted too
            quotes = [c.quote for c in sorted(rows, key=lambda c: c.created_at)]
            out["synthesis_off_quote"] = markers_off_quote(notes[0].body, quotes)
            out["names_synthesis"] = name_checks(synthesis_headings(notes[0].body, nodes()))
        md = export.markdown(db, lab.user_id, map_id)
    out.update(export_markdown(md, notes[0].title if notes else None))
    return out
