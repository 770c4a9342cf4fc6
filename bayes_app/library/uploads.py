"""Accepting an uploaded file: size limit, PDF check, content-addressed storage, dedupe,
quota; and removing stored files no document refers to any more (at once, and a sweep)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import BinaryIO

from bayes_app.db import session_scope
from bayes_app.errors import DomainError
from bayes_app.library import documents as lib
from bayes_app.library import ocr, storage
from bayes_app.settings import get_settings

log = logging.getLogger("bayes.library.uploads")


class UploadRejected(DomainError):
    """The file was not accepted; nothing was stored."""


@dataclass(frozen=True)
class Replaced:
    generation: int
    changed: bool  # False: the document already had these exact bytes


@dataclass(frozen=True)
class Accepted:
    document_id: str
    generation: int
    created: bool  # False: the owner already had this exact file


def store_checked(fileobj: BinaryIO, filename: str) -> storage.StoredFile:
    """Reject empty/non-PDF (pdfium must open it)/oversized files, else store the bytes by
    content hash."""
    settings = get_settings()
    try:
        lib.check_pdf(fileobj, filename)
        return storage.default_store().store_stream(fileobj, settings.max_upload_mb << 20)
    except lib.LibraryError as err:
        raise UploadRejected(err.code, err.message, err.status) from None
    except storage.UploadTooLarge:
        raise UploadRejected(
            "too_large",
            f"{filename}: larger than the {settings.max_upload_mb} MB upload limit (BAYES_MAX_UPLOAD_MB).",
            413,
        ) from None
    except storage.StorageFull as err:
        raise UploadRejected("storage_full", f"{filename}: {err}", 507) from None
    except storage.StorageUnavailable:
        raise UploadRejected(
            "storage_unavailable",
            f"{filename}: the file store is unavailable; nothing was stored. Try again in a moment.",
            503,
        ) from None


def _quota_bytes() -> int | None:
    quota_mb = get_settings().user_quota_mb
    return quota_mb << 20 if quota_mb else None


def accept(
    owner_id: str, fileobj: BinaryIO, filename: str, collection_ids: list[str] | None = None, ocr_language: str = ""
) -> Accepted:
    """Store the file and create (or find) the owner's document. The caller enqueues
    ingestion when `created` is True. ``ocr_language``: an installed Tesseract language for
    its scanned pages, or ""/"auto" (the detected language); anything else is refused (422)."""
    try:
        ocr_choice = ocr.check_choice(ocr_language)
    except ValueError as err:
        raise UploadRejected("bad_ocr_language", str(err), 422) from None
    stored = store_checked(fileobj, filename)
    try:
        with session_scope() as db:
            doc, created = lib.add_upload(
                db, owner_id, filename, stored, collection_ids, quota_bytes=_quota_bytes(), ocr_lang_choice=ocr_choice
            )
            db.flush()
            return Accepted(doc.id, doc.ingest_generation, created)
    except lib.NotFound as err:
        release(stored.sha256)
        raise UploadRejected("not_found", f"No such {err.what}.", 404) from None
    except lib.LibraryError as err:
        release(stored.sha256)
        raise UploadRejected(err.code, err.message, err.status) from None


def replace(owner_id: str, document_id: str, fileobj: BinaryIO, filename: str) -> Replaced:
    """Put a new version of the file under the owner's document, counted against the quota
    (NotFound before anything is stored); the old version's object is removed when no document
    refers to it any more. The caller enqueues ingestion when `changed`."""
    with session_scope() as db:
        lib.get_owned(db, owner_id, document_id)
    stored = store_checked(fileobj, filename)
    try:
        with session_scope() as db:
            doc, old = lib.replace_file(db, owner_id, document_id, stored, quota_bytes=_quota_bytes())
            generation = doc.ingest_generation
    except lib.NotFound:
        release(stored.sha256)
        raise
    except lib.LibraryError as err:
        release(stored.sha256)
        raise UploadRejected(err.code, err.message, err.status) from None
    if old is not None:
        release(old)
    return Replaced(generation, old is not None)


def release(sha256: str) -> bool:
    """Remove a stored object unless a document (of any owner) still refers to it; True when
    removed. Content-addressed: identical bytes are shared, so only the last reference frees them."""
    with session_scope() as db:
        if lib.file_in_use(db, sha256):
            return False
    storage.default_store().remove(sha256)
    return True


def sweep_unreferenced(grace_s: float | None = None, store: storage.FileStore | None = None) -> list[str]:
    """Remove stored objects no document refers to that were last written more than `grace_s`
    ago (default BAYES_FILE_SWEEP_GRACE_HOURS): what a crash between storing and recording,
    or an older version that skipped :func:`release`, left behind. Younger objects may be an
    upload whose document is being recorded right now. Returns the removed hashes."""
    store = store or storage.default_store()
    grace = get_settings().file_sweep_grace_hours * 3600 if grace_s is None else grace_s
    cutoff = time.time() - grace
    candidates = [sha for sha, written in store.iter_objects() if written < cutoff]
    if not candidates:
        return []
    with session_scope() as db:
        used = lib.referenced_files(db)
    removed = []
    for sha in candidates:
        if sha in used:
            continue
        with session_scope() as db:  # checked again: a document may have adopted it meanwhile
            if lib.file_in_use(db, sha):
                continue
        store.remove(sha)
        removed.append(sha)
    if removed:
        log.info("removed %d stored file(s) no document refers to", len(removed))
    return removed
