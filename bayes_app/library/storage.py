"""Content-addressed file storage: `<sha[:2]>/<sha256>.pdf` on local disk or in an S3 bucket.

One interface (:class:`FileStore`), two backends:

- :class:`LocalStore` — files under the data dir (`<data dir>/files`), the default;
- :class:`S3Store` — objects under `s3://bucket/prefix/` (`BAYES_STORAGE_URL`), for web and
  worker processes on several machines with no shared disk.

Both hash while copying, refuse files past the size limit before anything becomes visible,
store identical bytes once (dedupe by hash) and stream reads in 1 MiB chunks. Callers decide
when a file is unused (no document refers to its hash) and then call :meth:`FileStore.remove`.

The module-level functions keep the older "root directory" call style: a `Path` argument is a
local store rooted there.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

CHUNK = 1 << 20


class UploadTooLarge(Exception):
    def __init__(self, limit_bytes: int):
        super().__init__(f"The file is larger than the {limit_bytes // (1 << 20)} MB upload limit.")
        self.limit_bytes = limit_bytes


class StorageFull(Exception):
    """The disk under the data dir is full; nothing was stored."""


class StorageUnavailable(Exception):
    """The object store could not be reached or refused the request; nothing was stored."""


@dataclass(frozen=True)
class StoredFile:
    sha256: str
    size: int
    path: Path | None = None  # local backend only


@runtime_checkable
class FileStore(Protocol):
    """Where PDFs live, addressed by the SHA-256 of their bytes."""

    def store_stream(self, stream: BinaryIO, limit_bytes: int) -> StoredFile: ...
    def exists(self, sha256: str) -> bool: ...
    def size(self, sha256: str) -> int | None: ...
    def iter_bytes(self, sha256: str, start: int = 0, end: int | None = None) -> Iterator[bytes]: ...
    def local_file(self, sha256: str): ...  # context manager yielding a readable Path
    def remove(self, sha256: str) -> None: ...
    def iter_shas(self) -> Iterator[str]: ...
    def iter_objects(self) -> Iterator[tuple[str, float]]: ...  # (sha256, last written, epoch s)
    def describe(self) -> str: ...


def _is_sha(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


def _spool(stream: BinaryIO, out: BinaryIO, limit_bytes: int) -> tuple[str, int]:
    """Copy `stream` to `out` while hashing; UploadTooLarge past the limit."""
    digest = hashlib.sha256()
    size = 0
    while block := stream.read(CHUNK):
        size += len(block)
        if size > limit_bytes:
            raise UploadTooLarge(limit_bytes)
        digest.update(block)
        out.write(block)
    return digest.hexdigest(), size


# ---- local disk ------------------------------------------------------------------------------
class LocalStore:
    """Files under `root`; writes go to a temp file first and are renamed into place, so a
    half-written file never appears."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.pdf"

    def describe(self) -> str:
        return str(self.root)

    def store_stream(self, stream: BinaryIO, limit_bytes: int) -> StoredFile:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, whatever the umask
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                sha, size = _spool(stream, out, limit_bytes)
            dest = self.path(sha)
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

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def size(self, sha256: str) -> int | None:
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    def iter_bytes(self, sha256: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Bytes `start`..`end` (inclusive; None: to the end), in chunks."""
        with open(self.path(sha256), "rb") as fh:
            fh.seek(start)
            left = None if end is None else end - start + 1
            while left is None or left > 0:
                block = fh.read(CHUNK if left is None else min(CHUNK, left))
                if not block:
                    return
                if left is not None:
                    left -= len(block)
                yield block

    @contextmanager
    def local_file(self, sha256: str) -> Iterator[Path]:
        path = self.path(sha256)
        if not path.is_file():
            raise FileNotFoundError(sha256)
        yield path

    def remove(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)

    def iter_shas(self) -> Iterator[str]:
        for sha, _ in self.iter_objects():
            yield sha

    def iter_objects(self) -> Iterator[tuple[str, float]]:
        """(sha256, modification time) of every stored file; storing the same bytes again
        renames a fresh copy into place, so the time is that of the last upload."""
        if not self.root.is_dir():
            return
        for p in sorted(self.root.glob("??/*.pdf")):
            if _is_sha(p.stem) and p.parent.name == p.stem[:2]:
                try:
                    yield p.stem, p.stat().st_mtime
                except FileNotFoundError:
                    continue


# ---- S3-compatible object store -----------------------------------------------------------------
class S3Store:
    """Objects `<prefix>/<sha[:2]>/<sha>.pdf` in one bucket (AWS S3, MinIO, Ceph, R2...).

    Uploads are spooled to a local temp file while hashing (the key is the hash, known only at
    the end; boto3 then sends large files in parts); an object that already exists is not sent
    again. Reads stream the response body (ranges supported)."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        client: Any = None,
        spool_dir: Path | None = None,
    ):
        self.bucket, self.prefix = bucket, prefix.strip("/")
        self.endpoint_url = endpoint_url
        self.spool_dir = spool_dir
        self._client = client
        self._ping_client: Any = None  # boto3 clients are untyped
        self._pid = os.getpid()

    @property
    def client(self):
        # boto3 clients are thread-safe but must not cross a fork (Dramatiq forks workers).
        if self._client is None or self._pid != os.getpid():
            import boto3
            from botocore.config import Config

            self._client = boto3.session.Session().client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
                config=Config(
                    retries={"max_attempts": 5, "mode": "standard"},
                    connect_timeout=10,
                    read_timeout=60,
                    s3={"addressing_style": "path"} if self.endpoint_url else None,
                ),
            )
            self._pid = os.getpid()
        return self._client

    def ping(self) -> None:
        """Raise unless the bucket answers within ~2 s (health checks: no retries)."""
        import boto3
        from botocore.config import Config

        if getattr(self, "_ping_client", None) is None or self._pid != os.getpid():
            self._ping_client = boto3.session.Session().client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
                config=Config(
                    retries={"max_attempts": 1},
                    connect_timeout=2,
                    read_timeout=2,
                    s3={"addressing_style": "path"} if self.endpoint_url else None,
                ),
            )
        self._ping_client.head_bucket(Bucket=self.bucket)

    def key(self, sha256: str) -> str:
        name = f"{sha256[:2]}/{sha256}.pdf"
        return f"{self.prefix}/{name}" if self.prefix else name

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def _errors(self):
        from botocore.exceptions import BotoCoreError, ClientError

        return BotoCoreError, ClientError

    @staticmethod
    def _missing(err) -> bool:
        code = str(getattr(err, "response", {}).get("Error", {}).get("Code", ""))
        return code in {"404", "NoSuchKey", "NotFound"}

    def _head(self, sha256: str) -> dict | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=self.key(sha256))
        except self._errors() as err:
            if self._missing(err):
                return None
            raise StorageUnavailable(f"The object store failed: {err}") from None

    def store_stream(self, stream: BinaryIO, limit_bytes: int) -> StoredFile:
        try:
            with tempfile.TemporaryFile(dir=self.spool_dir, prefix="bayes-upload-") as tmp:
                sha, size = _spool(stream, tmp, limit_bytes)
                extra = {"ContentType": "application/pdf", "Metadata": {"sha256": sha}}
                try:
                    if self._head(sha) is None:  # dedupe: identical bytes are stored once
                        tmp.seek(0)
                        self.client.upload_fileobj(tmp, self.bucket, self.key(sha), ExtraArgs=extra)
                    else:  # copied onto itself: a fresh LastModified keeps the sweep's grace period
                        self.client.copy_object(
                            Bucket=self.bucket,
                            Key=self.key(sha),
                            MetadataDirective="REPLACE",
                            CopySource={"Bucket": self.bucket, "Key": self.key(sha)},
                            **extra,
                        )
                except self._errors() as err:
                    raise StorageUnavailable(f"The object store refused the file: {err}") from None
                return StoredFile(sha, size)
        except OSError as err:
            if err.errno == 28:
                raise StorageFull("The server's temporary disk is full; the file was not stored.") from None
            raise

    def exists(self, sha256: str) -> bool:
        return self._head(sha256) is not None

    def size(self, sha256: str) -> int | None:
        head = self._head(sha256)
        return None if head is None else int(head["ContentLength"])

    def iter_bytes(self, sha256: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        args = {"Bucket": self.bucket, "Key": self.key(sha256)}
        if start or end is not None:
            args["Range"] = f"bytes={start}-{'' if end is None else end}"
        try:
            body = self.client.get_object(**args)["Body"]
        except self._errors() as err:
            if self._missing(err):
                raise FileNotFoundError(sha256) from None
            raise StorageUnavailable(f"The object store failed: {err}") from None
        try:
            yield from body.iter_chunks(CHUNK)
        finally:
            body.close()

    @contextmanager
    def local_file(self, sha256: str) -> Iterator[Path]:
        """A temp copy for readers that need a file (pdfium); removed on exit."""
        fd, tmp = tempfile.mkstemp(dir=self.spool_dir, prefix="bayes-read-", suffix=".pdf")
        try:
            with os.fdopen(fd, "wb") as out:
                for block in self.iter_bytes(sha256):
                    out.write(block)
            yield Path(tmp)
        finally:
            os.unlink(tmp)

    def remove(self, sha256: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key(sha256))
        except self._errors() as err:
            if not self._missing(err):
                raise StorageUnavailable(f"The object store failed: {err}") from None

    def iter_shas(self) -> Iterator[str]:
        for sha, _ in self.iter_objects():
            yield sha

    def iter_objects(self) -> Iterator[tuple[str, float]]:
        """(sha256, LastModified) of every object under the prefix."""
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}/" if self.prefix else ""
        )
        for page in pages:
            for obj in page.get("Contents", []):
                name = obj["Key"].rsplit("/", 1)[-1]
                if name.endswith(".pdf") and _is_sha(name[:-4]):
                    yield name[:-4], obj["LastModified"].timestamp()


# ---- choosing the store ------------------------------------------------------------------------
def parse_s3_url(url: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` → ("bucket", "some/prefix"); ValueError when malformed."""
    if not url.startswith("s3://"):
        raise ValueError("must look like s3://bucket or s3://bucket/prefix")
    bucket, _, prefix = url[len("s3://") :].partition("/")
    if not bucket or not all(c.isalnum() or c in "-." for c in bucket):
        raise ValueError("must look like s3://bucket or s3://bucket/prefix")
    return bucket, prefix.strip("/")


_DEFAULT: dict[tuple, FileStore] = {}


def default_store() -> FileStore:
    """The store the settings name: `BAYES_STORAGE_URL` (s3://...) or `<data dir>/files`."""
    from bayes_app.settings import get_settings

    s = get_settings()
    ident = (s.storage_url, s.s3_endpoint_url, str(s.files_path))
    store = _DEFAULT.get(ident)
    if store is None:
        if s.storage_url:
            bucket, prefix = parse_s3_url(s.storage_url)
            store = S3Store(bucket, prefix, endpoint_url=s.s3_endpoint_url)
        else:
            store = LocalStore(s.files_path)
        _DEFAULT.clear()
        _DEFAULT[ident] = store
    return store


def as_store(where: Path | str | FileStore) -> FileStore:
    return where if isinstance(where, FileStore) else LocalStore(Path(where))


# ---- the older call style (root directory or store) ---------------------------------------
def path_for(root: Path, sha256: str) -> Path:
    return LocalStore(root).path(sha256)


def store_stream(where: Path | FileStore, stream: BinaryIO, limit_bytes: int) -> StoredFile:
    """Copy a stream into storage while hashing it; refuse it past `limit_bytes`."""
    return as_store(where).store_stream(stream, limit_bytes)


def store_bytes(where: Path | FileStore, data: bytes, limit_bytes: int) -> StoredFile:
    import io

    return store_stream(where, io.BytesIO(data), limit_bytes)


def remove(where: Path | FileStore, sha256: str) -> None:
    """Delete a stored file (callers check no other document still uses it)."""
    as_store(where).remove(sha256)
