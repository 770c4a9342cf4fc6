"""Issue 24.4: replacing a document's file counts against BAYES_USER_QUOTA_MB, a stored object
is removed once no document refers to it (content-addressed: only then), and the periodic
sweep removes unreferenced objects past the grace period; on local disk and on S3 (moto)."""

from __future__ import annotations

import io
import time
import uuid

import pytest

from bayes_app.library import storage
from tests.support.tiny_pdf import text_pdf

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


@pytest.fixture(params=["local", "s3"])
def files(request, db_url, configure, tmp_path) -> storage.FileStore:
    """Settings pointing the app's store at a fresh local dir or a fresh bucket."""
    env = {
        "DATABASE_URL": db_url,
        "BAYES_DATA_DIR": str(tmp_path / "data"),
        "BAYES_USER_QUOTA_MB": "1",
        "BAYES_STORAGE_URL": "",
    }
    if request.param == "s3":
        s3 = request.getfixturevalue("s3_server")
        env |= {"BAYES_STORAGE_URL": f"s3://{s3.new_bucket()}/files", **s3.env()}
    configure(**env)
    return storage.default_store()


def _user() -> str:
    from bayes_app.accounts import service as accounts
    from bayes_app.db import session_scope

    with session_scope() as db:
        user = accounts.register(db, f"f{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.flush()
        return user.id


def _pdf(label: str, pad: int = 0) -> bytes:
    """A valid PDF, distinct per label, padded to at least `pad` bytes with a trailing comment."""
    data = text_pdf(label, [f"{label} is the subject of this version."] * 5)
    return data + b"%" + b"x" * max(0, pad - len(data)) + b"\n"


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_replacing_removes_old_versions_and_counts_against_the_quota(files):
    from bayes_app.library import uploads

    uid, other = _user(), _user()
    versions = [_pdf(f"version {i} {uuid.uuid4().hex}", 100_000) for i in range(4)]
    doc = uploads.accept(uid, io.BytesIO(versions[0]), "v0.pdf").document_id
    for i in (1, 2, 3):
        rep = uploads.replace(uid, doc, io.BytesIO(versions[i]), f"v{i}.pdf")
        assert rep.changed
        assert sorted(files.iter_shas()) == [_sha(versions[i])]  # v0..v{i-1} are gone
    same = uploads.replace(uid, doc, io.BytesIO(versions[3]), "v3-again.pdf")
    assert not same.changed
    assert sorted(files.iter_shas()) == [_sha(versions[3])]

    # the quota (1 MB) counts the new version instead of the old one, and a refusal keeps nothing
    uploads.accept(uid, io.BytesIO(big := _pdf(f"big {uuid.uuid4().hex}", 600_000)), "big.pdf")
    with pytest.raises(uploads.UploadRejected) as err:
        uploads.replace(uid, doc, io.BytesIO(_pdf(f"too big {uuid.uuid4().hex}", 500_000)), "v4.pdf")
    assert err.value.status == 413
    assert err.value.code == "quota_exceeded"
    assert sorted(files.iter_shas()) == sorted([_sha(versions[3]), _sha(big)])
    fits = _pdf(f"fits {uuid.uuid4().hex}", 300_000)  # 600 KB + 300 KB, the 100 KB version no longer counted
    assert uploads.replace(uid, doc, io.BytesIO(fits), "v5.pdf").changed
    assert sorted(files.iter_shas()) == sorted([_sha(fits), _sha(big)])

    # content-addressed: bytes another document (another owner's) still uses stay stored
    shared = _pdf(f"shared {uuid.uuid4().hex}", 1000)
    uploads.accept(other, io.BytesIO(shared), "theirs.pdf")
    uploads.replace(uid, doc, io.BytesIO(shared), "mine.pdf")
    uploads.replace(uid, doc, io.BytesIO(versions[0]), "back.pdf")
    assert _sha(shared) in set(files.iter_shas())
    assert _sha(fits) not in set(files.iter_shas())

    # someone else's document: 404, nothing stored
    from bayes_app.library.documents import NotFound

    with pytest.raises(NotFound):
        uploads.replace(other, doc, io.BytesIO(_pdf(f"intruder {uuid.uuid4().hex}")), "x.pdf")
    assert sorted(files.iter_shas()) == sorted([_sha(versions[0]), _sha(big), _sha(shared)])


def test_deleting_the_last_reference_removes_the_object(files):
    from bayes_app.db import session_scope
    from bayes_app.library import documents as lib
    from bayes_app.library import uploads

    a, b = _user(), _user()
    data = _pdf(f"both {uuid.uuid4().hex}")
    da = uploads.accept(a, io.BytesIO(data), "a.pdf").document_id
    db_ = uploads.accept(b, io.BytesIO(data), "b.pdf").document_id
    with session_scope() as db:
        sha, still_used = lib.delete_document(db, a, da)
    assert still_used
    assert not uploads.release(sha)
    assert files.exists(sha)
    with session_scope() as db:
        sha, still_used = lib.delete_document(db, b, db_)
    assert not still_used
    assert uploads.release(sha)
    assert not files.exists(sha)


def test_the_sweep_removes_unreferenced_objects_past_the_grace_period(files):
    from bayes_app.library import uploads

    uid = _user()
    kept = _pdf(f"kept {uuid.uuid4().hex}")
    uploads.accept(uid, io.BytesIO(kept), "kept.pdf")
    orphans = [files.store_stream(io.BytesIO(_pdf(f"orphan {i} {uuid.uuid4().hex}")), 1 << 20).sha256 for i in range(3)]
    assert uploads.sweep_unreferenced(grace_s=3600) == []  # young: may be an upload in flight
    assert set(files.iter_shas()) == {_sha(kept), *orphans}
    time.sleep(1.1)  # S3's LastModified has one-second resolution
    assert sorted(uploads.sweep_unreferenced(grace_s=1)) == sorted(orphans)
    assert list(files.iter_shas()) == [_sha(kept)]


def test_storing_known_bytes_again_restarts_the_grace_period(files):
    """An upload of bytes that are already stored (dedupe) must not be swept before its
    document is recorded: storing them again refreshes the object's time."""
    data = _pdf(f"again {uuid.uuid4().hex}")
    sha = files.store_stream(io.BytesIO(data), 1 << 20).sha256
    first = dict(files.iter_objects())[sha]
    time.sleep(1.1)
    files.store_stream(io.BytesIO(data), 1 << 20)
    assert dict(files.iter_objects())[sha] > first
