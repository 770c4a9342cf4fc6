"""The library through the running app's HTTP API: upload → ingestion → search → file,
bad input, collections, deletion, incremental re-ingestion, and user isolation."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest
from sqlmodel import select

from bayes_app.db import session_scope
from bayes_app.library import storage
from bayes_app.models import Chunk, Document, PageText
from tests.support import pdfs


def upload(c: httpx.Client, data: bytes, name: str = "paper.pdf", **form) -> httpx.Response:
    return c.post("/documents", files={"file": (name, data, "application/pdf")}, data=form)


def wait_done(c: httpx.Client, doc_id: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    seen = set()
    while time.monotonic() < deadline:
        d = c.get(f"/documents/{doc_id}").json()
        seen.add(d["status"])
        if d["status"] in ("indexed", "failed"):
            d["_seen"] = seen
            return d
        time.sleep(0.2)
    raise TimeoutError(f"document {doc_id} still {d['status']}")


@pytest.fixture(scope="module")
def shared():
    return {}


def test_upload_ingest_search_open(user_api, app_stack, app_db_url):
    a = user_api()
    r = upload(a, pdfs.PASA.read_bytes(), "pasa.pdf")
    assert r.status_code == 202, r.text
    doc = r.json()
    assert doc["status"] == "queued"
    assert doc["duplicate"] is False
    done = wait_done(a, doc["id"])
    assert done["status"] == "indexed", done
    assert done["page_count"] == 15
    assert done["chunk_count"] > 30
    assert done["title"] == "PaSa: An LLM Agent for Comprehensive Academic Paper Search"
    assert done["year"] == 2025
    assert "Yichen He" in done["authors"]

    # the same file again: recognised, no second document
    again = upload(a, pdfs.PASA.read_bytes(), "copy-of-pasa.pdf")
    assert again.status_code == 200
    assert again.json()["duplicate"]
    assert again.json()["id"] == doc["id"]
    assert len(a.get("/documents").json()["documents"]) == 1

    hits = a.get("/search", params={"q": pdfs.PASA_P7_PHRASE, "k": 5}).json()
    assert hits
    assert set(hits[0]) >= {"chunk_id", "document_id", "title", "page", "text", "score"}
    assert hits[0]["page"] == 7
    assert hits[0]["document_id"] == doc["id"]
    assert "decision token is presented before the" in hits[0]["text"]

    # chunk offsets point into the stored page text
    with session_scope(app_db_url) as s:
        chunk = s.get(Chunk, hits[0]["chunk_id"])
        page = s.get(PageText, (doc["id"], chunk.page))
        assert page.text[chunk.char_start : chunk.char_end] == chunk.text

    f = a.get(f"/documents/{doc['id']}/file")
    assert f.status_code == 200
    assert f.headers["content-type"] == "application/pdf"
    assert f.content == pdfs.PASA.read_bytes()
    # never reachable without credentials
    assert httpx.get(f"{app_stack.url}/api/v1/documents/{doc['id']}/file").status_code == 401


def test_another_user_sees_nothing(user_api):
    a, b = user_api(), user_api()
    doc = upload(a, pdfs.MEDIA.read_bytes(), "media.pdf").json()
    assert wait_done(a, doc["id"])["status"] == "indexed"
    doc_id = doc["id"]
    for method, path in [
        ("GET", f"/documents/{doc_id}"),
        ("GET", f"/documents/{doc_id}/file"),
        ("PATCH", f"/documents/{doc_id}"),
        ("DELETE", f"/documents/{doc_id}"),
        ("POST", f"/documents/{doc_id}/reindex"),
    ]:
        r = b.request(method, path, json={"title": "mine now"} if method == "PATCH" else None)
        assert r.status_code == 404, (method, path, r.text)
        assert r.json()["error"]["code"] == "not_found"
    assert b.get("/documents").json()["documents"] == []
    hits_a = a.get("/search", params={"q": "duplicate media table"}).json()
    assert hits_a
    assert b.get("/search", params={"q": "duplicate media table"}).json() == []
    assert b.get("/search", params={"q": "x", "document_id": doc_id}).status_code == 404
    # A's document is untouched
    assert a.get(f"/documents/{doc_id}").json()["title"] != "mine now"


def test_bad_files_get_clear_messages_and_others_are_unaffected(user_api):
    c = user_api()
    r = upload(c, b"hello, I am plain text", "notes.txt")
    assert r.status_code == 415
    assert "not a PDF" in r.json()["error"]["message"]
    r = upload(c, b"", "empty.pdf")
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "empty"
    big = b"%PDF-1.4\n" + b"0" * (21 * 1024 * 1024)
    r = upload(c, big, "huge.pdf")
    assert r.status_code == 413
    assert "20 MB" in r.json()["error"]["message"]
    r = c.post("/documents", content=b"{}", headers={"content-type": "application/json"})
    assert r.status_code == 415

    r = upload(c, pdfs.truncated_pdf(), "cut.pdf")  # pdfium cannot open it: refused at once
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "corrupt"
    r = upload(c, b"<html><!-- %PDF-1.4 --><script>alert(1)</script></html>", "page.pdf")
    assert r.status_code == 415
    assert r.json()["error"]["code"] == "not_pdf"

    cases = {"encrypted": pdfs.encrypted_pdf(), "no_text": pdfs.scanned_pdf()}
    ids = {code: upload(c, data, f"{code}.pdf").json()["id"] for code, data in cases.items()}
    good = upload(c, pdfs.MEDIA.read_bytes(), "good.pdf").json()["id"]
    for code, doc_id in ids.items():
        d = wait_done(c, doc_id)
        assert d["status"] == "failed", d
        assert d["error"]["code"] == code
        assert len(d["error"]["message"]) > 15
    assert wait_done(c, good)["status"] == "indexed"
    # nothing is listed that was refused at upload
    assert len(c.get("/documents").json()["documents"]) == 3


def test_metadata_edit_and_collections_filter_search(user_api):
    c = user_api()
    doc = upload(c, pdfs.MEDIA.read_bytes(), "media.pdf").json()
    assert wait_done(c, doc["id"])["status"] == "indexed"
    col_a = c.post("/collections", json={"name": "Reading"}).json()
    col_b = c.post("/collections", json={"name": "Later"}).json()
    assert c.post("/collections", json={"name": "Reading"}).status_code == 409
    r = c.patch(
        f"/documents/{doc['id']}",
        json={
            "title": "Duplicate media test",
            "authors": ["Ada Lovelace", "Alan Turing"],
            "year": 2021,
            "doi": "10.1234/abc",
            "collection_ids": [col_a["id"]],
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["title"] == "Duplicate media test"
    assert r.json()["collection_ids"] == [col_a["id"]]
    assert c.patch(f"/documents/{doc['id']}", json={"year": "soon"}).status_code == 400
    assert c.patch(f"/documents/{doc['id']}", json={"owner_id": "x"}).status_code == 400

    def search(col_id):
        deadline = time.monotonic() + 20
        while True:  # the collection payload reaches the index through a worker job
            hits = c.get("/search", params={"q": "table", "collection_id": col_id}).json()
            if (bool(hits) == (col_id == col_a["id"])) or time.monotonic() > deadline:
                return hits
            time.sleep(0.3)

    assert search(col_a["id"])
    assert search(col_b["id"]) == []
    listing = c.get("/documents", params={"collection_id": col_a["id"]}).json()["documents"]
    assert [d["id"] for d in listing] == [doc["id"]]
    assert c.patch(f"/collections/{col_a['id']}", json={"name": "Reading list"}).status_code == 200
    names = {x["name"]: x["document_count"] for x in c.get("/collections").json()["collections"]}
    assert names == {"Reading list": 1, "Later": 0}
    assert c.delete(f"/collections/{col_a['id']}").status_code == 204
    assert c.get(f"/documents/{doc['id']}").json()["collection_ids"] == []


def test_delete_removes_file_chunks_and_vectors(user_api, app_stack, app_db_url):
    from bayes_app.search.embeddings import resolve_name
    from bayes_app.search.index import IndexClient
    from bayes_app.search.runtime import collection_name

    c = user_api()
    unique = pdfs.MEDIA.read_bytes() + f"\n% {uuid.uuid4().hex}\n".encode()  # no other user has it
    doc = upload(c, unique, "media.pdf").json()
    assert wait_done(c, doc["id"])["status"] == "indexed"
    with session_scope(app_db_url) as s:
        sha = s.get(Document, doc["id"]).file_sha256
    path = storage.path_for(app_stack.data_dir / "files", sha)
    index = IndexClient(
        f"http://127.0.0.1:{app_stack.env['BAYES_INDEX_PORT']}",
        collection_name(resolve_name()),
        api_key=app_stack.index_api_key,
    )
    assert path.exists()
    assert index.count(document_id=doc["id"]) > 0

    assert c.delete(f"/documents/{doc['id']}").status_code == 204
    assert c.get(f"/documents/{doc['id']}").status_code == 404
    with session_scope(app_db_url) as s:
        assert s.exec(select(Chunk).where(Chunk.document_id == doc["id"])).first() is None
    deadline = time.monotonic() + 20
    while (path.exists() or index.count(document_id=doc["id"])) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not path.exists()
    assert index.count(document_id=doc["id"]) == 0


def test_reingesting_a_changed_pdf_embeds_only_changed_chunks(user_api, app_db_url):
    c = user_api()
    doc = upload(c, pdfs.PASA.read_bytes(), "pasa.pdf").json()
    first = wait_done(c, doc["id"])
    with session_scope(app_db_url) as s:
        before = {ch.id for ch in s.exec(select(Chunk).where(Chunk.document_id == doc["id"]))}
    assert first["progress"]["total"] == len(before)  # first ingest embeds every chunk

    r = c.put(
        f"/documents/{doc['id']}/file", files={"file": ("pasa-v2.pdf", pdfs.pasa_with_extra_page(), "application/pdf")}
    )
    assert r.status_code == 202, r.text
    second = wait_done(c, doc["id"])
    assert second["status"] == "indexed"
    assert second["page_count"] == 16
    with session_scope(app_db_url) as s:
        rows = list(s.exec(select(Chunk).where(Chunk.document_id == doc["id"])))
    after = {ch.id for ch in rows}
    new_ids = after - before
    assert before <= after  # every unchanged chunk kept its id (no re-embedding)
    assert new_ids
    assert all(ch.page == 16 for ch in rows if ch.id in new_ids)
    assert second["progress"]["total"] == len(new_ids)  # only the new page was embedded
    hits = c.get("/search", params={"q": pdfs.PASA_P7_PHRASE}).json()
    assert hits[0]["page"] == 7


def test_a_shared_file_stays_while_another_document_uses_it(user_api, app_stack, app_db_url):
    a, b = user_api(), user_api()
    data = pdfs.MEDIA.read_bytes() + f"\n% {uuid.uuid4().hex}\n".encode()
    da, db_ = upload(a, data).json(), upload(b, data).json()
    assert da["id"] != db_["id"]  # same bytes, two owners: two documents, one stored file
    wait_done(a, da["id"])
    with session_scope(app_db_url) as s:
        sha = s.get(Document, da["id"]).file_sha256
    assert a.delete(f"/documents/{da['id']}").status_code == 204
    time.sleep(1.5)
    assert storage.path_for(app_stack.data_dir / "files", sha).exists()
    assert b.get(f"/documents/{db_['id']}/file").status_code == 200


def test_a_2000_page_pdf_is_indexed_without_wedging_the_worker(user_api):
    c = user_api()
    t0 = time.monotonic()
    big = upload(c, pdfs.many_pages_pdf(2000), "long.pdf").json()
    small = upload(c, pdfs.MEDIA.read_bytes() + b"\n% small\n", "small.pdf").json()
    done = wait_done(c, big["id"], timeout=400)
    assert done["status"] == "indexed", done
    assert done["page_count"] == 2000, done
    assert wait_done(c, small["id"])["status"] == "indexed"
    print(f"2,000 pages indexed in {time.monotonic() - t0:.0f}s")
    hits = c.get("/search", params={"q": pdfs.PASA_P7_PHRASE, "document_id": big["id"]}).json()
    assert hits
    assert hits[0]["page"] % 15 == 7
