"""Zotero collections as scopes: a scope naming a Bayes collection that a Zotero collection
became also covers the Bayes collections of its Zotero sub-collections (at any depth).

Document membership follows Zotero on every sync (an item moved between collections in Zotero
changes its documents' collections), so scopes follow Zotero too."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bayes_app.models import ZoteroCollection, ZoteroLibrary


def with_subcollections(db: Session, owner_id: str, collection_ids: list[str] | None) -> list[str] | None:
    """`collection_ids` plus the collections of their Zotero sub-collections (order kept, no
    duplicates); None stays None."""
    if not collection_ids:
        return collection_ids
    rows = list(
        db.exec(
            select(ZoteroCollection)
            .join(ZoteroLibrary, col(ZoteroLibrary.id) == ZoteroCollection.library_id)
            .where(ZoteroLibrary.owner_id == owner_id, ZoteroCollection.trashed == False)
        )
    )
    if not rows:
        return collection_ids
    kids: dict[tuple[str, str], list[ZoteroCollection]] = {}
    for r in rows:
        if r.parent_key:
            kids.setdefault((r.library_id, r.parent_key), []).append(r)
    out = list(dict.fromkeys(collection_ids))
    seen = set(out)
    todo = [r for r in rows if r.collection_id in seen]
    visited: set[tuple[str, str]] = set()
    while todo:
        r = todo.pop()
        if (r.library_id, r.key) in visited:
            continue
        visited.add((r.library_id, r.key))
        for k in kids.get((r.library_id, r.key), []):
            if k.collection_id and k.collection_id not in seen:
                seen.add(k.collection_id)
                out.append(k.collection_id)
            todo.append(k)
    return out
