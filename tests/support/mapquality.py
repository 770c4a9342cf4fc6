"""Measuring a map's claims (benchmarks/map_quality.py and tests/integration/test_map_quality.py):
where its quotes come from (hand-labelled regions of the bundled papers, chunk roles when
known), duplicates, empty themes, word-pair titles, `contradicts` links; and a scripted model
that quotes naively, to show what the pipeline keeps out."""

from __future__ import annotations

import json
import re


def naive_model(body: dict) -> object:
    """A sloppy model: plans by splitting the question, quotes each passage's first sentence."""
    from bayes_app.llm.offline import parse_passages, split_sentences
    from tests.support.fake_openai import Script

    msgs = body.get("messages") or []
    user = str(msgs[-1].get("content") if msgs else "")
    if "ROLE: planner" in user:
        q = re.search(r"Question: (.*)", user)
        words = re.findall(r"[A-Za-z]{5,}", q.group(1) if q else "")[:4]
        return Script.reply(json.dumps({"aspects": [{"title": w.capitalize(), "query": w} for w in words]}))
    if "ROLE: researcher" in user or "ROLE: counter" in user:
        claims = []
        for p in parse_passages(user):
            first = (split_sentences(p.text) or [p.text])[0][:300]
            claims.append({"text": first, "quote": first, "passage": p.n})
        if claims:
            claims.append(dict(claims[0]))  # the same claim twice
        return Script.reply(json.dumps({"claims": claims[:7]}))
    if "ROLE: critic" in user:
        return Script.reply("I could not decide.")  # not JSON: the offline detector is the fallback
    return None


# ---- measuring a map ----------------------------------------------------------------------------------
def measure_map(lab, map_id: str, embed) -> dict:
    from sqlmodel import select

    from bayes_app.models import Chunk, Citation, Document, MapNode, NodeRelation, PageText
    from bayes_app.search.sparse import tokens
    from tests.support.paper_labels import region_of

    with lab.sessions() as db:
        nodes = db.exec(select(MapNode).where(MapNode.map_id == map_id)).all()
        cits = db.exec(select(Citation).where(Citation.map_id == map_id)).all()
        rels = db.exec(select(NodeRelation).where(NodeRelation.map_id == map_id)).all()
        docs = {d.id: d for d in db.exec(select(Document))}
        pages = {(p.document_id, p.page): p.text for p in db.exec(select(PageText))}
        roles = {c.id: getattr(c, "role", None) for c in db.exec(select(Chunk))}
        spans = {(p.document_id, p.page): getattr(p, "spans", None) or [] for p in db.exec(select(PageText))}
    claims = [n for n in nodes if n.kind in ("claim", "counterpoint")]
    claim_ids = {n.id for n in claims}
    quotes = [c for c in cits if c.node_id in claim_ids]
    bad = []
    for c in quotes:
        d = docs.get(c.document_id)
        where = (
            region_of(d.filename, c.page, pages[(c.document_id, c.page)], c.char_start, c.char_end, c.quote)
            if d
            else None
        )
        role = roles.get(c.chunk_id)
        # the roles of the page spans the quote covers (structure-aware ingestion), when stored
        span_roles = {
            str(x[2]) for x in spans.get((c.document_id, c.page), []) if x[0] < c.char_end and c.char_start < x[1]
        }
        off_role = (role not in (None, "body", "caption")) or bool(span_roles - {"body", "caption"})
        if where or off_role:
            bad.append((where or role or ",".join(sorted(span_roles)), c.quote[:90]))
    texts = [n.title for n in claims]
    dups = 0
    if texts:
        vecs = embed(texts)
        for i in range(len(texts)):
            ti = set(tokens(texts[i]))
            for j in range(i):
                tj = set(tokens(texts[j]))
                jac = len(ti & tj) / max(1, len(ti | tj))
                same_nums = set(re.findall(r"\d+(?:\.\d+)?", texts[i])) == set(re.findall(r"\d+(?:\.\d+)?", texts[j]))
                if jac >= 0.8 or (float(vecs[i] @ vecs[j]) >= 0.9 and same_nums):
                    dups += 1
                    break
    kids = {n.parent_id for n in nodes}
    themes = [n for n in nodes if n.kind == "theme"]
    return {
        "claims": len(claims),
        "quotes": len(quotes),
        "non_body": len(bad),
        "bad_examples": bad[:5],
        "duplicates": dups,
        "themes": len(themes),
        "empty_themes": sum(t.id not in kids for t in themes),
        "pair_titles": sum(bool(re.fullmatch(r"\w+ and \w+", t.title, re.I)) for t in themes),
        "contradicts": len(rels),
        "titles": [t.title for t in themes],
    }
