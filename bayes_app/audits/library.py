"""The library an audit reads: the owner's documents (or one collection of theirs, or one
shared with them) and the documents of collections shared with them; their passages from the
database, search through the index."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from sqlmodel import Session, col, select

from bayes_app.audits.check import Passage
from bayes_app.audits.judge import Embed, relevance
from bayes_app.audits.resolve import LibraryPaper
from bayes_app.errors import NotFound
from bayes_app.library.structure import QUOTABLE
from bayes_app.maps.sentences import split_sentences
from bayes_app.models import Chunk, Collection, CollectionMember, DocStatus, Document, DocumentCollection

MIN_WORDS = 5


def check_collection(db: Session, user_id: str, collection_id: str) -> None:
    """NotFound unless the collection is the user's or shared with them."""
    c = db.get(Collection, collection_id)
    shared = db.get(CollectionMember, (collection_id, user_id)) is not None
    if c is None or (c.owner_id != user_id and not shared):
        raise NotFound("collection")


class DbLibrary:
    """`check.Library` over the database and the index, for one user and scope."""

    def __init__(self, sessions: Callable[[], Session], user_id: str, collection_id: str | None, embed: Embed) -> None:
        self.sessions, self.user_id, self.embed = sessions, user_id, embed
        with sessions() as db:
            self._load(db, user_id, collection_id)
        self._passages: dict[str, list[Passage]] = {}

    def _load(self, db: Session, user_id: str, collection_id: str | None) -> None:
        # (owner, collection or None = the whole library) pairs the audit reads
        if collection_id:
            c = db.get(Collection, collection_id)
            self.scopes: list[tuple[str, str | None]] = [(c.owner_id if c else user_id, collection_id)]
        else:
            shared = db.exec(
                select(Collection.owner_id, Collection.id)
                .join(CollectionMember, col(CollectionMember.collection_id) == col(Collection.id))
                .where(CollectionMember.user_id == user_id, Collection.owner_id != user_id)
            ).all()
            self.scopes = [(user_id, None), *[(o, c) for o, c in shared]]
        self._docs: dict[str, tuple[LibraryPaper, str]] = {}
        for owner, cid in self.scopes:
            q = select(Document).where(Document.owner_id == owner, Document.status == DocStatus.INDEXED)
            if cid:
                q = q.join(DocumentCollection, col(DocumentCollection.document_id) == col(Document.id)).where(
                    DocumentCollection.collection_id == cid
                )
            for d in db.exec(q):
                paper = LibraryPaper(d.id, d.title or "", d.year, d.doi, list(d.authors or []), d.zotero_item_key)
                self._docs[d.id] = (paper, d.title or d.filename)

    def papers(self) -> list[LibraryPaper]:
        return [p for p, _ in self._docs.values()]

    def title(self, document_id: str) -> str:
        return self._docs[document_id][1] if document_id in self._docs else ""

    def passages(self, document_id: str) -> Sequence[Passage]:
        if document_id not in self._passages:
            with self.sessions() as db:
                chunks = db.exec(
                    select(Chunk.page, Chunk.text)
                    .where(Chunk.document_id == document_id, col(Chunk.role).in_(list(QUOTABLE)))
                    .order_by(col(Chunk.chunk_index))
                ).all()
            self._passages[document_id] = _sentences(document_id, chunks)
        return self._passages[document_id]

    def search(self, text: str, k: int) -> Sequence[Passage]:
        from bayes_app.search.runtime import search_library

        by_owner: dict[str, list[str | None]] = defaultdict(list)
        for owner, cid in self.scopes:
            by_owner[owner].append(cid)
        hits = []
        with self.sessions() as db:
            for owner, cids in by_owner.items():
                collections = None if None in cids else [c for c in cids if c]
                hits.extend(search_library(db, owner, text, k, collection_ids=collections))
        hits = [h for h in hits if h.document_id in self._docs]
        hits.sort(key=lambda h: -h.score)
        out = []
        for h in hits[:k]:  # each hit's sentence closest to the claim
            sents = _sentences(h.document_id, [(h.page, h.text)])
            if sents:
                scores = relevance(text, [s.text for s in sents], self.embed)
                out.append(sents[max(range(len(sents)), key=scores.__getitem__)])
        return out


def _sentences(document_id: str, chunks: Sequence[tuple[int, str]]) -> list[Passage]:
    seen: set[str] = set()
    out = []
    for page, text in chunks:
        for s in split_sentences(" ".join(text.split())):
            if len(s.split()) >= MIN_WORDS and s not in seen:
                seen.add(s)
                out.append(Passage(document_id, page, s))
    return out
