"""The outline's domain on SQLite and PostgreSQL: one-step moves (undoable, refused at the
edges), the default kind under the root, the outline rows and the branch colours."""

from __future__ import annotations

import uuid

import pytest

from bayes_app.accounts import service as accounts
from bayes_app.maps import service
from bayes_app.maps.errors import MapError, MapNotFound


def _user(db) -> str:
    u = accounts.register(db, f"o{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
    db.commit()
    return u.id


def _tree(db, owner: str, map_id: str) -> list[tuple[str, int]]:
    """(title, level) in outline order."""
    view = service.map_view(db, owner, map_id)
    rows = service.outline_rows({n["id"]: n for n in view["nodes"]}, {})
    return [(r["title"], r["level"]) for r in rows]


def test_move_steps_reorder_indent_outdent_and_undo(dbs):
    a = _user(dbs)
    m = service.create_map(dbs, a, "Outline", "Q")
    root = service.root_of(dbs, m["id"]).id
    ids = {t: service.add_child(dbs, a, m["id"], root, t)["id"] for t in ("A", "B", "C")}
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("A", 2), ("B", 2), ("C", 2)]
    service.move_step(dbs, a, m["id"], ids["C"], "up")
    assert [t for t, _ in _tree(dbs, a, m["id"])] == ["Q", "A", "C", "B"]
    service.move_step(dbs, a, m["id"], ids["A"], "down")
    assert [t for t, _ in _tree(dbs, a, m["id"])] == ["Q", "C", "A", "B"]
    service.move_step(dbs, a, m["id"], ids["A"], "indent")  # under C, its sibling above
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("C", 2), ("A", 3), ("B", 2)]
    service.move_step(dbs, a, m["id"], ids["B"], "indent")  # last child of C, after A
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("C", 2), ("A", 3), ("B", 3)]
    service.move_step(dbs, a, m["id"], ids["A"], "outdent")  # right after its old parent
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("C", 2), ("B", 3), ("A", 2)]
    assert service.undo(dbs, a, m["id"]) == "move_node"
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("C", 2), ("A", 3), ("B", 3)]
    for node, step in [
        (ids["A"], "up"),
        (ids["B"], "down"),
        (ids["A"], "indent"),
        (ids["C"], "outdent"),
        (root, "down"),
        (ids["C"], "sideways"),
    ]:
        with pytest.raises(MapError):
            service.move_step(dbs, a, m["id"], node, step)
    assert _tree(dbs, a, m["id"]) == [("Q", 1), ("C", 2), ("A", 3), ("B", 3)]  # refusals change nothing
    with pytest.raises(MapNotFound):
        service.move_step(dbs, _user(dbs), m["id"], ids["A"], "up")


def test_default_kind_theme_under_root_note_below(dbs):
    a = _user(dbs)
    m = service.create_map(dbs, a, "Kinds", "Q")
    root = service.root_of(dbs, m["id"]).id
    theme = service.add_child(dbs, a, m["id"], root, "T")
    assert theme["kind"] == "theme"
    assert service.add_child(dbs, a, m["id"], theme["id"], "N")["kind"] == "note"
    assert service.add_child(dbs, a, m["id"], root, "C", kind="claim")["kind"] == "claim"


def test_outline_rows_levels_collapse_quotes_and_hues(dbs):
    a = _user(dbs)
    m = service.create_map(dbs, a, "Rows", "Q")
    root = service.root_of(dbs, m["id"]).id
    t1 = service.add_child(dbs, a, m["id"], root, "T1")["id"]
    t2 = service.add_child(dbs, a, m["id"], root, "T2")["id"]
    c1 = service.add_child(dbs, a, m["id"], t1, "C1", kind="claim")["id"]
    c2 = service.add_child(dbs, a, m["id"], t2, "C2", kind="claim")["id"]
    view = service.map_view(dbs, a, m["id"])
    nodes = {n["id"]: n for n in view["nodes"]}
    cites = {c1: {"quote": "A  long\nquote " + "x" * 400, "page": 4, "document_id": "d1"}}
    rows = service.outline_rows(nodes, cites)
    by = {r["title"]: r for r in rows}
    assert [r["title"] for r in rows] == ["Q", "T1", "C1", "T2", "C2"]
    assert (by["Q"]["expanded"], by["T1"]["expanded"], by["C1"]["expanded"]) == ("true", "true", "")
    assert by["C1"]["quote"].startswith("A long quote x")
    assert by["C1"]["quote"].endswith("…")
    assert (by["C1"]["page"], by["C1"]["document_id"], by["C2"]["page"]) == ("4", "d1", "")
    same = service.outline_rows(nodes, {c1: {"quote": "Say  C1 here.", "page": 2, "document_id": "d1"}})
    assert [(r["quote"], r["page"]) for r in same if r["id"] == c1] == [("", "2")]  # the title is its quote
    # the chip's link still carries the quote to highlight (#40: it was empty)
    assert [r["cite_quote"] for r in same if r["id"] == c1] == ["Say C1 here."]
    assert len(by["C1"]["cite_quote"]) == 300
    assert not by["C1"]["cite_quote"].endswith("…")
    assert (by["T1"]["posinset"], by["T1"]["setsize"], by["T2"]["posinset"]) == (1, 2, 2)
    assert by["Q"]["hue"] == -1
    assert by["T1"]["hue"] == by["C1"]["hue"] != by["T2"]["hue"] == by["C2"]["hue"]
    service.update_node(dbs, a, m["id"], t1, collapsed=True)
    view = service.map_view(dbs, a, m["id"])
    rows = service.outline_rows({n["id"]: n for n in view["nodes"]}, cites)
    assert [r["title"] for r in rows] == ["Q", "T1", "T2", "C2"]
    assert rows[1]["expanded"] == "false"
    assert c2 in {r["id"] for r in rows}
