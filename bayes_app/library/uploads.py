"""Accepting an uploaded file: size limit, PDF check, content-addressed storage, dedupe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.errors import DomainError
from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.settings import get_settings


class UploadRejected(DomainError):
    """The file was not accepted; nothing was stored."""


@dataclass(frozen=True)
class Accepted:
    document_id: str
    generation: int
    created: bool  # False: the owner already had this exact file


def store_checked(fileobj: BinaryIO, filename: str) -> storage.StoredFile:
    """Reject empty/non-PDF/oversized files, else store the bytes by content hash."""
    settings = get_settings()
    head = fileobj.read(1024)
    fileobj.seek(0)
    try:
        lib.check_upload_head(head, filename)
        return storage.default_store().store_stream(fileobj, settings.max_upload_mb << 20)
    except lib.LibraryError as err:
        raise UploadRejected(err.code, err.message, err.status) from None
    except storage.UploadTooLarge:
        raise UploadRejected("too_large", f"{filename}: larger than the {settings.max_upload_mb} MB "
                             "upload limit (BAYES_MAX_UPLOAD_MB).", 413) from None
    except storage.StorageFull as err:
        raise UploadRejected("storage_full", f"{filename}: {err}", 507) from None
    except storage.StorageUnavailable:
        raise UploadRejected("storage_unavailable", f"{filename}: the file store is unavailable; "
                             "nothing was stored. Try again in a moment.", 503) from None


def accept(owner_id: str, fileobj: BinaryIO, filename: str,
           collection_ids: list[str] | None = None) -> Accepted:
    """Store the file and create (or find) the owner's document. The caller enqueues
    ingestion when `created` is True."""
    stored = store_checked(fileobj, filename)
    quota_mb = get_settings().user_quota_mb
    try:
        with session_scope() as db:
            doc, created = lib.add_upload(db, owner_id, filename, stored, collection_ids,
                                          quota_bytes=quota_mb << 20 if quota_mb else None)
            db.flush()
            return Accepted(doc.id, doc.ingest_generation, created)
    except lib.NotFound as err:
        _discard_if_unused(stored)
        raise UploadRejected("not_found", f"No such {err.what}.", 404) from None
    except lib.LibraryError as err:
        _discard_if_unused(stored)
        raise UploadRejected(err.code, err.message, err.status) from None


def _discard_if_unused(stored: storage.StoredFile) -> None:
    """A refused upload leaves nothing behind unless another document uses the same bytes."""
    with session_scope() as db:
        used = db.exec(select(lib.Document.id).where(lib.Document.file_sha256 == stored.sha256)).first()
    if used is None:
        storage.default_store().remove(stored.sha256)
