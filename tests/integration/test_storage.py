"""File storage behind one interface, on local disk and on an S3 endpoint (moto's standalone
server, a separate process speaking the S3 protocol): content addressing, dedupe, size limit,
streamed and ranged reads, removal, settings, the upload path, the PDF route, ingestion's
parse step, and `python -m bayes_app.cli storage-migrate`."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import uuid
from datetime import timedelta

import pytest
from sqlmodel import Session

from bayes_app.library import storage
from tests.support.procs import ROOT
from tests.support.tiny_pdf import text_pdf


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path, monkeypatch) -> storage.FileStore:
    if request.param == "local":
        return storage.LocalStore(tmp_path / "files")
    s3 = request.getfixturevalue("s3_server")
    for k, v in s3.env().items():
        monkeypatch.setenv(k, v)
    return storage.S3Store(s3.new_bucket(), "lab/pdfs", endpoint_url=s3.endpoint, spool_dir=tmp_path)


def _big(n: int) -> bytes:
    return (b"%PDF-1.4\n" + os.urandom(n))[:n]


def test_content_addressed_dedupe_stream_range_remove(store):
    data = _big(2_600_000)  # > 2 chunks
    sha = hashlib.sha256(data).hexdigest()
    first = store.store_stream(io.BytesIO(data), 10 << 20)
    again = store.store_stream(io.BytesIO(data), 10 << 20)
    assert first.sha256 == again.sha256 == sha
    assert first.size == len(data)
    assert list(store.iter_shas()) == [sha]  # identical bytes stored once
    assert store.exists(sha)
    assert store.size(sha) == len(data)
    chunks = list(store.iter_bytes(sha))
    assert len(chunks) >= 3
    assert max(map(len, chunks)) <= storage.CHUNK  # streamed, not whole
    assert b"".join(chunks) == data
    assert b"".join(store.iter_bytes(sha, 100, 199)) == data[100:200]
    assert b"".join(store.iter_bytes(sha, len(data) - 5)) == data[-5:]
    with store.local_file(sha) as path:
        assert path.read_bytes() == data
    if isinstance(store, storage.S3Store):
        assert not path.exists()  # the temp copy is gone
        assert store.client.head_object(Bucket=store.bucket, Key=f"lab/pdfs/{sha[:2]}/{sha}.pdf")
    other = store.store_stream(io.BytesIO(b"%PDF-other"), 1 << 20)
    assert sorted(store.iter_shas()) == sorted([sha, other.sha256])
    store.remove(sha)
    assert not store.exists(sha)
    assert store.size(sha) is None
    assert list(store.iter_shas()) == [other.sha256]
    store.remove(sha)  # removing twice is harmless
    with pytest.raises(FileNotFoundError):
        b"".join(store.iter_bytes(sha))


def test_too_large_stores_nothing(store, tmp_path):
    with pytest.raises(storage.UploadTooLarge):
        store.store_stream(io.BytesIO(_big(3 << 20)), 2 << 20)
    assert list(store.iter_shas()) == []
    assert not list(tmp_path.rglob("*upload*"))  # no spooled leftovers


def test_settings_choose_the_backend(configure, tmp_path, s3_server):
    from bayes_app.settings import SettingsError, load_settings

    configure(BAYES_DATA_DIR=str(tmp_path), BAYES_STORAGE_URL="", BAYES_S3_ENDPOINT_URL="")
    local = storage.default_store()
    assert isinstance(local, storage.LocalStore)
    assert local.root == tmp_path / "files"
    configure(BAYES_STORAGE_URL="s3://my-bucket/some/prefix/", BAYES_S3_ENDPOINT_URL=s3_server.endpoint)
    s3 = storage.default_store()
    assert isinstance(s3, storage.S3Store)
    assert (s3.bucket, s3.prefix, s3.endpoint_url) == ("my-bucket", "some/prefix", s3_server.endpoint)
    assert s3.key("ab" + "0" * 62) == "some/prefix/ab/ab" + "0" * 62 + ".pdf"
    for bad in ("http://bucket", "s3://", "s3://bad_bucket!/x"):
        with pytest.raises(SettingsError, match="BAYES_STORAGE_URL"):
            load_settings(BAYES_STORAGE_URL=bad)
    with pytest.raises(SettingsError, match="BAYES_S3_ENDPOINT_URL"):
        load_settings(BAYES_S3_ENDPOINT_URL="minio:9000")


# ---- the app's paths on S3 --------------------------------------------------------------------
@pytest.fixture
def s3_app(db_url, configure, s3_server, tmp_path):
    """Settings pointing at a fresh bucket; the local files dir must stay empty."""
    bucket = s3_server.new_bucket()
    configure(
        DATABASE_URL=db_url,
        BAYES_DATA_DIR=str(tmp_path / "data"),
        BAYES_STORAGE_URL=f"s3://{bucket}/files",
        **s3_server.env(),
    )
    yield bucket
    assert not (tmp_path / "data" / "files").exists()


def _user(db_url: str):
    from bayes_app.accounts import service as accounts
    from bayes_app.db import get_engine

    with Session(get_engine(db_url), expire_on_commit=False) as db:
        user = accounts.register(db, f"s{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        _, token = accounts.create_api_token(db, user, timedelta(days=1))
        db.commit()
        return user.id, {"Authorization": f"Bearer {token}"}


def test_upload_dedupe_refusal_and_pdf_route_on_s3(s3_app, db_url, s3_server):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api
    from bayes_app.library import uploads

    uid, auth = _user(db_url)
    data = text_pdf("Stored in a bucket", ["alpha beta gamma"] * 40, pages=3)
    sha = hashlib.sha256(data).hexdigest()
    acc = uploads.accept(uid, io.BytesIO(data), "bucket.pdf")
    assert acc.created
    assert s3_server.keys(s3_app) == [f"files/{sha[:2]}/{sha}.pdf"]
    dup = uploads.accept(uid, io.BytesIO(data), "again.pdf")
    assert not dup.created
    assert dup.document_id == acc.document_id
    assert len(s3_server.keys(s3_app)) == 1

    # a refused upload (bad collection) leaves no object behind when nothing else uses it
    other = text_pdf("Refused", ["x"])
    with pytest.raises(uploads.UploadRejected):
        uploads.accept(uid, io.BytesIO(other), "refused.pdf", collection_ids=["no-such-collection"])
    assert s3_server.keys(s3_app) == [f"files/{sha[:2]}/{sha}.pdf"]

    with TestClient(build_api()) as c:
        r = c.get(f"/api/v1/documents/{acc.document_id}/file", headers=auth)
        assert r.status_code == 200
        assert r.content == data
        assert r.headers["content-type"] == "application/pdf"
        assert r.headers["content-length"] == str(len(data))
        assert r.headers["x-content-type-options"] == "nosniff"
        part = c.get(f"/api/v1/documents/{acc.document_id}/file", headers=auth | {"Range": "bytes=10-99"})
        assert part.status_code == 206
        assert part.content == data[10:100]
        assert part.headers["content-range"] == f"bytes 10-99/{len(data)}"
        tail = c.get(f"/api/v1/documents/{acc.document_id}/file", headers=auth | {"Range": "bytes=-7"})
        assert tail.status_code == 206
        assert tail.content == data[-7:]
        bad = c.get(f"/api/v1/documents/{acc.document_id}/file", headers=auth | {"Range": f"bytes={len(data) + 5}-"})
        assert bad.status_code == 416
        other_uid, other_auth = _user(db_url)
        assert c.get(f"/api/v1/documents/{acc.document_id}/file", headers=other_auth).status_code == 404
        storage.default_store().remove(sha)
        gone = c.get(f"/api/v1/documents/{acc.document_id}/file", headers=auth)
        assert gone.status_code == 404
        assert gone.json()["error"]["code"] == "not_found"


@pytest.mark.usefixtures("s3_app")
def test_ingestion_parses_from_s3(db_url):
    """The parse step reads the object through a temp copy (pdfium needs a file)."""
    from bayes_app.db import get_engine
    from bayes_app.library import uploads
    from bayes_app.library.ingest import IngestError, ingest_document

    uid, _ = _user(db_url)
    engine = get_engine(db_url)
    acc = uploads.accept(uid, io.BytesIO(text_pdf("Pages", ["a", "b", "c"], pages=3)), "p.pdf")
    with pytest.raises(IngestError) as err:  # stops after pdfium opened the copy: no index needed
        ingest_document(
            lambda: Session(engine, expire_on_commit=False),
            acc.document_id,
            acc.generation,
            files_root=storage.default_store(),
            index=None,
            embedder=None,
            max_pages=2,
        )
    assert err.value.code == "too_many_pages"
    other = text_pdf("Other", ["z"])
    acc2 = uploads.accept(uid, io.BytesIO(other), "q.pdf")
    storage.default_store().remove(hashlib.sha256(other).hexdigest())
    with pytest.raises(IngestError) as err:
        ingest_document(
            lambda: Session(engine, expire_on_commit=False),
            acc2.document_id,
            acc2.generation,
            files_root=storage.default_store(),
            index=None,
            embedder=None,
        )
    assert err.value.code == "missing_file"


# ---- storage-migrate --------------------------------------------------------------------------
def _migrate(env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BAYES_", "AWS_"))}
    return subprocess.run(
        [sys.executable, "-m", "bayes_app.cli", "storage-migrate"],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_storage_migrate_copies_and_verifies(tmp_path, s3_server):
    local = storage.LocalStore(tmp_path / "data" / "files")
    blobs = [text_pdf(f"Paper {i}", [f"text {i}"] * (i + 1)) for i in range(3)] + [_big(1_500_000)]
    shas = sorted(local.store_stream(io.BytesIO(b), 10 << 20).sha256 for b in blobs)
    bucket = s3_server.new_bucket()
    env = s3_server.env() | {"BAYES_DATA_DIR": str(tmp_path / "data"), "BAYES_STORAGE_URL": f"s3://{bucket}/pdfs"}
    first = _migrate(env)
    assert first.returncode == 0, first.stderr + first.stdout
    assert "4 copied" in first.stdout
    assert "4 verified" in first.stdout
    assert s3_server.keys(bucket) == sorted(f"pdfs/{s[:2]}/{s}.pdf" for s in shas)
    cli = s3_server.client()
    for s in shas:
        body = cli.get_object(Bucket=bucket, Key=f"pdfs/{s[:2]}/{s}.pdf")["Body"].read()
        assert hashlib.sha256(body).hexdigest() == s

    # rerun: nothing sent again; a local file whose bytes no longer match its name is refused
    local.path(shas[0]).write_bytes(b"%PDF-tampered")
    again = _migrate(env)
    assert again.returncode == 1
    assert "0 copied" in again.stdout
    assert "3 already there" in again.stdout
    assert "1 corrupt in the source" in again.stdout
    assert f"{shas[0]}  corrupt" in again.stdout

    # an object altered in the bucket fails verification and is removed so a rerun resends it
    local.path(shas[0]).unlink()
    cli.put_object(Bucket=bucket, Key=f"pdfs/{shas[1][:2]}/{shas[1]}.pdf", Body=b"%PDF-wrong")
    bad = _migrate(env)
    assert bad.returncode == 1
    assert "1 failed verification" in bad.stdout
    fixed = _migrate(env)
    assert fixed.returncode == 0
    assert "1 copied" in fixed.stdout
    assert "3 verified" in fixed.stdout

    no_dest = _migrate({"BAYES_DATA_DIR": str(tmp_path / "data")})
    assert no_dest.returncode == 2
    assert "BAYES_STORAGE_URL is not set" in no_dest.stderr


@pytest.mark.usefixtures("s3_app")
def test_viewer_highlight_reads_the_pdf_from_s3(db_url):
    """Quote boxes come from pdfium over a temp copy of the object."""
    from bayes_app.db import session_scope
    from bayes_app.library import highlight, pdf, uploads
    from bayes_app.models import PageText

    uid, _ = _user(db_url)
    data = text_pdf("Highlight", ["The lichen grows slowly on granite walls."])
    acc = uploads.accept(uid, io.BytesIO(data), "h.pdf")
    text = pdf.extract_pages(data)[0].text
    with session_scope() as db:
        db.add(PageText(document_id=acc.document_id, page=1, text=text, spans=[]))
    page, rects, note = highlight.locate(
        acc.document_id, hashlib.sha256(data).hexdigest(), 1, "grows slowly on granite"
    )
    assert page == 1
    assert rects
    assert note == ""
    storage.default_store().remove(hashlib.sha256(data).hexdigest())
    assert highlight.locate(acc.document_id, hashlib.sha256(data).hexdigest(), 1, "grows slowly on granite")[1] == []


def test_health_reports_the_object_store(configure, tmp_path, s3_server, db_url):
    from bayes_app.health import check_health

    configure(BAYES_DATA_DIR=str(tmp_path), BAYES_STORAGE_URL="", DATABASE_URL=db_url)
    assert "storage" not in check_health()["components"]  # local disk: nothing more to check
    bucket = s3_server.new_bucket()
    configure(BAYES_STORAGE_URL=f"s3://{bucket}/x", **s3_server.env())
    assert check_health()["components"]["storage"] == {"status": "ok", "url": f"s3://{bucket}/x"}
    configure(BAYES_STORAGE_URL="s3://no-such-bucket-here/x")
    health = check_health()
    assert health["components"]["storage"]["status"] == "down"
    assert "storage" in health["broken"]
