"""Issue 36.4: a map's depth and size are bounded (409 in the user's words on every path that
adds or moves nodes), and every walk over a map's tree is iterative, so a map at the limit — or
an old map far deeper than it — still exports (md, docx), lays out, shows on the canvas and
goes to Zotero. Over HTTP (TestClient over build_api) on SQLite and PostgreSQL."""

from __future__ import annotations

import sys

from sqlmodel import Session

from bayes_app.db import get_engine
from bayes_app.maps import live
from bayes_app.maps import service as maps
from bayes_app.maps.tree import bottom_up, shape, walk
from bayes_app.models import MapNode, NodeKind
from bayes_app.settings import get_settings
from bayes_app.zotero import notes_html
from tests.integration.test_maps_api import api, login  # noqa: F401 - the fixture

BASE = "/api/v1/mindmaps"


def _chain(api, h, mid: str, parent: str, n: int) -> list[str]:  # noqa: F811
    ids = []
    for i in range(n):
        r = api.post(
            f"{BASE}/{mid}/nodes", json={"parent_id": parent, "title": f"Level {i}", "kind": "note"}, headers=h
        )
        if r.status_code != 201:
            return [*ids, r]  # type: ignore[list-item]
        parent = r.json()["id"]
        ids.append(parent)
    return ids


def test_nesting_beyond_the_depth_limit_is_refused_and_a_full_map_still_exports(api, db_url):  # noqa: F811
    limit = get_settings().map_max_depth
    assert limit < 1_100  # the red team's 1,100 levels are beyond the default
    _uid, h = login(db_url)
    m = api.post(BASE, json={"title": "Deep"}, headers=h).json()
    mid, root = m["id"], m["root_id"]
    made = _chain(api, h, mid, root, 1_100)
    refused = made[-1]
    assert len(made) == limit  # limit - 1 levels under the root, then the refusal
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "map_too_deep"
    assert f"at most {limit} levels deep" in refused.json()["error"]["message"]
    view = api.get(f"{BASE}/{mid}", headers=h).json()
    assert len(view["nodes"]) == limit  # nothing of the refused edit was kept

    # a move that would push a branch below the limit is refused too
    side = api.post(f"{BASE}/{mid}/nodes", json={"parent_id": root, "title": "Side"}, headers=h).json()
    assert (
        api.post(f"{BASE}/{mid}/nodes", json={"parent_id": side["id"], "title": "Side kid"}, headers=h).status_code
        == 201
    )
    moved = api.patch(f"{BASE}/{mid}/nodes/{side['id']}", json={"parent_id": made[-3]}, headers=h)
    assert moved.status_code == 409
    assert moved.json()["error"]["code"] == "map_too_deep"
    assert {n["id"]: n["parent_id"] for n in api.get(f"{BASE}/{mid}", headers=h).json()["nodes"]}[side["id"]] == root

    # the map at the limit exports and lays out
    md = api.get(f"{BASE}/{mid}/export.md", headers=h)
    assert md.status_code == 200
    assert f"Level {limit - 2}" in md.text
    docx = api.get(f"{BASE}/{mid}/export.docx", headers=h)
    assert docx.status_code == 200
    assert docx.content[:2] == b"PK"
    layout = api.post(f"{BASE}/{mid}/layout", headers=h)
    assert layout.status_code == 200
    assert len(layout.json()["positions"]) == limit + 2


def test_node_count_limit(api, db_url, configure):  # noqa: F811
    configure(BAYES_MAP_MAX_NODES="4")
    _uid, h = login(db_url)
    m = api.post(BASE, json={"title": "Small"}, headers=h).json()
    for i in range(3):
        assert (
            api.post(
                f"{BASE}/{m['id']}/nodes", json={"parent_id": m["root_id"], "title": f"n{i}"}, headers=h
            ).status_code
            == 201
        )
    full = api.post(f"{BASE}/{m['id']}/nodes", json={"parent_id": m["root_id"], "title": "one more"}, headers=h)
    assert full.status_code == 409
    assert full.json()["error"]["code"] == "map_too_large"
    assert "at most 4 nodes" in full.json()["error"]["message"]
    assert len(api.get(f"{BASE}/{m['id']}", headers=h).json()["nodes"]) == 4


def test_a_map_far_deeper_than_any_recursion_limit_still_works(api, db_url):  # noqa: F811
    """An old map (made before the bound) deeper than the recursion limit: every walk copes."""
    depth = sys.getrecursionlimit() + 100
    uid, h = login(db_url)
    mid = api.post(BASE, json={"title": "Legacy"}, headers=h).json()["id"]
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        parent = maps.root_of(db, mid)
        rows, parent_id = [], parent.id
        for i in range(depth):
            rows.append(MapNode(map_id=mid, parent_id=parent_id, kind=NodeKind.NOTE, title=f"L{i}", order_index=0))
            parent_id = rows[-1].id
        db.bulk_save_objects(rows)  # parents first, in one statement per batch
        db.commit()
    for fmt in ("md", "docx"):
        assert api.get(f"{BASE}/{mid}/export.{fmt}", headers=h).status_code == 200
    assert api.post(f"{BASE}/{mid}/layout", headers=h).status_code == 200
    view = api.get(f"{BASE}/{mid}", headers=h).json()
    nodes = {n["id"]: n for n in view["nodes"]}
    top = next(n for n in nodes.values() if n["parent_id"] == view["root_id"])
    top["collapsed"] = True  # the red team collapsed the top node: "0 nodes", "An error occurred"
    graph = live.build_graph(nodes, [], live_layout=False)
    assert next(n for n in graph["nodes"] if n["id"] == top["id"])["hidden"] == depth - 1
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        note = notes_html.render(db, uid, mid)
    assert note.map_note.count("<li>") == depth
    # ...and adding under it is refused, in words
    deepest = next(n for n in nodes.values() if n["title"] == f"L{depth - 1}")
    r = api.post(f"{BASE}/{mid}/nodes", json={"parent_id": deepest["id"], "title": "more"}, headers=h)
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "map_too_deep"


def test_tree_walks_keep_order():
    kids = {"r": ["a", "b"], "a": ["a1", "a2"], "b": ["b1"]}
    assert [(n, d) for n, d in walk(["r"], lambda n: kids.get(n, []))] == [
        ("r", 0),
        ("a", 1),
        ("a1", 2),
        ("a2", 2),
        ("b", 1),
        ("b1", 2),
    ]
    assert list(bottom_up(["r"], lambda n: kids.get(n, []))) == ["a1", "a2", "a", "b1", "b", "r"]
    assert shape({"r": None, "a": "r", "a1": "a", "b": "r"}) == (4, 3)
    assert shape({}) == (0, 0)
