"""Sharing over HTTP on SQLite and PostgreSQL: every map operation of the OpenAPI document × every
role (owner, editor, viewer, non-member, removed member), the members API, maps shared with me,
cross-library citations (the cited document opens; an uncited one, its search and chunks are 404),
read-only collection shares, per-user undo and last-writer-wins with the node's history."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine
from bayes_app.maps import citations, proposals, service
from bayes_app.models import Citation, Collection, DocumentCollection
from tests.integration.test_maps_service import library

QUOTE = "Small language models can match larger ones on narrow tasks when they are fine-tuned on curated data."
READ, EDIT, OWN = "viewer", "editor", "owner"
# what each map operation asks of the caller's role; a new map route must be classified here
NEED = {
    ("GET", "/mindmaps/{map_id}"): READ,
    ("PATCH", "/mindmaps/{map_id}"): OWN,
    ("PUT", "/mindmaps/{map_id}/watch"): OWN,
    ("DELETE", "/mindmaps/{map_id}"): OWN,
    ("GET", "/mindmaps/{map_id}/revision"): READ,
    ("POST", "/mindmaps/{map_id}/undo"): EDIT,
    ("POST", "/mindmaps/{map_id}/layout"): EDIT,
    ("POST", "/mindmaps/{map_id}/nodes"): EDIT,
    ("PATCH", "/mindmaps/{map_id}/nodes/{node_id}"): EDIT,
    ("DELETE", "/mindmaps/{map_id}/nodes/{node_id}"): EDIT,
    ("POST", "/mindmaps/{map_id}/nodes/{node_id}/check-support"): EDIT,
    ("POST", "/mindmaps/{map_id}/nodes/{node_id}/citations"): EDIT,
    ("DELETE", "/mindmaps/{map_id}/citations/{citation_id}"): EDIT,
    ("POST", "/mindmaps/{map_id}/citations/{citation_id}/accept-rewrite"): EDIT,
    ("POST", "/mindmaps/{map_id}/proposals/{proposal_id}/{decision}"): EDIT,
    ("GET", "/mindmaps/{map_id}/export.{fmt}"): READ,
    ("GET", "/mindmaps/{map_id}/runs"): READ,
    ("POST", "/mindmaps/{map_id}/runs"): EDIT,
    ("POST", "/mindmaps/{map_id}/zotero"): OWN,
    ("POST", "/mindmaps/{map_id}/zotero/highlights"): OWN,
    ("GET", "/mindmaps/{map_id}/members"): READ,
    ("POST", "/mindmaps/{map_id}/members"): OWN,
    ("PATCH", "/mindmaps/{map_id}/members/{member_id}"): OWN,
    ("DELETE", "/mindmaps/{map_id}/members/{member_id}"): OWN,
    ("GET", "/mindmaps/{map_id}/nodes/{node_id}/history"): READ,
    ("GET", "/mindmaps/{map_id}/history"): EDIT,
    ("POST", "/mindmaps/{map_id}/history/{edit_id}/revert"): EDIT,
    ("GET", "/mindmaps/{map_id}/documents"): OWN,
    ("POST", "/mindmaps/{map_id}/documents"): OWN,
    ("DELETE", "/mindmaps/{map_id}/documents/{document_id}"): OWN,
    ("GET", "/mindmaps/{map_id}/missing"): OWN,
    ("GET", "/mindmaps/{map_id}/presence"): READ,
    ("POST", "/mindmaps/{map_id}/presence"): READ,
}
RANK = {READ: 1, EDIT: 2, OWN: 3}


@pytest.fixture
def api(db_url, configure, redis_server):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    configure(DATABASE_URL=db_url, REDIS_URL=redis_server.url)
    with TestClient(build_api()) as c:
        yield c


def _user(db_url: str) -> dict[str, Any]:
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        user = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        _, token = accounts.create_api_token(db, user, timedelta(days=1))
        db.commit()
        return {"id": user.id, "email": user.email, "h": {"Authorization": f"Bearer {token}"}}


@pytest.fixture
def people(db_url) -> dict[str, dict[str, Any]]:
    names = ("owner", "editor", "viewer", "stranger", "removed", "target", "newcomer")
    return {n: _user(db_url) for n in names}


def _shared_map(api, db_url: str, p: dict[str, dict[str, Any]]) -> dict[str, str]:
    """A map of `owner` with a theme, a cited claim, a proposal, and its members."""
    own = p["owner"]["id"]
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        chunk = library(db, own)
        m = service.create_map(db, own, "Shared")
        root = service.root_of(db, m["id"]).id
        theme = service.add_child(db, own, m["id"], root, "Cost", "theme")
        claim = service.add_child(db, own, m["id"], theme["id"], "Small models win.", "claim")
        cit = citations.attach_citation(db, own, m["id"], claim["id"], chunk.id, QUOTE)
        row = db.get(Citation, cit["id"])
        row.suggested_rewrite = "Small models can win."
        db.add(row)
        prop = proposals.create_proposal(db, m["id"], "restructure", [{"title": "G", "node_ids": [claim["id"]]}])
        db.commit()
        ids = {"map_id": m["id"], "root": root, "node_id": claim["id"], "citation_id": cit["id"]}
        ids |= {"proposal_id": prop.id, "chunk_id": chunk.id, "document_id": chunk.document_id}
    base = f"/api/v1/mindmaps/{m['id']}/members"
    for name, role in (("editor", EDIT), ("viewer", READ), ("removed", EDIT), ("target", READ)):
        r = api.post(base, json={"email": p[name]["email"], "role": role}, headers=p["owner"]["h"])
        assert r.status_code == 201, r.text
    assert api.delete(f"{base}/{p['removed']['id']}", headers=p["owner"]["h"]).status_code == 200
    return ids


def _store_file(db_url: str, document_id: str) -> bytes:
    """Give the document a stored file (a tiny PDF) so that its file route can answer 200."""
    from bayes_app.library import storage
    from bayes_app.models import Document

    data = b"%PDF-1.4\n% shared " + uuid.uuid4().hex.encode() + b"\n%%EOF\n"
    stored = storage.default_store().store_stream(io.BytesIO(data), 1_000_000)
    with Session(get_engine(db_url)) as db:
        doc = db.get(Document, document_id)
        doc.file_sha256 = stored.sha256
        db.add(doc)
        db.commit()
    return data


def _request(api, method: str, path: str, ids: dict[str, str], p: dict, who: str):
    url = "/api/v1" + path.format(
        map_id=ids["map_id"],
        node_id=ids["node_id"],
        citation_id=ids["citation_id"],
        proposal_id=ids["proposal_id"],
        decision="accept",
        fmt="json",
        member_id=p["target"]["id"],
        edit_id="no-such-edit",
        document_id=ids["document_id"],
    )
    bodies = {
        ("PATCH", "/mindmaps/{map_id}"): {"title": "Renamed"},
        ("PUT", "/mindmaps/{map_id}/watch"): {"watch_new_papers": False},
        ("POST", "/mindmaps/{map_id}/nodes"): {"parent_id": ids["root"], "title": "New"},
        ("PATCH", "/mindmaps/{map_id}/nodes/{node_id}"): {"title": "Edited"},
        ("POST", "/mindmaps/{map_id}/nodes/{node_id}/citations"): {"chunk_id": ids["chunk_id"], "quote": QUOTE},
        ("POST", "/mindmaps/{map_id}/runs"): {"kind": "expand", "node_id": ids["node_id"]},
        ("POST", "/mindmaps/{map_id}/zotero"): {"library_id": "x"},
        ("POST", "/mindmaps/{map_id}/zotero/highlights"): {},
        ("POST", "/mindmaps/{map_id}/members"): {"email": p["newcomer"]["email"], "role": "viewer"},
        ("PATCH", "/mindmaps/{map_id}/members/{member_id}"): {"role": "editor"},
        ("POST", "/mindmaps/{map_id}/documents"): {"document_id": ids["document_id"]},
    }
    body = bodies.get((method, path))
    if method in ("POST", "PATCH", "PUT") and body is None:
        body = {}
    return api.request(method, url, json=body, headers=p[who]["h"])


def test_every_map_operation_for_every_role(api, db_url, people):
    spec = api.get("/api/v1/openapi.json").json()
    ops = [
        (method.upper(), path[len("/api/v1") :])
        for path, items in spec["paths"].items()
        if path.startswith("/api/v1/mindmaps/{map_id}")
        for method in items
    ]
    assert set(ops) == set(NEED), "classify every map operation in NEED"
    for method, path in ops:
        need = NEED[(method, path)]
        for who, role in (("stranger", None), ("removed", None), ("viewer", READ), ("editor", EDIT), ("owner", OWN)):
            ids = _shared_map(api, db_url, people)
            r = _request(api, method, path, ids, people, who)
            where = f"{method} {path} as {who}: {r.status_code} {r.text[:200]}"
            if role is None:
                assert r.status_code == 404, where
            elif RANK[role] < RANK[need]:
                assert r.status_code == 403, where
                assert r.json()["error"]["code"] == "forbidden_role", where
            else:  # allowed: whatever the operation answers, never a refusal of the map itself
                assert r.status_code != 403, where
                assert r.status_code < 500, where
                assert r.status_code != 404 or "mindmap" not in r.json()["error"]["message"], where


def test_members_api_and_shared_with_me(api, db_url, people):
    p, ids = people, _shared_map(api, db_url, people)
    base = f"/api/v1/mindmaps/{ids['map_id']}/members"
    oh = p["owner"]["h"]
    r = api.post(base, json={"email": "nobody-" + uuid.uuid4().hex[:6] + "@example.com", "role": "viewer"}, headers=oh)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "user_not_found"
    r = api.post(base, json={"email": p["owner"]["email"], "role": "viewer"}, headers=oh)
    assert r.status_code == 400
    r = api.post(base, json={"email": p["newcomer"]["email"], "role": "admin"}, headers=oh)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "bad_role"
    r = api.post(base, json={"email": p["viewer"]["email"].upper(), "role": "editor"}, headers=oh)
    assert r.status_code == 409
    listed = api.get(base, headers=p["viewer"]["h"]).json()
    assert listed["owner"]["email"] == p["owner"]["email"]
    assert {(m["email"], m["role"]) for m in listed["members"]} == {
        (p["editor"]["email"], EDIT),
        (p["viewer"]["email"], READ),
        (p["target"]["email"], READ),
    }
    mine = api.get("/api/v1/mindmaps", headers=p["viewer"]["h"]).json()
    assert mine["mindmaps"] == []
    assert [(m["id"], m["role"], m["owner_email"]) for m in mine["shared"]] == [
        (ids["map_id"], READ, p["owner"]["email"])
    ]
    assert api.get("/api/v1/mindmaps", headers=oh).json()["mindmaps"][0]["role"] == OWN
    assert api.get(f"/api/v1/mindmaps/{ids['map_id']}", headers=p["viewer"]["h"]).json()["role"] == READ
    # a role change takes effect at once; so does removal
    node_url = f"/api/v1/mindmaps/{ids['map_id']}/nodes/{ids['node_id']}"
    assert api.patch(node_url, json={"title": "x"}, headers=p["viewer"]["h"]).status_code == 403
    r = api.patch(f"{base}/{p['viewer']['id']}", json={"role": "editor"}, headers=oh)
    assert r.status_code == 200
    assert r.json()["role"] == EDIT
    assert api.patch(node_url, json={"title": "x"}, headers=p["viewer"]["h"]).status_code == 200
    assert api.delete(f"{base}/{p['viewer']['id']}", headers=oh).status_code == 200
    assert api.get(f"/api/v1/mindmaps/{ids['map_id']}", headers=p["viewer"]["h"]).status_code == 404
    assert api.get("/api/v1/mindmaps", headers=p["viewer"]["h"]).json()["shared"] == []
    # presence: who has the map open (heartbeats); a removed member's beat is refused
    pres = f"/api/v1/mindmaps/{ids['map_id']}/presence"
    api.post(pres, headers=oh)
    seen = api.post(pres, headers=p["editor"]["h"]).json()["viewers"]
    assert {v["email"] for v in seen} == {p["owner"]["email"], p["editor"]["email"]}
    assert api.post(pres, headers=p["viewer"]["h"]).status_code == 404
    assert api.get(pres, headers=p["stranger"]["h"]).status_code == 404
    # the admin sees who shares what with whom; nobody else does
    assert api.get("/api/v1/admin/shares", headers=p["viewer"]["h"]).status_code == 403
    with Session(get_engine(db_url)) as db:
        admin = accounts.register(db, f"a{uuid.uuid4().hex[:8]}@example.com", "pw-" + uuid.uuid4().hex, is_admin=True)
        db.commit()
        _, token = accounts.create_api_token(db, admin, timedelta(days=1))
        db.commit()
    rows = api.get("/api/v1/admin/shares", headers={"Authorization": f"Bearer {token}"}).json()["shares"]
    assert {(r["kind"], r["title"], r["owner"], r["member"], r["role"]) for r in rows} >= {
        ("map", "Shared", p["owner"]["email"], p["editor"]["email"], EDIT)
    }
    # a member may leave
    assert api.delete(f"{base}/{p['target']['id']}", headers=p["target"]["h"]).status_code == 200
    assert api.get(f"/api/v1/mindmaps/{ids['map_id']}", headers=p["target"]["h"]).status_code == 404


def test_cited_documents_open_and_nothing_else(api, db_url, people):
    p, ids = people, _shared_map(api, db_url, people)
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        other = library(db, p["owner"]["id"])  # same library, not cited by the map
    vh = p["viewer"]["h"]
    data = _store_file(db_url, ids["document_id"])
    _store_file(db_url, other.document_id)
    cited = api.get(f"/api/v1/documents/{ids['document_id']}/file", headers=vh)
    assert cited.status_code == 200
    assert cited.content == data
    part = api.get(f"/api/v1/documents/{ids['document_id']}/file", headers={**vh, "Range": "bytes=0-7"})
    assert part.content == data[:8]
    assert part.status_code in (200, 206)
    for who in ("stranger", "removed"):
        r = api.get(f"/api/v1/documents/{ids['document_id']}/file", headers=p[who]["h"])
        assert r.status_code == 404, who
    for url in (
        f"/api/v1/documents/{other.document_id}/file",
        f"/api/v1/documents/{other.document_id}",
        f"/api/v1/documents/{ids['document_id']}",  # the cited one's record, chunks, references stay the owner's
        f"/api/v1/documents/{ids['document_id']}/references",
        f"/api/v1/documents/{ids['document_id']}/citations",
        f"/api/v1/search?q=small&document_id={ids['document_id']}",
    ):
        assert api.get(url, headers=vh).status_code == 404, url
    # the viewer's own library search sees none of the owner's passages
    assert api.get("/api/v1/search?q=small+language+models", headers=vh).json() == []


def test_collection_shared_read_only(api, db_url, people):
    p = people
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        chunk = library(db, p["owner"]["id"])
        outside = library(db, p["owner"]["id"])
        col = Collection(owner_id=p["owner"]["id"], name="Team")
        db.add(col)
        db.flush()
        db.add(DocumentCollection(document_id=chunk.document_id, collection_id=col.id))
        db.commit()
        cid = col.id
    base = f"/api/v1/collections/{cid}/members"
    oh, vh = p["owner"]["h"], p["viewer"]["h"]
    assert api.post(base, json={"email": p["viewer"]["email"], "role": "editor"}, headers=oh).status_code == 400
    assert api.post(base, json={"email": p["viewer"]["email"], "role": "viewer"}, headers=vh).status_code == 404
    r = api.post(base, json={"email": p["viewer"]["email"], "role": "viewer"}, headers=oh)
    assert r.status_code == 201
    assert r.json()["role"] == "viewer"
    assert api.get(base, headers=vh).status_code == 404  # the member list is the owner's
    shared = api.get("/api/v1/shared/collections", headers=vh).json()["collections"]
    assert [(c["id"], c["owner_email"], c["document_count"]) for c in shared] == [(cid, p["owner"]["email"], 1)]
    _store_file(db_url, chunk.document_id)
    _store_file(db_url, outside.document_id)
    assert api.get(f"/api/v1/documents/{chunk.document_id}/file", headers=vh).status_code == 200
    assert api.get(f"/api/v1/documents/{outside.document_id}/file", headers=vh).status_code == 404
    assert api.get(f"/api/v1/search?q=small&collection_id={cid}", headers=p["stranger"]["h"]).status_code == 404
    # the member's search scoped to the shared collection reads the owner's library, inside it
    # (no index runs in this test: the scope decision is checked directly)
    from bayes_app.chat.conversations import ChatError, normalize_scope
    from bayes_app.sharing.collections import scope_owner

    with Session(get_engine(db_url)) as db:
        assert scope_owner(db, p["viewer"]["id"], [cid]) == p["owner"]["id"]
        assert scope_owner(db, p["viewer"]["id"], None) == p["viewer"]["id"]
        # ... and it is a valid scope of the member's own Ask (not of a stranger's)
        assert normalize_scope(db, p["viewer"]["id"], {"collection_ids": [cid]}) == {"collection_ids": [cid]}
        with pytest.raises(ChatError):
            normalize_scope(db, p["stranger"]["id"], {"collection_ids": [cid]})
    # the member cites a passage of the shared collection on their own map; an outside passage is refused
    mine = api.post("/api/v1/mindmaps", json={"title": "Mine"}, headers=vh).json()
    claim = {"parent_id": mine["root_id"], "title": "Small models win.", "kind": "claim"}
    claim_id = api.post(f"/api/v1/mindmaps/{mine['id']}/nodes", json=claim, headers=vh).json()["id"]
    cite = f"/api/v1/mindmaps/{mine['id']}/nodes/{claim_id}/citations"
    assert api.post(cite, json={"chunk_id": outside.id, "quote": QUOTE}, headers=vh).status_code == 404
    assert api.post(cite, json={"chunk_id": chunk.id, "quote": QUOTE}, headers=vh).status_code == 201
    export = f"/api/v1/mindmaps/{mine['id']}/export"
    [shared_ref] = [ln for ln in api.get(f"{export}.md", headers=vh).text.splitlines() if ln.startswith("1. ")]
    assert "No longer shared" not in shared_ref
    assert "@misc" in api.get(f"{export}.bib", headers=vh).text
    assert api.delete(f"{base}/{p['viewer']['id']}", headers=oh).status_code == 200
    # unshared: the node keeps its citation, which shows "no longer shared with you" instead of the quote
    [c] = api.get(f"/api/v1/mindmaps/{mine['id']}", headers=vh).json()["citations"]
    assert (c["quote"], c["title"], c["source_removed_reason"]) == ("", "No longer shared with you", "no_longer_shared")
    md = api.get(f"{export}.md", headers=vh).text  # exports keep the node, not the unshared source
    # (the page stands at the marker in the text, the reference list names the source)
    assert shared_ref not in md
    assert "\n1. No longer shared with you\n" in md
    assert "[1, p. " in md
    assert "@misc" not in api.get(f"{export}.bib", headers=vh).text
    assert api.get(f"/api/v1/documents/{chunk.document_id}/file", headers=vh).status_code == 404
    assert api.get(f"/api/v1/search?q=small&collection_id={cid}", headers=vh).status_code == 404
    assert api.get("/api/v1/shared/collections", headers=vh).json()["collections"] == []
    with Session(get_engine(db_url)) as db, pytest.raises(ChatError):
        normalize_scope(db, p["viewer"]["id"], {"collection_ids": [cid]})


def test_undo_is_per_user_and_concurrent_edits_keep_both(api, db_url, people):
    p, ids = people, _shared_map(api, db_url, people)
    m = f"/api/v1/mindmaps/{ids['map_id']}"
    oh, eh = p["owner"]["h"], p["editor"]["h"]
    node = f"{m}/nodes/{ids['node_id']}"
    assert api.patch(node, json={"title": "Owner's title"}, headers=oh).status_code == 200
    r = api.patch(node, json={"body": "Editor's body"}, headers=eh)
    assert r.json()["edited_by"] == p["editor"]["id"]
    added = api.post(f"{m}/nodes", json={"parent_id": ids["root"], "title": "Editor's node"}, headers=eh).json()
    assert added["author_id"] == p["editor"]["id"]
    # the owner's undo reverts the owner's title edit only: the editor's body and node stay
    assert api.post(f"{m}/undo", headers=oh).json()["undone"] == "update_node"
    view = api.get(m, headers=oh).json()
    nodes = {n["id"]: n for n in view["nodes"]}
    assert nodes[ids["node_id"]]["title"] == "Small models win."
    assert nodes[ids["node_id"]]["body"] == "Editor's body"
    assert added["id"] in nodes
    # same field, two writers: the last one wins, the other change stays in the node's history
    api.patch(node, json={"title": "Editor says A"}, headers=eh)
    api.patch(node, json={"title": "Owner says B"}, headers=oh)
    assert {n["id"]: n for n in api.get(m, headers=eh).json()["nodes"]}[ids["node_id"]]["title"] == "Owner says B"
    hist = api.get(f"{node}/history", headers=p["viewer"]["h"]).json()["changes"]
    titles = [(c["user_id"], c["after"].get("title")) for c in hist if "title" in c["after"]]
    assert titles[:2] == [(p["owner"]["id"], "Owner says B"), (p["editor"]["id"], "Editor says A")]
    # the editor's undo reverts the editor's latest edit, and not the owner's newer title
    assert api.post(f"{m}/undo", headers=eh).json()["undone"] == "update_node"
    after = {n["id"]: n for n in api.get(m, headers=oh).json()["nodes"]}
    assert after[ids["node_id"]]["title"] == "Owner says B"
    # the editor's node, under which the owner added a child: the editor's undo keeps both
    api.post(f"{m}/nodes", json={"parent_id": added["id"], "title": "Owner's child"}, headers=oh)
    assert api.post(f"{m}/undo", headers=eh).json()["undone"] == "add_child"
    titles = {n["title"] for n in api.get(m, headers=oh).json()["nodes"]}
    assert {"Editor's node", "Owner's child"} <= titles
    # viewer: no undo at all
    assert api.post(f"{m}/undo", headers=p["viewer"]["h"]).status_code == 403


def test_map_scoped_to_a_shared_collection(api, db_url, people):
    """A member scopes a new map to a collection shared with them (the view names it); an unknown
    or unshared collection is 404 with no map made; once unshared, a run on the map is refused."""
    from bayes_app.models import Mindmap, Operation

    p = people
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        chunk = library(db, p["owner"]["id"])
        col = Collection(owner_id=p["owner"]["id"], name="Team papers")
        db.add(col)
        db.flush()
        db.add(DocumentCollection(document_id=chunk.document_id, collection_id=col.id))
        db.commit()
        cid = col.id
    oh, vh = p["owner"]["h"], p["viewer"]["h"]

    def maps_of(user: str) -> int:
        with Session(get_engine(db_url)) as db:
            return len(db.exec(select(Mindmap).where(Mindmap.owner_id == p[user]["id"])).all())

    body = {"title": "Scoped", "question": "Do small models win?", "collection_id": cid}
    for bad in ("nope", cid):  # unknown, then not (yet) shared with the viewer
        r = api.post("/api/v1/mindmaps", json={**body, "collection_id": bad}, headers=vh)
        assert (r.status_code, r.json()["error"]["code"]) == (404, "not_found"), r.text
    assert maps_of("viewer") == 0
    r = api.post(
        f"/api/v1/collections/{cid}/members", json={"email": p["viewer"]["email"], "role": "viewer"}, headers=oh
    )
    assert r.status_code == 201
    r = api.post("/api/v1/mindmaps", json=body, headers=vh)
    assert r.status_code == 201, r.text
    m = r.json()
    assert (m["collection_id"], m["collection_name"]) == (cid, "Team papers")
    # the Maps page's scope choices: the viewer's own collections (none) and the shared one
    from bayes_app.usecases import maps as app_maps

    assert [c.id for c in app_maps.scope_choices(p["viewer"]["id"])] == [cid]
    assert api.get(f"/api/v1/mindmaps/{m['id']}", headers=vh).json()["collection_name"] == "Team papers"
    [row] = [x for x in api.get("/api/v1/mindmaps", headers=vh).json()["mindmaps"] if x["id"] == m["id"]]
    assert row["collection_id"] == cid
    plain = api.post("/api/v1/mindmaps", json={"title": "Whole library"}, headers=vh).json()
    assert plain["collection_id"] is None
    assert plain["collection_name"] is None

    assert api.delete(f"/api/v1/collections/{cid}/members/{p['viewer']['id']}", headers=oh).status_code == 200
    assert app_maps.scope_choices(p["viewer"]["id"]) == []
    r = api.post(f"/api/v1/mindmaps/{m['id']}/runs", json={"kind": "build_map"}, headers=vh)
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert (err["code"], err["message"]) == (
        "collection_not_shared",
        "This map's collection is no longer shared with you.",
    )
    with Session(get_engine(db_url)) as db:
        assert db.exec(select(Operation).where(Operation.owner_id == p["viewer"]["id"])).all() == []


def test_proposals_about_unreadable_papers_are_the_owners_alone(api, db_url, people):
    """Issue 36.2: an update proposal naming a paper the members cannot open (here: an uncited
    draft of the owner's) is not in a viewer's or editor's map view and cannot be decided by
    them; the owner sees and accepts it. One about the cited paper stays visible to members."""
    from bayes_app.maps import updates

    p, ids = people, _shared_map(api, db_url, people)
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        draft = library(db, p["owner"]["id"])  # the owner's private draft: no map cites it

        def item(chunk_id: str, doc_id: str) -> dict[str, Any]:
            cit = {"document_id": doc_id, "chunk_id": chunk_id, "page": 1, "quote": QUOTE}
            return {"action": "insert", "text": "Drafted claim.", "document_id": doc_id, "document_title": "Draft",
                    "page": 1, "quote": QUOTE, "citation": cit, "parent_id": ids["root"]}  # fmt: skip

        private = updates.create_update_proposal(
            db, ids["map_id"], [{"id": draft.document_id, "title": "Draft"}], [item(draft.id, draft.document_id)], None
        )
        cited = updates.create_update_proposal(
            db,
            ids["map_id"],
            [{"id": ids["document_id"], "title": "Cited"}],
            [item(ids["chunk_id"], ids["document_id"])],
            None,
        )
        db.commit()
    m = f"/api/v1/mindmaps/{ids['map_id']}"
    for who in ("viewer", "editor"):
        shown = api.get(m, headers=p[who]["h"]).json()["proposals"]
        assert {x["id"] for x in shown} == {ids["proposal_id"], cited.id}, who
        assert draft.document_id not in str(shown), who
    r = api.post(f"{m}/proposals/{private.id}/accept", json={}, headers=p["editor"]["h"])
    assert r.status_code == 404
    r = api.post(f"{m}/proposals/{private.id}/accept", json={"items": [0]}, headers=p["editor"]["h"])
    assert r.status_code == 404
    r = api.post(f"{m}/proposals/{private.id}/reject", json={}, headers=p["viewer"]["h"])
    assert r.status_code == 403
    assert {x["id"] for x in api.get(m, headers=p["owner"]["h"]).json()["proposals"]} >= {private.id, cited.id}
    assert api.get(f"/api/v1/documents/{draft.document_id}/file", headers=p["viewer"]["h"]).status_code == 404


def test_owner_restores_an_editors_deleted_subtree_from_the_history(api, db_url, people):
    """Issue 36.8: the map's history (owner and editors; newest first, with who and which
    nodes); the owner reverts an editor's deletion, with its citations, after removing the
    editor, while the owner's own unrelated rename stays; an editor may revert only their own."""
    p, ids = people, _shared_map(api, db_url, people)
    m = f"/api/v1/mindmaps/{ids['map_id']}"
    oh, eh = p["owner"]["h"], p["editor"]["h"]
    view = api.get(m, headers=oh).json()
    theme = next(n for n in view["nodes"] if n["title"] == "Cost")
    note = api.post(f"{m}/nodes", json={"parent_id": ids["root"], "title": "Editor's note"}, headers=eh).json()
    assert api.delete(f"{m}/nodes/{theme['id']}", headers=eh).status_code == 200
    assert api.patch(f"{m}/nodes/{ids['root']}", json={"title": "Owner's question"}, headers=oh).status_code == 200
    hist = api.get(f"{m}/history", headers=eh).json()["changes"]
    assert [(h["action"], h["user_id"]) for h in hist[:3]] == [
        ("update_node", p["owner"]["id"]),
        ("delete_subtree", p["editor"]["id"]),
        ("add_child", p["editor"]["id"]),
    ]
    deleted = hist[1]
    assert {theme["id"], ids["node_id"]} <= set(deleted["node_ids"])
    assert deleted["email"] == p["editor"]["email"]
    assert api.get(f"{m}/history", headers=p["viewer"]["h"]).status_code == 403
    # an editor reverts only their own changes
    r = api.post(f"{m}/history/{hist[0]['edit_id']}/revert", headers=eh)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "not_your_edit"
    assert api.post(f"{m}/history/{hist[2]['edit_id']}/revert", headers=eh).json() == {"reverted": "add_child"}
    assert note["id"] not in {n["id"] for n in api.get(m, headers=oh).json()["nodes"]}
    # the editor is removed; the owner restores the deleted subtree with its citation
    assert api.delete(f"{m}/members/{p['editor']['id']}", headers=oh).status_code == 200
    assert api.post(f"{m}/history/{deleted['edit_id']}/revert", headers=eh).status_code == 404
    assert api.post(f"{m}/history/{deleted['edit_id']}/revert", headers=oh).json() == {"reverted": "delete_subtree"}
    after = api.get(m, headers=oh).json()
    nodes = {n["id"]: n for n in after["nodes"]}
    assert nodes[theme["id"]]["title"] == "Cost"
    assert nodes[ids["node_id"]]["parent_id"] == theme["id"]
    assert nodes[ids["root"]]["title"] == "Owner's question"
    assert [c["id"] for c in after["citations"]] == [ids["citation_id"]]
    r = api.post(f"{m}/history/{deleted['edit_id']}/revert", headers=oh)
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "already_undone"
    assert api.get(f"{m}/history", headers=oh).json()["changes"][0]["undone"] is False


def test_owner_adds_papers_members_can_open_in_the_share_dialog(api, db_url, people):
    """Issue 36.1: the share dialog's list of papers readable to the map: the owner adds an
    uncited paper (members then open its file) and takes it back (404 again); members cannot."""
    p, ids = people, _shared_map(api, db_url, people)
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        other = library(db, p["owner"]["id"])
    _store_file(db_url, other.document_id)
    docs = f"/api/v1/mindmaps/{ids['map_id']}/documents"
    file = f"/api/v1/documents/{other.document_id}/file"
    listed = api.get(docs, headers=p["owner"]["h"]).json()
    assert [(d["document_id"], d["how"]) for d in listed["documents"]] == [(ids["document_id"], "cited")]
    assert other.document_id in {d["document_id"] for d in listed["addable"]}
    assert api.get(file, headers=p["viewer"]["h"]).status_code == 404
    # an editor cannot cite it by its passage id either (that would make it readable)
    cite = f"/api/v1/mindmaps/{ids['map_id']}/nodes/{ids['node_id']}/citations"
    r = api.post(cite, json={"chunk_id": other.id, "quote": QUOTE}, headers=p["editor"]["h"])
    assert r.status_code == 404
    r = api.post(docs, json={"document_id": other.document_id}, headers=p["editor"]["h"])
    assert r.status_code == 403
    r = api.post(docs, json={"document_id": "nope"}, headers=p["owner"]["h"])
    assert r.status_code == 404
    r = api.post(docs, json={"document_id": other.document_id}, headers=p["owner"]["h"])
    assert r.status_code == 201
    assert (other.document_id, "added") in {(d["document_id"], d["how"]) for d in r.json()["documents"]}
    assert api.get(file, headers=p["viewer"]["h"]).status_code == 200
    assert api.get(file, headers=p["stranger"]["h"]).status_code == 404
    assert api.delete(f"{docs}/{other.document_id}", headers=p["owner"]["h"]).status_code == 200
    assert api.get(file, headers=p["viewer"]["h"]).status_code == 404
    # added again, the editor may cite it; once cited it stays readable when taken back
    assert api.post(docs, json={"document_id": other.document_id}, headers=p["owner"]["h"]).status_code == 201
    assert api.post(cite, json={"chunk_id": other.id, "quote": QUOTE}, headers=p["editor"]["h"]).status_code == 201
    assert api.delete(f"{docs}/{other.document_id}", headers=p["owner"]["h"]).status_code == 200
    assert api.get(file, headers=p["viewer"]["h"]).status_code == 200
