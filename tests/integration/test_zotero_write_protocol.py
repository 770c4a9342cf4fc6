"""The fake Zotero Web API's write protocol, driven by the real pyzotero: multi-object POST with
`successful/unchanged/failed`, object versions (412/428), the library precondition, write tokens,
read-only keys, 50-object limit, child-note rules, annotation children and group libraries."""

from __future__ import annotations

import httpx2
import pytest
from pyzotero import Zotero
from pyzotero import errors as ze

from tests.support.fake_zotero_write import add_annotation, add_group, grant_write
from tests.support.zotero_sync import new_ids


def client(fz, lid, kind: str, key: str) -> Zotero:
    z = Zotero(lid, kind, key, client=httpx2.Client(trust_env=False, follow_redirects=True))
    z.endpoint = fz.base
    return z


def test_create_update_unchanged_and_conflicts(fake_zotero):
    uid, key = new_ids()
    lib = fake_zotero.add_user(uid, key, write=True)
    z = client(fake_zotero, uid, "user", key)
    made = z.create_collections([{"name": "Bayes"}])
    ckey = made["successful"]["0"]["key"]
    assert lib.collections[ckey]["name"] == "Bayes"
    assert made["success"]["0"] == ckey

    r = z.create_items(
        [
            {"itemType": "note", "note": "<p>one</p>", "collections": [ckey]},
            {"itemType": "note", "note": "<p>child</p>", "parentItem": "NOPE2345"},
        ]
    )
    note = r["successful"]["0"]["data"]
    assert set(r["failed"]) == {"1"}
    assert r["failed"]["1"]["code"] == 400
    assert lib.items[note["key"]]["version"] == lib.version == note["version"]

    # same data again: unchanged; new data with the right version: updated (PATCH semantics)
    r = z.create_items([{"key": note["key"], "version": note["version"], "note": "<p>one</p>"}])
    assert r["unchanged"] == {"0": note["key"]}
    assert not r["successful"]
    r = z.create_items([{"key": note["key"], "version": note["version"], "note": "<p>two</p>"}])
    v2 = r["successful"]["0"]["version"]
    assert v2 > note["version"]
    assert lib.items[note["key"]]["collections"] == [ckey]

    # stale version → per-object 412 (the other object is still written); no version → 428
    r = z.create_items(
        [
            {"key": note["key"], "version": note["version"], "note": "<p>x</p>"},
            {"itemType": "note", "note": "<p>other</p>"},
            {"key": note["key"], "note": "<p>y</p>"},
        ]
    )
    assert r["failed"]["0"]["code"] == 412
    assert r["failed"]["2"]["code"] == 428
    assert "1" in r["successful"]
    assert lib.items[note["key"]]["note"] == "<p>two</p>"

    # a client-made key with version 0 creates; again with version 0 → 412 (no duplicate)
    r = z.create_items([{"key": "ABCD2345", "version": 0, "itemType": "note", "note": "<p>k</p>"}])
    assert r["success"] == {"0": "ABCD2345"}
    r = z.create_items([{"key": "ABCD2345", "version": 0, "itemType": "note", "note": "<p>k</p>"}])
    assert r["failed"]["0"]["code"] == 412
    # a known key that is gone with a version > 0 → 404
    assert z.create_items([{"key": "GONE2345", "version": 3, "note": "x"}])["failed"]["0"]["code"] == 404

    # library precondition: a stale If-Unmodified-Since-Version fails the whole request
    with pytest.raises(ze.PreConditionFailedError):
        z.create_items([{"itemType": "note", "note": "<p>late</p>"}], last_modified=lib.version - 1)
    n = len(lib.items)
    z.create_items([{"itemType": "note", "note": "<p>ok</p>"}], last_modified=lib.version)
    assert len(lib.items) == n + 1

    with pytest.raises(ze.TooManyItemsError):
        z.create_items([{"itemType": "note", "note": str(i)} for i in range(51)])
    # a child note cannot go into a collection
    r = z.create_items([{"itemType": "note", "note": "c", "parentItem": note["key"], "collections": [ckey]}])
    assert r["failed"]["0"]["code"] == 400


def test_write_token_is_single_use(fake_zotero):
    uid, key = new_ids()
    lib = fake_zotero.add_user(uid, key, write=True)
    h = {"Zotero-API-Key": key, "Zotero-Write-Token": "a" * 32}
    with httpx2.Client(base_url=fake_zotero.base, trust_env=False) as http:
        first = http.post(f"/users/{uid}/items", json=[{"itemType": "note", "note": "n"}], headers=h)
        again = http.post(f"/users/{uid}/items", json=[{"itemType": "note", "note": "n"}], headers=h)
        big = http.post(f"/users/{uid}/items", json=[{"itemType": "note"}] * 51, headers={"Zotero-API-Key": key})
    assert first.status_code == 200
    assert again.status_code == 412
    assert big.status_code == 413
    assert len(lib.items) == 1


def test_read_only_key_and_groups(fake_zotero):
    uid, key = new_ids()
    fake_zotero.add_user(uid, key)
    with pytest.raises(ze.UserNotAuthorisedError):
        client(fake_zotero, uid, "user", key).create_items([{"itemType": "note", "note": "n"}])
    gid = uid + 500000
    group = add_group(fake_zotero, key, gid, "Lab group")
    zg = client(fake_zotero, gid, "group", key)
    with pytest.raises(ze.UserNotAuthorisedError):
        zg.create_items([{"itemType": "note", "note": "n"}])
    grant_write(fake_zotero, key, group=gid)
    r = zg.create_items([{"itemType": "note", "note": "n"}])
    assert r["successful"]["0"]["library"]["type"] == "group"
    assert len(group.items) == 1


def test_annotations_are_child_items_of_the_attachment(fake_zotero):
    uid, key = new_ids()
    lib = fake_zotero.add_user(uid, key, write=True)
    lib.put_item({"key": "PAR23456", "itemType": "journalArticle", "title": "T"})
    lib.add_pdf("PAR23456", "ATT23456", b"%PDF-1.4")
    add_annotation(lib, "ATT23456", "ANN23456", text="highlighted words", comment="mine", page_index=2)
    z = client(fake_zotero, uid, "user", key)
    anns = z.items(itemType="annotation")
    assert [a["data"]["annotationText"] for a in anns] == ["highlighted words"]
    assert "ANN23456" in z.item_versions()
    assert all(t["key"] != "ANN23456" for t in z.top())
    # the server checks annotations written through the API
    r = z.create_items(
        [
            {"itemType": "annotation", "parentItem": "ATT23456", "annotationText": "x"},
            {"itemType": "annotation", "parentItem": "PAR23456", "annotationType": "highlight"},
            {
                "itemType": "annotation",
                "parentItem": "ATT23456",
                "annotationType": "highlight",
                "annotationPosition": '{"pageIndex":0,"rects":[[1,2,3,4]]}',
            },
        ]
    )
    assert r["failed"]["0"]["code"] == 400
    assert r["failed"]["1"]["code"] == 400
    assert "2" in r["successful"]
