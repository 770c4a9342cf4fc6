"""Items to documents: plan each attachment (download, store, metadata), apply the plans,
remove what left Zotero."""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyzotero import errors as ze
from sqlalchemy import update
from sqlmodel import Session, col, select

from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.models import (
    Document,
    DocumentCollection,
    ZoteroCollection,
    ZoteroItem,
    utcnow,
)
from bayes_app.zotero import mapping
from bayes_app.zotero.http import MAX_CONCURRENCY
from bayes_app.zotero.sync_state import RECONCILE_BATCH, _Ctx, _renew

log = logging.getLogger("bayes.zotero")


# ---- items → documents ---------------------------------------------------------------------------
@dataclass
class _Plan:
    key: str
    remove: bool = False
    download: bool = False
    problem: tuple[str, str] | None = None
    blob: bytes | None = None


def _reconcile(ctx: _Ctx) -> None:
    """Turn every dirty item into document changes, a batch at a time (each committed)."""
    with ctx.sf() as db:
        # a dirty parent makes its PDF attachments dirty (metadata, trash and collections come from it)
        parents = list(
            db.exec(
                select(ZoteroItem.key).where(
                    ZoteroItem.library_id == ctx.library_id,
                    ZoteroItem.dirty == True,
                    col(ZoteroItem.item_type).not_in(("attachment", "annotation", "note")),
                )
            )
        )
        for i in range(0, len(parents), 500):
            db.exec(
                update(ZoteroItem)
                .where(
                    col(ZoteroItem.library_id) == ctx.library_id, col(ZoteroItem.parent_key).in_(parents[i : i + 500])
                )
                .values(dirty=True)
            )
        db.commit()
        dirty_atts = list(
            db.exec(
                select(ZoteroItem.key).where(
                    ZoteroItem.library_id == ctx.library_id,
                    ZoteroItem.dirty == True,
                    ZoteroItem.item_type == "attachment",
                )
            )
        )
    _renew(ctx, phase="files", files_to_download=len(dirty_atts))
    for i in range(0, len(dirty_atts), RECONCILE_BATCH):
        _reconcile_batch(ctx, dirty_atts[i : i + RECONCILE_BATCH])
    with ctx.sf() as db:  # everything else (regular items, notes) needs nothing more
        db.exec(
            update(ZoteroItem)
            .where(col(ZoteroItem.library_id) == ctx.library_id, col(ZoteroItem.dirty) == True)
            .values(dirty=False)
        )
        db.commit()
    _renew(ctx)


def _reconcile_batch(ctx: _Ctx, keys: list[str]) -> None:
    plans: list[_Plan] = []
    with ctx.sf() as db:
        rows = {
            r.key: r
            for r in db.exec(
                select(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(keys))
            )
        }
        parent_keys = {r.parent_key for r in rows.values() if r.parent_key}
        parents = (
            {
                r.key: r
                for r in db.exec(
                    select(ZoteroItem).where(
                        ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(parent_keys)
                    )
                )
            }
            if parent_keys
            else {}
        )
        for key, row in rows.items():
            parent = parents.get(row.parent_key) if row.parent_key else None
            plan = _Plan(key)
            if not mapping.is_pdf_attachment(row.data):
                plan.remove = bool(row.document_id)
            elif row.trashed or (parent is not None and parent.trashed):
                plan.remove = True
            elif not mapping.has_stored_file(row.data):
                plan.remove = bool(row.document_id)
                plan.problem = (
                    "linked_file",
                    "The PDF is a linked file on the owner's computer; Zotero "
                    "does not store it, so Bayes cannot download it.",
                )
            elif row.document_id is None or row.file_md5 != row.data.get("md5"):
                plan.download = True
            plans.append(plan)
    downloads = [p for p in plans if p.download]
    if downloads:
        if ctx.pool is None:
            ctx.pool = ThreadPoolExecutor(max_workers=MAX_CONCURRENCY, thread_name_prefix="zotero-dl")
        list(ctx.pool.map(lambda p: _download(ctx, p), downloads))
    _apply_plans(ctx, plans)


def _download(ctx: _Ctx, plan: _Plan) -> None:
    z = ctx.clients.get()
    try:
        blob = z.file(plan.key)
    except ze.ResourceNotFoundError:
        plan.download, plan.problem = (
            False,
            (
                "file_unavailable",
                "Zotero has no copy of this PDF in its storage (files synced with "
                "WebDAV, or not uploaded yet), so Bayes cannot download it.",
            ),
        )
        return
    except ze.UserNotAuthorisedError:
        plan.download, plan.problem = (
            False,
            ("file_forbidden", "The API key is not allowed to download files (give it file access)."),
        )
        return
    if not isinstance(blob, (bytes, bytearray)) or not blob:
        plan.download, plan.problem = False, ("file_empty", "Zotero returned an empty file.")
        return
    plan.blob = bytes(blob)
    ctx.result.files_downloaded += 1
    ctx.progress["files_downloaded"] = ctx.progress.get("files_downloaded", 0) + 1


@dataclass
class _Applied:
    """What applying the plans leaves to do once they are committed."""

    purges: list[tuple[str, str | None]] = field(default_factory=list)  # (document id, file sha)
    ingest: list[tuple[str, int]] = field(default_factory=list)  # (document id, generation)
    regroup: list[str] = field(default_factory=list)  # documents whose collections changed


def _apply_plans(ctx: _Ctx, plans: list[_Plan]) -> None:
    done = _Applied()
    with ctx.sf() as db:
        rows, parents = _plan_rows(db, ctx, plans)
        colmap = dict(
            db.exec(
                select(ZoteroCollection.key, ZoteroCollection.collection_id).where(
                    ZoteroCollection.library_id == ctx.library_id
                )
            ).all()
        )
        for plan in plans:
            row = rows.get(plan.key)
            if row is None:
                continue
            parent = parents.get(row.parent_key) if row.parent_key else None
            _apply_plan(db, ctx, plan, row, parent, colmap, done)
            if row.problem_code:
                ctx.result.problems += 1
            row.dirty = False
            db.add(row)
        db.commit()
    for doc_id, sha in done.purges:
        ctx.hooks.purge_document(doc_id, sha)
    for doc_id, gen in done.ingest:
        ctx.hooks.enqueue_ingest(doc_id, gen)
    for doc_id in dict.fromkeys(done.regroup):
        if doc_id not in {d for d, _ in done.ingest}:
            ctx.hooks.collections_changed(doc_id)
    ctx.progress["ingest_queued"] = ctx.progress.get("ingest_queued", 0) + len(done.ingest)
    _renew(ctx)


def _plan_rows(db: Session, ctx: _Ctx, plans: list[_Plan]) -> tuple[dict[str, ZoteroItem], dict[str, ZoteroItem]]:
    """The planned items' rows, and their parent items' rows, by key."""
    rows = {
        r.key: r
        for r in db.exec(
            select(ZoteroItem).where(
                ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_([p.key for p in plans])
            )
        )
    }
    pkeys = [r.parent_key for r in rows.values() if r.parent_key]
    parents = (
        {
            r.key: r
            for r in db.exec(
                select(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(pkeys))
            )
        }
        if pkeys
        else {}
    )
    return rows, parents


def _apply_plan(
    db: Session,
    ctx: _Ctx,
    plan: _Plan,
    row: ZoteroItem,
    parent: ZoteroItem | None,
    colmap: dict[str, str | None],
    done: _Applied,
) -> None:
    """One item: its document removed, or its file stored and its metadata and collections set."""
    row.problem_code, row.problem_message = plan.problem or (None, None)
    if plan.remove and row.document_id:
        done.purges += _remove_document(db, ctx, row.document_id)
        row.document_id, row.file_md5 = None, None
    elif plan.problem is None and mapping.is_pdf_attachment(row.data) and not plan.remove:
        meta = mapping.metadata(parent.data if parent else None, row.data)
        doc = db.get(Document, row.document_id) if row.document_id else None
        if plan.blob is not None:
            try:
                queued = _store_file(db, ctx, row, parent, doc, plan.blob)
            except _ItemProblem as problem:
                row.problem_code, row.problem_message = problem.code, problem.message
                queued = None
            if queued is not None:
                done.ingest.append(queued)
            doc = db.get(Document, row.document_id) if row.document_id else None
        if doc is not None and _set_metadata(db, doc, row, parent, meta, colmap):
            done.regroup.append(doc.id)


class _ItemProblem(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _store_file(
    db: Session, ctx: _Ctx, row: ZoteroItem, parent: ZoteroItem | None, doc: Document | None, blob: bytes
) -> tuple[str, int] | None:
    """Store a downloaded PDF and create or update its document. Returns (doc id, generation)
    to enqueue, or None when nothing needs ingesting; raises _ItemProblem."""
    name = str(row.data.get("filename") or f"{row.key}.pdf")[:500]
    if len(blob) > ctx.opts.max_file_bytes:
        raise _ItemProblem(
            "too_large", f"{name}: larger than the {ctx.opts.max_file_bytes >> 20} MB limit (BAYES_MAX_UPLOAD_MB)."
        )
    try:
        lib.check_pdf(blob, name)
    except lib.LibraryError as err:
        raise _ItemProblem(err.code, err.message) from None
    md5 = hashlib.md5(blob).hexdigest()
    stored = storage.store_bytes(ctx.opts.files_root, blob, ctx.opts.max_file_bytes)
    if doc is not None:
        try:
            doc, old = lib.replace_file(db, ctx.owner_id, doc.id, stored)
        except lib.LibraryError as err:
            raise _ItemProblem(err.code, err.message) from None
        row.file_md5 = doc.zotero_md5 = md5
        db.add(doc)
        ctx.result.documents_updated += 1
        return (doc.id, doc.ingest_generation) if old is not None else None
    doc, created = lib.add_upload(db, ctx.owner_id, name, stored)
    adopted = False
    if not created:
        if doc.zotero_attachment_key == row.key and doc.zotero_library_id in (None, ctx.library_id):
            adopted = True  # kept from an earlier connection of this library: adopt it again
        else:
            title = doc.title or doc.filename
            raise _ItemProblem("duplicate_file", f"The same PDF is already in the library as “{title}”.")
    doc.source = "zotero"
    doc.zotero_library_id, doc.zotero_attachment_key = ctx.library_id, row.key
    doc.zotero_item_key = parent.key if parent else row.key
    doc.zotero_md5 = row.file_md5 = md5
    db.add(doc)
    db.flush()
    row.document_id = doc.id
    if adopted:
        ctx.result.documents_updated += 1
        return None
    ctx.result.documents_added += 1
    return doc.id, doc.ingest_generation


def _set_metadata(
    db: Session,
    doc: Document,
    row: ZoteroItem,
    parent: ZoteroItem | None,
    meta: mapping.Metadata,
    colmap: dict[str, str | None],
) -> bool:
    """Zotero is the source of truth for a synced document's metadata and Zotero collections
    (`colmap`: Zotero collection key → Bayes collection id). True when collections changed."""
    changed = False
    if meta.title:
        doc.title = meta.title
    doc.authors, doc.year, doc.doi = meta.authors, meta.year, meta.doi
    doc.metadata_edited = bool(meta.title)  # ingestion must not overwrite Zotero's title
    doc.zotero_version = (parent or row).version
    doc.updated_at = utcnow()
    db.add(doc)
    managed = {cid for cid in colmap.values() if cid}
    want = {cid for k in meta.collection_keys if (cid := colmap.get(k))}
    have = set(lib.collection_ids_of(db, doc.id))
    new = (have - managed) | want
    if new != have:
        for cid in have - new:
            link = db.get(DocumentCollection, (doc.id, cid))
            if link is not None:
                db.delete(link)
        for cid in new - have:
            db.add(DocumentCollection(document_id=doc.id, collection_id=cid))
        changed = True
    return changed


def _remove_document(db: Session, ctx: _Ctx, document_id: str) -> list[tuple[str, str | None]]:
    """Delete a synced document through the library's delete path (removal hooks run there)."""
    try:
        sha, still_used = lib.delete_document(db, ctx.owner_id, document_id, reason="source_removed")
    except lib.NotFound:
        return []
    ctx.result.documents_removed += 1
    return [(document_id, None if still_used else sha)]
