"""Content-addressed file storage under the data dir: files/<sha[:2]>/<sha256>.pdf."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20


class UploadTooLarge(Exception):
    def __init__(self, limit_bytes: int):
        super().__init__(f"The file is larger than the {limit_bytes // (1 << 20)} MB upload limit.")
        self.limit_bytes = limit_bytes


class StorageFull(Exception):
    """The disk under the data dir is full; nothing was stored."""


@dataclass(frozen=True)
class StoredFile:
    sha256: str
    size: int
    path: Path


def path_for(root: Path, sha256: str) -> Path:
    return root / sha256[:2] / f"{sha256}.pdf"


def store_stream(root: Path, stream: BinaryIO, limit_bytes: int) -> StoredFile:
    """Copy a stream into storage while hashing it; refuse it past `limit_bytes`.

    Writes to a temp file first and renames, so a half-written file never appears.
    """
    root.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, whatever the umask
    digest = hashlib.sha256()
    size = 0
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".upload-")
    try:
        with os.fdopen(fd, "wb") as out:
            while block := stream.read(CHUNK):
                size += len(block)
                if size > limit_bytes:
                    raise UploadTooLarge(limit_bytes)
                digest.update(block)
                out.write(block)
        sha = digest.hexdigest()
        dest = path_for(root, sha)
        dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.replace(tmp, dest)  # mkstemp made it 0600
        return StoredFile(sha, size, dest)
    except OSError as err:
        if err.errno == 28:  # ENOSPC
            raise StorageFull("The server's disk is full; the file was not stored.") from None
        raise
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def store_bytes(root: Path, data: bytes, limit_bytes: int) -> StoredFile:
    import io

    return store_stream(root, io.BytesIO(data), limit_bytes)


def remove(root: Path, sha256: str) -> None:
    """Delete a stored file (callers check no other document still uses it)."""
    p = path_for(root, sha256)
    if p.exists():
        p.unlink()


def copy_to(root: Path, sha256: str, target: Path) -> None:
    shutil.copyfile(path_for(root, sha256), target)
