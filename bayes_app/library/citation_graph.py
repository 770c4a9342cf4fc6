"""The citation graph of one user's library: which documents' reference lists name which
other documents (``DocumentCitation`` rows), and the papers the library cites but lacks.

Links are rebuilt per document, incrementally: when a document is indexed or its metadata
changes (:func:`update_document`) its own references are matched against the library and the
other documents' unmatched references are matched against it; a removed document's links go
with it (foreign keys cascade, and :func:`forget_document` for the explicit delete path).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel
from sqlalchemy import ColumnElement, and_, or_
from sqlmodel import Session, col, delete, func, select

from bayes_app.library.citation_match import Match, Paper, PaperIndex, normalize_title, reference_key
from bayes_app.models import DocStatus, Document, DocumentCitation, DocumentCollection, DocumentReference

VERSION = 1  # bump when matching changes: documents linked by an older version are re-linked
MISSING_MIN_CITERS = 2
MISSING_LIMIT = 50


class LinkedPaper(BaseModel):
    """A library document on the other end of a citation."""

    document_id: str
    title: str
    authors: list[str]
    year: int | None
    positions: list[int]  # the reference positions in the citing document's list
    how: str  # doi | title | fuzzy (the strongest of the positions)


class DocumentCitations(BaseModel):
    document_id: str
    cites: list[LinkedPaper]
    cited_by: list[LinkedPaper]


class MissingPaper(BaseModel):
    """A paper cited by several library documents that is not in the library."""

    title: str | None
    authors: list[str]
    year: int | None
    doi: str | None
    venue: str | None
    cited_by_count: int
    cited_by: list[str]  # citing document ids


def _paper(doc: Document) -> Paper:
    return Paper(id=doc.id, title=doc.title or "", year=doc.year, doi=doc.doi)


def library_index(db: Session, owner_id: str) -> PaperIndex:
    """Every document of the owner, indexed for matching."""
    rows = db.exec(
        select(Document.id, Document.title, Document.year, Document.doi).where(Document.owner_id == owner_id)
    )
    return PaperIndex(Paper(id=i, title=t or "", year=y, doi=d) for i, t, y, d in rows)


def _link(owner_id: str, ref: DocumentReference, m: Match) -> DocumentCitation:
    return DocumentCitation(
        citing_id=ref.document_id,
        position=ref.position,
        cited_id=m.document_id,
        owner_id=owner_id,
        how=m.how,
        score=m.score,
    )


def _link_outgoing(db: Session, owner_id: str, document_id: str, index: PaperIndex) -> int:
    db.exec(delete(DocumentCitation).where(col(DocumentCitation.citing_id) == document_id))
    refs = db.exec(select(DocumentReference).where(DocumentReference.document_id == document_id)).all()
    links = [_link(owner_id, r, m) for r in refs if (m := index.match(r.title, r.year, r.doi, exclude=document_id))]
    db.add_all(links)
    return len(links)


def _link_incoming(db: Session, owner_id: str, doc: Document) -> int:
    """Match the other documents' references that are unmatched, or only fuzzily matched,
    against ``doc`` alone (a better match replaces a fuzzy one)."""
    db.exec(delete(DocumentCitation).where(col(DocumentCitation.cited_id) == doc.id))
    if not (doc.title or doc.doi):
        return 0
    one = PaperIndex([_paper(doc)])
    year_ok: ColumnElement[bool] | Literal[True] = (
        or_(col(DocumentReference.year).is_(None), col(DocumentReference.year).between(doc.year - 1, doc.year + 1))
        if doc.year
        else True
    )
    q = (
        select(DocumentReference, DocumentCitation)
        .join(Document, col(Document.id) == DocumentReference.document_id)
        .outerjoin(
            DocumentCitation,
            and_(
                col(DocumentCitation.citing_id) == DocumentReference.document_id,
                col(DocumentCitation.position) == DocumentReference.position,
            ),
        )
        .where(
            Document.owner_id == owner_id,
            DocumentReference.document_id != doc.id,
            or_(col(DocumentCitation.citing_id).is_(None), col(DocumentCitation.how) == "fuzzy"),
            or_(col(DocumentReference.doi).is_not(None), and_(year_ok, col(DocumentReference.title).is_not(None))),
        )
    )
    n = 0
    for ref, current in db.exec(q).all():
        m = one.match(ref.title, ref.year, ref.doi)
        if m is None or (current is not None and current.score >= m.score):
            continue
        if current is not None:
            db.delete(current)
            db.flush()
        db.add(_link(owner_id, ref, m))
        n += 1
    return n


def update_document(db: Session, owner_id: str, document_id: str) -> tuple[int, int]:
    """Re-link one document after it was indexed or its metadata changed: its references
    against the library, and the library's unmatched references against it. Returns
    (outgoing, incoming) link counts. The caller commits."""
    doc = db.get(Document, document_id)
    if doc is None or doc.owner_id != owner_id:
        return (0, 0)
    out = _link_outgoing(db, owner_id, document_id, library_index(db, owner_id))
    inc = _link_incoming(db, owner_id, doc)
    doc.citations_version = VERSION
    db.add(doc)
    db.flush()
    return out, inc


def relink_outdated(db: Session, limit: int = 200) -> int:
    """Link up to ``limit`` indexed documents linked by an older :data:`VERSION` (or never,
    e.g. indexed before the graph existed); returns how many were linked. The caller commits."""
    rows = db.exec(
        select(Document.id, Document.owner_id)
        .where(Document.status == DocStatus.INDEXED, Document.citations_version < VERSION)
        .limit(limit)
    ).all()
    for doc_id, owner_id in rows:
        update_document(db, owner_id, doc_id)
    return len(rows)


def forget_document(db: Session, document_id: str) -> None:
    """Drop a leaving document's links both ways (its citers' references become unmatched)."""
    db.exec(
        delete(DocumentCitation).where(
            or_(col(DocumentCitation.citing_id) == document_id, col(DocumentCitation.cited_id) == document_id)
        )
    )


def rebuild(db: Session, owner_id: str) -> int:
    """Rebuild the owner's whole graph from the reference lists; returns the link count."""
    db.exec(delete(DocumentCitation).where(col(DocumentCitation.owner_id) == owner_id))
    index = library_index(db, owner_id)
    q = (
        select(  # type: ignore[call-overload]  # sqlmodel types select() up to 4 columns
            DocumentReference.document_id,
            DocumentReference.position,
            DocumentReference.title,
            DocumentReference.year,
            DocumentReference.doi,
        )
        .join(Document, col(Document.id) == DocumentReference.document_id)
        .where(Document.owner_id == owner_id)
    )
    rows = []
    for doc_id, pos, title, year, doi in db.exec(q):
        if m := index.match(title, year, doi, exclude=doc_id):
            rows.append(
                {
                    "citing_id": doc_id,
                    "position": pos,
                    "cited_id": m.document_id,
                    "owner_id": owner_id,
                    "how": m.how,
                    "score": m.score,
                }
            )
    if rows:
        db.bulk_insert_mappings(DocumentCitation, rows)
    db.flush()
    return len(rows)


_STRENGTH = {"doi": 0, "title": 1, "fuzzy": 2}


def _linked(db: Session, links: Sequence[DocumentCitation], other: str) -> list[LinkedPaper]:
    by_doc: dict[str, list[DocumentCitation]] = defaultdict(list)
    for link in links:
        by_doc[getattr(link, other)].append(link)
    docs = {d.id: d for d in db.exec(select(Document).where(col(Document.id).in_(list(by_doc))))}
    out = [
        LinkedPaper(
            document_id=i,
            title=docs[i].title,
            authors=list(docs[i].authors or []),
            year=docs[i].year,
            positions=sorted(lk.position for lk in ls),
            how=min((lk.how for lk in ls), key=lambda h: _STRENGTH.get(h, 9)),
        )
        for i, ls in by_doc.items()
        if i in docs
    ]
    return sorted(out, key=lambda p: (-(p.year or 0), p.title.casefold()))


def citations_of(db: Session, owner_id: str, document_id: str) -> DocumentCitations:
    """The library documents this one cites, and those that cite it (the owner's only)."""
    cites = db.exec(
        select(DocumentCitation).where(DocumentCitation.citing_id == document_id, DocumentCitation.owner_id == owner_id)
    ).all()
    cited_by = db.exec(
        select(DocumentCitation).where(DocumentCitation.cited_id == document_id, DocumentCitation.owner_id == owner_id)
    ).all()
    return DocumentCitations(
        document_id=document_id, cites=_linked(db, cites, "cited_id"), cited_by=_linked(db, cited_by, "citing_id")
    )


def cited_by_counts(db: Session, owner_id: str, document_ids: Iterable[str]) -> dict[str, int]:
    """How many library documents cite each of ``document_ids`` (absent = 0)."""
    ids = list(set(document_ids))
    if not ids:
        return {}
    q = (
        select(DocumentCitation.cited_id, func.count(func.distinct(DocumentCitation.citing_id)))
        .where(DocumentCitation.owner_id == owner_id, col(DocumentCitation.cited_id).in_(ids))
        .group_by(DocumentCitation.cited_id)
    )
    return {i: int(n) for i, n in db.exec(q)}


def collection_documents(db: Session, collection_id: str) -> list[str]:
    return list(
        db.exec(select(DocumentCollection.document_id).where(DocumentCollection.collection_id == collection_id))
    )


def missing(
    db: Session,
    owner_id: str,
    document_ids: Sequence[str] | None = None,
    *,
    min_citers: int = MISSING_MIN_CITERS,
    limit: int = MISSING_LIMIT,
) -> list[MissingPaper]:
    """Papers cited by at least ``min_citers`` of the given documents (default: the whole
    library) that match no library document, most cited first."""
    linked = select(DocumentCitation.citing_id).where(
        DocumentCitation.citing_id == DocumentReference.document_id,
        DocumentCitation.position == DocumentReference.position,
    )
    q = (
        select(  # type: ignore[call-overload]  # sqlmodel types select() up to 4 columns
            DocumentReference.document_id,
            DocumentReference.title,
            DocumentReference.year,
            DocumentReference.doi,
            DocumentReference.venue,
            DocumentReference.authors,
        )
        .join(Document, col(Document.id) == DocumentReference.document_id)
        .where(Document.owner_id == owner_id, ~linked.exists())
    )
    if document_ids is not None:
        if not document_ids:
            return []
        q = q.where(col(DocumentReference.document_id).in_(list(document_ids)))
    groups: dict[str, list[_Ref]] = defaultdict(list)
    for row in db.exec(q):
        ref = _Ref(*row)
        if key := reference_key(ref.title, ref.doi):
            groups[key].append(ref)
    groups = _merge_similar(groups)
    out = []
    for refs in groups.values():
        citers = sorted({r.document_id for r in refs})
        if len(citers) < min_citers:
            continue
        out.append(_describe(refs, citers))
    out.sort(key=lambda m: (-m.cited_by_count, -(m.year or 0), (m.title or "").casefold()))
    return out[:limit]


class _Ref(NamedTuple):
    document_id: str
    title: str | None
    year: int | None
    doi: str | None
    venue: str | None
    authors: list[str] | None


def _first_surname(authors: list[str] | None) -> str:
    if not authors:
        return ""
    a = authors[0].strip()
    name = a.split(",")[0] if "," in a else max(a.split(), key=len, default="")
    return normalize_title(name)


def _merge_similar(groups: dict[str, list[_Ref]]) -> dict[str, list[_Ref]]:
    """Join groups that name one paper under two keys: a DOI group and a title group of the
    same title, two titles one typo apart (fuzzy ≥ citation_match.FUZZY_MIN), and a preprint
    and its published version (years further apart) when their first authors agree too."""
    index = PaperIndex()
    rep: dict[str, str] = {}
    first_author: dict[str, str] = {}
    merged: dict[str, list[_Ref]] = {}
    for key, refs in sorted(groups.items(), key=lambda kv: (not kv[0].startswith("doi:"), -len(kv[1]))):
        title = next((r.title for r in refs if r.title), None)
        year = next((r.year for r in refs if r.year), None)
        author = next((a for r in refs if (a := _first_surname(r.authors))), "")
        hit = index.match(title, year) if title else None
        if hit is None and title and author and (other := index.match(title)) is not None:
            hit = other if first_author.get(other.document_id) == author else None
        if hit is not None:
            merged[rep[hit.document_id]].extend(refs)
            continue
        merged[key] = list(refs)
        rep[key] = key
        first_author[key] = author
        if title:
            index.add(Paper(id=key, title=title, year=year))
    return merged


def _most_common(values: Iterable[object]) -> object | None:
    counts: dict[object, int] = defaultdict(int)
    for v in values:
        if v:
            counts[v if not isinstance(v, list) else tuple(v)] += 1
    return max(counts, key=counts.__getitem__) if counts else None


def _describe(refs: list[_Ref], citers: list[str]) -> MissingPaper:
    authors = _most_common(r.authors for r in refs)
    title = _most_common((r.title or "").strip(" .,;:") for r in refs)
    return MissingPaper(
        title=title,
        authors=list(authors) if authors else [],  # type: ignore[call-overload]
        year=max((r.year for r in refs if r.year), default=None),  # the published version's
        doi=_most_common(r.doi for r in refs),
        venue=_most_common(r.venue for r in refs),
        cited_by_count=len(citers),
        cited_by=citers,
    )
