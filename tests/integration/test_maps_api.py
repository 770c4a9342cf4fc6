"""The mindmap editing API in-process (Starlette TestClient over build_api) on SQLite and
PostgreSQL: create / list / rename, node add / edit / move / delete, undo, layout, revision,
citations + check support + accept rewrite, DOCX export, clear errors."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from sqlmodel import Session

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine
from bayes_app.models import User
from tests.integration.test_maps_service import PAGE, library


@pytest.fixture
def api(db_url, configure):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    configure(DATABASE_URL=db_url)
    with TestClient(build_api()) as c:
        yield c


def login(db_url: str) -> tuple[str, dict]:
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        user = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        _, token = accounts.create_api_token(db, user, timedelta(days=1))
        db.commit()
        return user.id, {"Authorization": f"Bearer {token}"}


def test_edit_a_map_over_http(api, db_url):
    uid, h = login(db_url)
    base = "/api/v1/mindmaps"
    assert api.post(base, json={}, headers=h).status_code == 400
    assert api.post(base, content=b"{oops", headers=h).json()["error"]["code"] == "bad_json"
    m = api.post(base, json={"title": "Small models"}, headers=h)
    assert m.status_code == 201
    m = m.json()
    mid, root = m["id"], m["root_id"]
    rev = api.get(f"{base}/{mid}/revision", headers=h).json()["revision"]

    theme = api.post(
        f"{base}/{mid}/nodes", json={"parent_id": root, "title": "Cost", "kind": "theme"}, headers=h
    ).json()
    claim = api.post(
        f"{base}/{mid}/nodes",
        json={"parent_id": theme["id"], "title": "Small models always win.", "kind": "claim"},
        headers=h,
    ).json()
    sib = api.post(f"{base}/{mid}/nodes", json={"after_id": claim["id"], "title": "Another"}, headers=h).json()
    assert sib["kind"] == "claim"
    assert sib["parent_id"] == theme["id"]
    bad = api.post(f"{base}/{mid}/nodes", json={"parent_id": root, "kind": "essay"}, headers=h)
    assert bad.status_code == 400
    assert "Unknown node kind" in bad.json()["error"]["message"]
    assert api.get(f"{base}/{mid}/revision", headers=h).json()["revision"] > rev

    r = api.patch(
        f"{base}/{mid}/nodes/{sib['id']}", json={"title": "Renamed", "position": {"x": 10, "y": 20}}, headers=h
    )
    assert r.json()["title"] == "Renamed"
    assert r.json()["position"] == {"x": 10.0, "y": 20.0}
    r = api.patch(f"{base}/{mid}/nodes/{sib['id']}", json={"parent_id": root, "index": 0}, headers=h)
    assert r.json()["parent_id"] == root
    assert r.json()["order"] == 0
    r = api.patch(f"{base}/{mid}/nodes/{theme['id']}", json={"parent_id": claim["id"]}, headers=h)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "move_cycle"
    assert api.post(f"{base}/{mid}/undo", headers=h).json()["undone"] == "move_node"

    _cite_and_check_support(api, h, db_url, uid, f"{base}/{mid}", claim["id"])
    pos = api.post(f"{base}/{mid}/layout", headers=h).json()["positions"]
    assert set(pos) == {root, theme["id"], claim["id"], sib["id"]}
    _assert_exports(api, h, f"{base}/{mid}")

    r = api.delete(f"{base}/{mid}/nodes/{theme['id']}", headers=h)
    assert set(r.json()["deleted"]) == {theme["id"], claim["id"], sib["id"]}  # sib is back under theme (undo)
    assert api.delete(f"{base}/{mid}/nodes/{root}", headers=h).status_code == 400
    assert api.post(f"{base}/{mid}/undo", headers=h).json()["undone"] == "delete_subtree"
    view = api.get(f"{base}/{mid}", headers=h).json()
    assert {n["id"] for n in view["nodes"]} == {root, theme["id"], claim["id"], sib["id"]}
    assert len(view["citations"]) == 1

    assert api.patch(f"{base}/{mid}", json={"title": "Renamed map"}, headers=h).json()["title"] == "Renamed map"
    assert [x["title"] for x in api.get(base, headers=h).json()["mindmaps"]] == ["Renamed map"]
    assert api.get(f"{base}/{mid}", headers={}).status_code == 401


def _cite_and_check_support(api, h: dict, db_url: str, uid: str, m: str, claim_id: str) -> None:
    """Citations from the library, the support check, the rewrite accepted (`m`: the map's URL)."""
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        chunk = library(db, uid)
    quote = "Small language models can match larger ones on narrow tasks when they are fine-tuned on curated data."
    c = api.post(f"{m}/nodes/{claim_id}/citations", json={"chunk_id": chunk.id, "quote": quote}, headers=h)
    assert c.status_code == 201
    assert PAGE[c.json()["char_start"] : c.json()["char_end"]] == quote
    bad = api.post(f"{m}/nodes/{claim_id}/citations", json={"chunk_id": chunk.id, "quote": "made up"}, headers=h)
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "quote_not_found"
    [scored] = api.post(f"{m}/nodes/{claim_id}/check-support", headers=h).json()["citations"]
    # "always win" overstates "can match … on narrow tasks" (the scorer's figures: tests/unit/test_support_scifact.py)
    assert scored["support_label"] in ("partial", "unsupported")
    assert scored["support_score"] < 0.7
    assert scored["suggested_rewrite"]
    assert "always" not in scored["suggested_rewrite"]
    node = api.post(f"{m}/citations/{scored['id']}/accept-rewrite", headers=h).json()
    assert node["title"] == scored["suggested_rewrite"]
    assert node["citation_count"] == 1


def _assert_exports(api, h: dict, m: str) -> None:
    """DOCX, LaTeX and Markdown (Vancouver) exports; PDF and unknown styles refused."""
    docx = api.get(f"{m}/export.docx", headers=h)
    assert docx.status_code == 200
    assert docx.content[:2] == b"PK"
    assert api.get(f"{m}/export.pdf", headers=h).status_code == 400
    tex = api.get(f"{m}/export.tex", headers=h)
    assert tex.status_code == 200
    assert tex.text.startswith("\\documentclass")
    assert "\\cite[" in tex.text
    md = api.get(f"{m}/export.md", params={"style": "vancouver"}, headers=h)
    assert md.status_code == 200
    assert re.search(r"\[1, p\. \d+\]", md.text)
    bad = api.get(f"{m}/export.md", params={"style": "nope"}, headers=h)
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "bad_style"


def test_map_and_sharing_use_cases_return_their_schemas(api, db_url):
    """The maps and sharing use cases hand out the schemas the API declares (no domain dict
    leaves them), and the API's JSON is exactly such a model's."""
    from bayes_app.usecases import maps as app_maps
    from bayes_app.usecases import sharing as app_sharing
    from bayes_app.usecases import system
    from bayes_app.usecases.schemas import accounts as SA
    from bayes_app.usecases.schemas import maps as S
    from bayes_app.usecases.schemas import sharing as SS

    uid, h = login(db_url)
    other, _ = login(db_url)
    with Session(get_engine(db_url)) as db:
        other_email = db.get(User, other).email
    made = app_maps.create_map(uid, "Typed answers")
    assert isinstance(made, S.MapSummary)
    view = app_maps.map_view(uid, made.id)
    assert isinstance(view, S.MapView)
    assert view.role == "owner"
    assert view.nodes[0].id == view.root_id
    assert api.get(f"/api/v1/mindmaps/{made.id}", headers=h).json() == view.model_dump(mode="json")
    node = app_maps.add_child(uid, made.id, view.root_id, "A claim", "claim")
    assert isinstance(node, S.NodeOut)
    assert node.parent_id == view.root_id
    edited = app_maps.update_node(uid, made.id, node.id, title="A better claim")
    assert isinstance(edited, S.NodeOut)
    assert edited.title == "A better claim"
    assert isinstance(
        app_maps.move_step(uid, made.id, app_maps.add_child(uid, made.id, view.root_id).id, "up"), S.NodeOut
    )
    layout = app_maps.auto_layout(uid, made.id)
    assert isinstance(layout, S.Layout)
    assert set(layout.positions) >= {view.root_id, node.id}
    assert all(isinstance(c, S.CitationOut) for c in app_maps.node_citations(uid, made.id, node.id))
    assert isinstance(app_maps.export_json(uid, made.id), S.MapView)
    assert isinstance(app_maps.rename_map(uid, made.id, "Renamed"), S.MapSummary)

    member = app_maps.add_member(uid, made.id, other_email, "editor")
    assert isinstance(member, SS.MemberOut)
    assert member.user_id == other
    assert member.role == "editor"
    assert isinstance(app_maps.set_member_role(uid, made.id, other, "viewer"), SS.MemberOut)
    members = app_maps.members_of(other, made.id)
    assert isinstance(members, SS.MemberList)
    assert members.owner is not None
    assert members.owner.user_id == uid
    lists = app_maps.list_maps(other)
    assert isinstance(lists, SS.MapLists)
    assert [m.id for m in lists.shared] == [made.id]
    assert lists.shared[0].role == "viewer"
    assert lists.mindmaps == []
    history = app_maps.node_history(uid, made.id, node.id)
    assert history
    assert all(isinstance(c, SS.NodeChange) for c in history)
    assert all(isinstance(s, SS.ShareRow) for s in app_sharing.all_shares())
    assert app_sharing.all_shares()
    assert app_sharing.shared_collections(other) == []
    assert all(isinstance(c, S.ScopeChoice) for c in app_maps.scope_choices(uid))
    assert isinstance(system.health(False), SA.Health)
