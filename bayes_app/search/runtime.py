"""Process-wide handles: the configured embedder and the index client (collection ensured)."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING

from bayes_app.search import crosslang
from bayes_app.search.embeddings import Embedder, get_embedder
from bayes_app.settings import get_settings

if TYPE_CHECKING:
    from sqlmodel import Session

    from bayes_app.search.hybrid import SearchHit
    from bayes_app.search.index import IndexClient

_lock = threading.Lock()
RETRY_S = 20.0  # rides out a restart of the index process (a few seconds under `make run`)
_index: dict[str, IndexClient] = {}


def embedder() -> Embedder:
    return get_embedder(get_settings().embedding_model)


def collection_name(model_name: str) -> str:
    """One vector collection per embedding model: vectors of different models don't mix."""
    return "chunks_" + re.sub(r"[^a-z0-9]+", "_", model_name.lower()).strip("_")


def cross_collection_name(model_name: str) -> str:
    """The collection of non-English passages' multilingual vectors, beside ``model_name``'s."""
    return "x" + collection_name(model_name) + "__" + collection_name(crosslang.CROSS_MODEL)[len("chunks_") :]


def index() -> IndexClient:
    """The shared IndexClient for the configured Qdrant (embedded index process or server),
    with its cross-language collection."""
    settings = get_settings()
    emb = embedder()
    key = f"{settings.effective_qdrant_url}|{emb.name}"
    with _lock:
        if key not in _index:
            from bayes_app.search.index import IndexClient  # qdrant_client: loaded on first use

            client = IndexClient(
                settings.effective_qdrant_url,
                collection_name(emb.name),
                api_key=settings.effective_qdrant_api_key,
                retry_s=RETRY_S,
                cross_collection=cross_collection_name(emb.name),
            )
            client.ensure_collection(dim=emb.dim)
            _index[key] = client
        return _index[key]


def reset() -> None:
    """Forget cached clients (tests that switch settings)."""
    with _lock:
        for c in _index.values():
            c.close()
        _index.clear()


def search_library(
    db: Session,
    owner_id: str,
    query: str,
    k: int = 10,
    document_ids: list[str] | None = None,
    collection_ids: list[str] | None = None,
    include_roles: list[str] | None = None,
    all_roles: bool = False,
    keep_headings: bool = True,
) -> list[SearchHit]:
    """Hybrid search of one owner's library with this process's index and embedder; [] at
    once (no index call) when the owner has no documents yet. A collection scope includes the
    collection's Zotero sub-collections. ``keep_headings=False``: passages as a reader is shown
    them (:func:`bayes_app.search.hybrid.search`)."""
    from sqlmodel import select

    from bayes_app.models import Document
    from bayes_app.search.hybrid import search
    from bayes_app.zotero.scopes import with_subcollections

    if db.exec(select(Document.id).where(Document.owner_id == owner_id)).first() is None:
        return []
    # a Zotero collection's scope covers its sub-collections
    collection_ids = with_subcollections(db, owner_id, collection_ids)
    return search(
        db,
        index(),
        embedder(),
        owner_id,
        query,
        k,
        document_ids,
        collection_ids,
        include_roles,
        all_roles,
        keep_headings=keep_headings,
    )
