"""Citations on map nodes: attach a library passage, remove it, check support, accept a rewrite.

search_library(db, index, embedder, owner_id, query, k)  -> hits (see search.hybrid)
attach_citation(db, owner_id, map_id, node_id, chunk_id, quote=None)       -> citation
delete_citation(db, owner_id, map_id, citation_id)
check_support(db, owner_id, map_id, node_id)   -> [citation] scored against the node's wording
                                                  (the instant offline scorer; with a model the
                                                  `check_support` run kind judges instead)
support_problem(db, node) -> MapError | None     why a node's support can't be checked
set_support(db, map_id, citation_id, score, rewrite, agent) -> the citation, scored
accept_rewrite(db, owner_id, map_id, citation_id) -> node with the suggested wording
locate(db, chunk, quote) -> (page char_start, char_end) or None: the provenance check
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from bayes_app.library.chunking import embedding_text
from bayes_app.library.quotes import locate_quote, quote_in_text
from bayes_app.maps import service
from bayes_app.maps.access import actor
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.support import score_support
from bayes_app.models import Chunk, Citation, Document, MapNode, Origin, PageText
from bayes_app.sharing.documents import in_shared_collection
from bayes_app.sharing.map_documents import member_scope

MAX_QUOTE = 5_000


def wording(node: MapNode) -> str:
    """The text a node asserts: its title, or its body when the title is empty."""
    return node.title.strip() or node.body.strip()


def locate(db: Session, chunk: Chunk, quote: str) -> tuple[int, int] | None:
    """Page offsets of `quote` when it is in the chunk AND on the chunk's page (after
    normalisation, see library.quotes); None otherwise."""
    if not quote_in_text(chunk.text, quote):
        return _across_break(db, chunk, quote)
    page = db.get(PageText, (chunk.document_id, chunk.page))
    if page is None:
        return None
    # search within the chunk's span first (the same sentence may occur elsewhere on the page)
    span = locate_quote(page.text[chunk.char_start : chunk.char_end], quote)
    if span is not None:
        return chunk.char_start + span[0], chunk.char_start + span[1]
    return locate_quote(page.text, quote)


def _across_break(db: Session, chunk: Chunk, quote: str) -> tuple[int, int] | None:
    """Offsets on the chunk's page of a quote that runs on past a page or column break (the
    chunk's cut last sentence with its continuation, `library.continuation`); None otherwise."""
    from bayes_app.library.continuation import continued_chunk
    from bayes_app.library.highlight import find_quote_spans

    if not quote_in_text(continued_chunk(db, chunk), quote):
        return None
    pages = {
        p.page: p.text
        for p in (db.get(PageText, (chunk.document_id, n)) for n in (chunk.page, chunk.page + 1))
        if p is not None
    }
    spans = find_quote_spans(pages, chunk.page, quote)
    if not spans or spans[0][0] != chunk.page:
        return None
    return spans[0][1], spans[0][2]


def attach_citation(
    db: Session, owner_id: str, map_id: str, node_id: str, chunk_id: str, quote: str | None = None
) -> dict[str, Any]:
    """Cite a library passage (e.g. a search hit) on a node. `quote` must occur in the
    passage (default: the whole passage). Undoable."""
    node = service.get_node(db, owner_id, map_id, node_id)
    chunk = db.get(Chunk, chunk_id)
    # the map owner's passage, or one of a collection shared with them
    if chunk is None or (chunk.owner_id != owner_id and not in_shared_collection(db, owner_id, chunk.document_id)):
        raise MapNotFound("passage")
    who = actor(owner_id)
    if who != owner_id and chunk.document_id not in member_scope(db, service.get_map(db, owner_id, map_id)):
        raise MapNotFound("passage")  # a member cites only what the owner made readable to the map
    quote = " ".join((quote or embedding_text(chunk.text)).split())
    if not quote:
        raise MapError("bad_quote", "The quote is empty.")
    if len(quote) > MAX_QUOTE:
        raise MapError("bad_quote", f"The quote is longer than {MAX_QUOTE} characters.")
    span = locate(db, chunk, quote)
    if span is None:
        raise MapError("quote_not_found", "The quote does not occur in that passage.")
    c = Citation(
        map_id=map_id,
        node_id=node.id,
        document_id=chunk.document_id,
        chunk_id=chunk.id,
        page=chunk.page,
        quote=quote,
        char_start=span[0],
        char_end=span[1],
        origin=Origin.USER,
    )
    db.add(c)
    db.flush()
    u = service._Undo()
    u.created("citations", c.id)
    service._commit_edit(db, map_id, "attach_citation", u)
    return service.citation_view(c, db.get(Document, c.document_id))


def _citation(db: Session, owner_id: str, map_id: str, citation_id: str) -> Citation:
    service.get_map(db, owner_id, map_id)
    c = db.get(Citation, citation_id, populate_existing=True)
    if c is None or c.map_id != map_id:
        raise MapNotFound("citation")
    return c


def delete_citation(db: Session, owner_id: str, map_id: str, citation_id: str) -> None:
    from sqlalchemy import delete
    from sqlmodel import col

    c = _citation(db, owner_id, map_id, citation_id)
    u = service._Undo()
    u.before("citations", c)
    db.exec(delete(Citation).where(col(Citation.id) == c.id))
    service._commit_edit(db, map_id, "delete_citation", u)


def support_problem(db: Session, node: MapNode) -> MapError | None:
    if not wording(node):
        return MapError("empty_node", "Write the node's wording first.")
    if db.exec(select(Citation.id).where(Citation.node_id == node.id)).first() is None:
        return MapError("no_citations", "The node has no citations to check against.")
    return None


def set_support(
    db: Session, map_id: str, citation_id: str, score: float, rewrite: str | None, agent: str = "critic"
) -> Citation | None:
    """Store a judged support score (label from the score) on a citation; None when it is gone."""
    from bayes_app.maps.support import label_for

    c = db.get(Citation, citation_id, populate_existing=True)
    if c is None or c.map_id != map_id:
        return None
    c.support_score, c.support_label = round(float(score), 3), label_for(float(score))
    c.suggested_rewrite = rewrite or None
    c.agent = agent
    db.add(c)
    service._touch(db, map_id)
    db.commit()
    return c


def check_support(db: Session, owner_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """Score the node's wording against each of its citations (label, score, rewrite)."""
    node = service.get_node(db, owner_id, map_id, node_id)
    problem = support_problem(db, node)
    if problem is not None:
        raise problem
    text = wording(node)
    cits = list(db.exec(select(Citation).where(Citation.node_id == node.id)))
    for c in cits:
        r = score_support(text, c.quote)
        c.support_score, c.support_label, c.suggested_rewrite = r.score, r.label, r.rewrite
        db.add(c)
    service._touch(db, map_id)
    db.commit()
    docs = {d.id: d for d in db.exec(select(Document).where(col(Document.id).in_({c.document_id for c in cits})))}
    return [service.citation_view(c, docs.get(c.document_id or "")) for c in cits]


def accept_rewrite(db: Session, owner_id: str, map_id: str, citation_id: str) -> dict[str, Any]:
    """Replace the node's wording with the citation's suggested rewrite and re-score (undoable)."""
    c = _citation(db, owner_id, map_id, citation_id)
    if not c.suggested_rewrite:
        raise MapError("no_rewrite", "There is no suggested rewrite for this citation.")
    node = service.get_node(db, owner_id, map_id, c.node_id)
    u = service._Undo()
    u.before("nodes", node)
    u.before("citations", c)
    if node.title.strip() or not node.body.strip():
        node.title = c.suggested_rewrite
    else:
        node.body = c.suggested_rewrite
    r = score_support(wording(node), c.quote)
    c.support_score, c.support_label, c.suggested_rewrite = r.score, r.label, r.rewrite
    db.add(node)
    db.add(c)
    service._commit_edit(db, map_id, "accept_rewrite", u)
    return service.node_view(node, list(db.exec(select(Citation).where(Citation.node_id == node.id))))
