"""Zotero through the running app (web + real worker + index + Redis) and the fake Web API:
connect with a key, the sync actor brings the PDFs through the normal ingestion, no-op and
incremental syncs, bad input, the key never leaves the server, and another user sees nothing."""

from __future__ import annotations

import time

import httpx

from tests.support.fake_zotero import recorded_items, seed_recorded
from tests.support.procs import wait_for
from tests.support.zotero_sync import new_ids


def wait_sync(c: httpx.Client, lib_id: str, after: str | None = None, timeout: float = 120) -> dict:
    """Wait until the library finished a sync that started after `after` (last_sync_at)."""

    def done():
        v = c.get(f"/zotero/libraries/{lib_id}").json()
        return v if v["status"] in ("idle", "error") and v["last_sync_at"] and v["last_sync_at"] != after else None

    return wait_for(done, timeout, 0.2, what="the Zotero sync")


def test_connect_sync_ingest_and_incremental(user_api, fake_zotero, app_stack):
    a = user_api()
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key, username="ada")
    seed_recorded(zlib, pdf_for=3)
    items = [d["key"] for d in recorded_items()]
    zlib.add_pdf(items[5], "WEBDAV02", b"%PDF-1.4 not stored", with_file=False)

    r = a.post("/zotero/libraries", json={"api_key": key})
    assert r.status_code == 201, r.text
    assert key not in r.text
    assert "api_key" not in r.json()
    lib_id = r.json()["id"]
    assert r.json()["permissions"]["library"] is True
    assert r.json()["library_id"] == str(uid)

    v = wait_sync(a, lib_id)
    assert v["status"] == "idle", v
    assert v["version"] == zlib.version
    assert v["last_result"]["documents_added"] == 3
    assert v["progress"]["items_seen"] == len(zlib.items)
    assert v["progress"]["fetched"] == len(zlib.items)
    assert [p["code"] for p in v["problems"]] == ["file_unavailable"]
    assert v["problems"][0]["title"] == recorded_items()[5]["title"]

    # the documents go through the normal ingestion and carry Zotero's metadata + collections
    def indexed():
        docs = a.get("/documents").json()["documents"]
        return docs if len(docs) == 3 and all(d["status"] == "indexed" for d in docs) else None

    docs = wait_for(indexed, 180, 0.5, what="Zotero documents to be indexed")
    titles = {d["title"] for d in docs}
    assert titles == {d["title"] for d in recorded_items()[:3]}
    cols = {c["id"]: c["name"] for c in a.get("/collections").json()["collections"]}
    assert "Non-English items / sherlock films" in cols.values()
    assert all(cols[cid] == "Sherlock Holmes" for d in docs for cid in d["collection_ids"])
    hits = a.get("/search", params={"q": recorded_items()[1]["title"], "k": 3}).json()
    assert hits
    assert hits[0]["title"] == recorded_items()[1]["title"]
    assert a.get("/zotero/libraries").json()["libraries"][0]["documents"]["indexed"] == 3

    # no change: the sync costs one request
    fake_zotero.reset_counters()
    last = v["last_sync_at"]
    assert a.post(f"/zotero/libraries/{lib_id}/sync").status_code == 202
    v = wait_sync(a, lib_id, last)
    assert v["last_result"]["outcome"] == "unchanged"
    assert v["last_result"]["requests"] == 1
    assert len([r for r in fake_zotero.requests if f"/users/{uid}/" in r]) == 1

    # an edit in Zotero: metadata updated, no file downloaded, no re-ingestion
    zlib.edit_item(items[0], title="Renamed in Zotero")
    fake_zotero.reset_counters()
    v = (a.post(f"/zotero/libraries/{lib_id}/sync"), wait_sync(a, lib_id, v["last_sync_at"]))[1]
    assert v["last_result"]["files_downloaded"] == 0
    doc = next(d for d in a.get("/documents").json()["documents"] if d["title"] == "Renamed in Zotero")
    assert doc["status"] == "indexed"
    assert fake_zotero.count("/file") == 0

    # a deleted item: its document goes
    zlib.delete_item(items[1])
    a.post(f"/zotero/libraries/{lib_id}/sync")
    v = wait_sync(a, lib_id, v["last_sync_at"])
    assert v["last_result"]["documents_removed"] == 1
    assert len(a.get("/documents").json()["documents"]) == 2

    # the key never reaches the logs
    time.sleep(0.5)
    assert key not in app_stack.log_path.read_text(errors="replace")

    # disconnect, removing the documents
    assert a.delete(f"/zotero/libraries/{lib_id}?keep_documents=false").status_code == 204
    assert a.get("/zotero/libraries").json()["libraries"] == []
    assert a.get("/documents").json()["documents"] == []


def test_another_user_never_sees_the_library(user_api, fake_zotero):
    a, b = user_api(), user_api()
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key)
    seed_recorded(zlib, pdf_for=1)
    lib_id = a.post("/zotero/libraries", json={"api_key": key}).json()["id"]
    v = wait_sync(a, lib_id)
    assert v["status"] == "idle"
    wait_for(lambda: len(a.get("/documents").json()["documents"]) == 1, 60, what="the document")
    doc_id = a.get("/documents").json()["documents"][0]["id"]
    assert b.get("/zotero/libraries").json()["libraries"] == []
    for method, path in [
        ("GET", f"/zotero/libraries/{lib_id}"),
        ("POST", f"/zotero/libraries/{lib_id}/sync"),
        ("DELETE", f"/zotero/libraries/{lib_id}"),
        ("GET", f"/documents/{doc_id}"),
    ]:
        r = b.request(method, path)
        assert r.status_code == 404, (method, path)
        assert r.json()["error"]["code"] == "not_found", (method, path)
    assert b.get("/documents").json()["documents"] == []
    # B connecting the same Zotero library with the same key gets their own copy, never A's rows
    r = b.post("/zotero/libraries", json={"api_key": key})
    assert r.status_code == 201
    assert r.json()["id"] != lib_id
    assert a.get(f"/zotero/libraries/{lib_id}").status_code == 200


def test_bad_input_gets_clear_messages(user_api, fake_zotero):
    c = user_api()
    r = c.post("/zotero/libraries", json={})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "missing_fields"
    r = c.post("/zotero/libraries", json={"api_key": "wrongkey123"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "invalid_key"
    assert "wrongkey123" not in r.text
    r = c.post("/zotero/libraries", json={"api_key": "abc", "library_type": "group"})
    assert r.status_code == 400
    assert "group id" in r.json()["error"]["message"]
    r = c.post("/zotero/libraries", json={"api_key": "abc", "colour": "red"})
    assert r.status_code == 400
    assert "colour" in r.json()["error"]["message"]
    r = c.post("/zotero/libraries", content=b"{not json")
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "bad_json"
    uid, key = new_ids()
    fake_zotero.add_user(uid, key, groups={uid + 1: "Lab"})
    r = c.post("/zotero/libraries", json={"api_key": key, "library_type": "group", "library_id": str(uid + 7)})
    assert r.status_code == 403
    r = c.post("/zotero/libraries", json={"api_key": key, "library_type": "group", "library_id": str(uid + 1)})
    assert r.status_code == 201
    assert r.json()["library_type"] == "group"
    assert c.delete(f"/zotero/libraries/{r.json()['id']}?keep_documents=maybe").status_code == 400
    assert httpx.get(str(c.base_url).rstrip("/") + "/zotero/libraries").status_code == 401
