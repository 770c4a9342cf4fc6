"""Copy a local file store into another store (S3) and verify every object by its hash."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from bayes_app.library.storage import FileStore, LocalStore

NO_LIMIT = 1 << 62


@dataclass
class MigrationReport:
    copied: int = 0
    already_there: int = 0
    verified: int = 0
    bytes_copied: int = 0
    corrupt_source: list[str] = field(default_factory=list)  # local bytes do not match their name
    failed: list[str] = field(default_factory=list)  # copy absent or different after upload

    @property
    def ok(self) -> bool:
        return not self.corrupt_source and not self.failed


def _sha_of(chunks) -> str:
    digest = hashlib.sha256()
    for block in chunks:
        digest.update(block)
    return digest.hexdigest()


def migrate(
    source: LocalStore, dest: FileStore, progress: Callable[[str, str], None] = lambda _sha, _what: None
) -> MigrationReport:
    """Idempotent: objects already in `dest` are verified, not sent again. A local file whose
    bytes do not hash to its name is reported and not copied; an object that fails
    verification is deleted from `dest` so that a rerun sends it again."""
    report = MigrationReport()
    for sha in source.iter_shas():
        if _sha_of(source.iter_bytes(sha)) != sha:
            report.corrupt_source.append(sha)
            progress(sha, "corrupt in the source: not copied")
            continue
        if dest.exists(sha):
            report.already_there += 1
            what = "already there"
        else:
            with open(source.path(sha), "rb") as fh:
                stored = dest.store_stream(fh, NO_LIMIT)
            report.copied += 1
            report.bytes_copied += stored.size
            what = "copied"
        try:
            same = _sha_of(dest.iter_bytes(sha)) == sha
        except FileNotFoundError:
            same = False
        if same:
            report.verified += 1
            progress(sha, f"{what}, verified")
        else:
            report.failed.append(sha)
            dest.remove(sha)
            progress(sha, f"{what}, VERIFICATION FAILED (removed from the destination)")
    return report
