""" "Add my Zotero highlights" on a map: one claim per text highlight, the highlight's comment as
the node's note, cited at the highlight's page and rectangles (origin `zotero`), placed under the
map's theme it fits best or under a theme "Your highlights". One undoable edit; highlights
already on the map are not added twice.

    add_highlights(db, owner_id, map_id, document_ids=None) -> {"added", "skipped", "themes"}
"""

from __future__ import annotations

import re

from sqlmodel import Session, col, select

from bayes_app.library.quotes import locate_quote_loose, quote_in_text
from bayes_app.maps import service as maps
from bayes_app.maps.edits import MAX_BODY, MAX_NODE_TITLE, _insert
from bayes_app.maps.undo import _commit_edit, _Undo
from bayes_app.models import Chunk, Citation, NodeKind, Origin, PageText
from bayes_app.zotero import annotations as zann

FALLBACK_THEME = "Your highlights"
MAX_PER_ACTION = 300
FIT_THRESHOLD = 0.25
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset(
    "the and for with that this from are was were which these those their have has not but "
    "can may into than then there also such its our they been more most other some".split()
)


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def best_theme(text: str, themes: dict[str, set[str]]) -> str | None:
    """The theme (id) whose words cover most of the highlight's words, if enough do."""
    words = _terms(text)
    if not words:
        return None
    best, score = None, 0.0
    for tid, tw in themes.items():
        s = len(words & tw) / len(words)
        if s > score:
            best, score = tid, s
    return best if score >= FIT_THRESHOLD else None


def _chunk_for(db: Session, document_id: str, page: int, text: str) -> tuple[str | None, int | None, int | None]:
    """The passage and page offsets of the highlighted text, when the text layer has it."""
    pt = db.get(PageText, (document_id, page))
    span = locate_quote_loose(pt.text, text) if pt is not None else None
    chunks = list(
        db.exec(
            select(Chunk).where(Chunk.document_id == document_id, Chunk.page == page).order_by(col(Chunk.chunk_index))
        )
    )
    chunk = next((c for c in chunks if quote_in_text(c.text, text)), chunks[0] if chunks else None)
    return (chunk.id if chunk else None, *(span or (None, None)))


def add_highlights(db: Session, owner_id: str, map_id: str, document_ids: list[str] | None = None) -> dict:
    maps.get_map(db, owner_id, map_id)  # MapNotFound for another owner's map
    root = maps.root_of(db, map_id)
    nodes = maps._nodes(db, map_id)
    kids = maps.children_index(nodes)
    themes = {
        n.id: _terms(n.title + " " + n.body + " " + " ".join(k.title for k in kids.get(n.id, [])))
        for n in nodes
        if n.kind in (NodeKind.THEME, NodeKind.CHAPTER) and n.title != FALLBACK_THEME
    }
    have = {
        (c.region or {}).get("annotation_key")
        for c in db.exec(select(Citation).where(Citation.map_id == map_id, Citation.origin == Origin.ZOTERO))
    }
    fallback = next((n for n in kids.get(root.id, []) if n.kind == NodeKind.THEME and n.title == FALLBACK_THEME), None)
    by_id = {n.id: n for n in nodes}
    u = _Undo()
    added, skipped = 0, 0
    used_themes: dict[str, int] = {}
    for doc, a in zann.highlights(db, owner_id, document_ids):
        if a.key in have:
            skipped += 1
            continue
        if added >= MAX_PER_ACTION:
            skipped += 1
            continue
        tid = best_theme(a.text, themes)
        if tid is None:
            if fallback is None:
                fallback = _insert(
                    db, map_id, root, NodeKind.THEME, FALLBACK_THEME, "", None, u, created_by=Origin.ZOTERO
                )
            parent = fallback
        else:
            parent = by_id[tid]
        title = " ".join(a.text.split())[:MAX_NODE_TITLE]
        node = _insert(
            db, map_id, parent, NodeKind.CLAIM, title, a.comment.strip()[:MAX_BODY], None, u, created_by=Origin.ZOTERO
        )
        chunk_id, start, end = _chunk_for(db, doc.id, a.page, a.text)
        cit = Citation(
            map_id=map_id,
            node_id=node.id,
            document_id=doc.id,
            chunk_id=chunk_id,
            page=a.page,
            quote=a.text,
            char_start=start,
            char_end=end,
            origin=Origin.ZOTERO,
            agent="zotero",
            region={"page_index": a.page_index, "rects": a.rects, "annotation_key": a.key, "color": a.color},
        )
        db.add(cit)
        db.flush()
        u.created("citations", cit.id)
        have.add(a.key)
        added += 1
        used_themes[parent.title] = used_themes.get(parent.title, 0) + 1
    if added:
        _commit_edit(db, map_id, "add_zotero_highlights", u)
    return {"added": added, "skipped": skipped, "themes": used_themes}
