"""The update run kind: what newly arrived papers would add to a map, as a proposal.

Input {"mindmap_id", "document_ids"}. For each paper, its passages closest to the map's question
and themes are read by the researcher (offline: extractive) and checked by the critic like any
claim; one critic call judges the new claims against the map's claims (a contradiction makes a
counterpoint); each other claim is placed top-down in the tree (maps.living.place, Co-STORM
style), and claims that fit no theme are grouped into new themes named by the noun phrase they
share (agents.naming; a lone claim names its own theme). The run
writes only the proposal (maps.updates): the map changes when the user accepts it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from sqlmodel import col, select

from bayes_app.agents import critic, researcher, themes
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.agents.kinds.common import start as _start
from bayes_app.agents.retrieval import Passage, prompt_text
from bayes_app.maps import living, service
from bayes_app.maps import sentences as sent
from bayes_app.maps.updates import create_update_proposal
from bayes_app.models import Chunk, DocStatus, Document, MapNode, NodeKind
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext
from bayes_app.runs.kinds import RunKind

PASSAGES_PER_PAPER = 6
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)


def _unit_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def paper_vectors(document_id: str, texts: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """The chunk ids and unit vectors of a paper's passages: from the index, else embedded now
    (`texts`: chunk id → text, for the ones the index lacks)."""
    from bayes_app.search import runtime

    stored = runtime.index().document_vectors(document_id)
    ids = [c for c in texts if c in stored]
    missing = [c for c in texts if c not in stored]
    vecs = [np.asarray(stored[c], dtype=np.float32) for c in ids]
    if missing:
        vecs.extend(runtime.embedder().embed_passages([texts[c] for c in missing]))
        ids.extend(missing)
    return ids, (_unit_rows(np.stack(vecs)) if vecs else np.zeros((0, 1), dtype=np.float32))


def embed_texts(texts: list[str]) -> np.ndarray:
    """Map texts (question, theme titles) as search queries."""
    from bayes_app.search import runtime

    e = runtime.embedder()
    return _unit_rows(np.stack([e.embed_query(t) for t in texts])) if texts else np.zeros((0, 1))


def _papers(ctx: RunContext, ids: list[str]) -> list[tuple[Document, list[Chunk]]]:
    with ctx.sessions() as db:
        docs = db.exec(
            select(Document).where(
                col(Document.id).in_(ids), Document.owner_id == ctx.run.owner_id, Document.status == DocStatus.INDEXED
            )
        ).all()
        return [
            (d, list(db.exec(select(Chunk).where(Chunk.document_id == d.id).order_by(col(Chunk.chunk_index)))))
            for d in docs
        ]


def _passages(doc: Document, chunks: list[Chunk], text_vecs: np.ndarray) -> list[Passage]:
    """The paper's passages that may hold claims, closest to the map first (at most PASSAGES_PER_PAPER)."""
    usable = {c.id: c for c in chunks if sent.role_allows_claims(c.role)}
    if not usable:
        return []
    ids, vecs = paper_vectors(doc.id, {c.id: c.text for c in usable.values()})
    scores = living.passage_scores(vecs, text_vecs)
    best = [ids[i] for i in np.argsort(-scores)[:PASSAGES_PER_PAPER]]
    return [
        Passage(
            k, c.id, doc.id, doc.title, list(doc.authors or []), doc.year, c.page, prompt_text(c.text), c.role, c.text
        )
        for k, c in enumerate((usable[i] for i in best), 1)
    ]


def _item(checked: critic.Checked, doc: Document) -> dict[str, Any]:
    cit = {k: v for k, v in checked.citation.items() if k != "region"}
    return {
        "text": checked.claim.text,
        "document_id": doc.id,
        "document_title": doc.title,
        "year": doc.year,
        "page": cit["page"],
        "quote": cit["quote"],
        "citation": {**cit, "source_title": doc.title[:1000], "agent": "update"},
        "confidence": checked.support,
    }


def _place_all(items: list[dict[str, Any]], nodes: list[MapNode], root: MapNode) -> None:
    """Placement of the items that are not counterpoints: top-down insert, or a new theme
    (themes named by key phrases of their claims, distinct from the map's)."""
    placing = [it for it in items if it.get("action") != "counter"]
    if not placing:
        return
    wording = [n for n in nodes if n.title.strip() and n.parent_id is not None]
    vecs = embed_texts([n.title for n in wording] + [it["text"] for it in placing])
    vec_of = {n.id: vecs[i] for i, n in enumerate(wording)}
    tree = living.build_tree(nodes, vec_of)
    new = []
    for k, it in enumerate(placing):
        pl = living.place(vecs[len(wording) + k], root.id, tree)
        it.update(action=pl.action, parent_id=pl.parent_id, parent_title=pl.parent_title, path=list(pl.path))
        if pl.action == "create":
            new.append(it)
    taken = [n.title for n in nodes if n.kind in living.BRANCH_KINDS]
    claims = [n.title for n in nodes if n.kind in CLAIM_KINDS]
    for title, idx in themes.group([it["text"] for it in new], taken=taken, others=claims):
        for i in idx:
            new[i]["theme_title"] = title


async def update_map(ctx: RunContext) -> None:
    """Propose where the new papers' claims fit in the map (see the module docstring)."""
    loaded, _w = await _start(ctx)
    m, root, nodes = loaded["map"], loaded["root"], loaded["nodes"]
    papers = await asyncio.to_thread(_papers, ctx, list(ctx.run.input.get("document_ids") or []))
    texts = living.map_texts(nodes)
    text_vecs = await asyncio.to_thread(embed_texts, texts)
    existing = [n for n in nodes if n.kind in CLAIM_KINDS and n.title.strip()]
    question = root.title or m.title
    items: list[dict[str, Any]] = []
    accepted: list[tuple[critic.Checked, Document]] = []
    for doc, chunks in papers:
        passages = await asyncio.to_thread(_passages, doc, chunks, text_vecs)
        ctx.emit("agent", {"role": "researcher", "document_id": doc.id, "passages": len(passages)})
        claims = await researcher.research(
            ctx, question, question, passages, "update", avoid=[n.title for n in existing]
        )
        verdict = await critic.verify_async(ctx, claims) if claims else critic.Verdict()
        accepted.extend((c, doc) for c in verdict.accepted)
    pairs = await critic.judge(ctx, [c for c, _ in accepted], [n.title for n in existing])
    target_of = {b - len(existing): existing[a] for a, b in pairs if a < len(existing) <= b}
    for k, (c, doc) in enumerate(accepted):
        it = _item(c, doc)
        if (t := target_of.get(k)) is not None:
            it.update(action="counter", target_id=t.id, target_title=t.title, parent_id=t.parent_id)
        items.append(it)
    await asyncio.to_thread(_place_all, items, nodes, root)
    documents = [
        {"id": d.id, "title": d.title, "year": d.year, "arrived_at": d.updated_at.isoformat()} for d, _ in papers
    ]

    def write() -> Any:
        with ctx.sessions() as db:
            return create_update_proposal(db, m.id, documents, items, ctx.run.id)

    try:
        p = await asyncio.to_thread(write)
    except Exception:  # noqa: BLE001 - the map went away under us
        ctx.check_abort()
        raise RunAborted(lc.RESOURCE_DELETED) from None
    ctx.emit("proposal", service.proposal_view(p))
    ctx.emit("agent", {"role": "writer", "done": True, "proposed": len(items), "papers": len(papers)})


KIND = RunKind(
    name="update_map",
    label="Update from new papers",
    entry=update_map,
    resource=RESOURCE,
    whole_map=True,
    prompt_budget=12_000,  # a batch: per paper ≤ 6 passages to the researcher, one critic call
    role="researcher",
)
