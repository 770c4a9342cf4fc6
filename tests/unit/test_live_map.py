"""The live map view (bayes_app.maps.live): run events applied in memory, local inserts with
the service's ordering rule, the canvas projection."""

from __future__ import annotations

from bayes_app.maps.live import LiveMap, build_graph, support_level
from bayes_app.runs.events import RunEvent


def node(id_: str, parent: str | None, order: int = 0, **kw) -> dict:
    return {
        "id": id_,
        "parent_id": parent,
        "kind": kw.get("kind", "claim"),
        "title": kw.get("title", id_),
        "body": "",
        "order": order,
        "position": kw.get("position"),
        "collapsed": kw.get("collapsed", False),
        "created_by": "user",
        "citation_count": 0,
        "support": kw.get("support"),
        "created_at": f"t{order}",
    }


def a_map() -> LiveMap:
    nodes = {n["id"]: n for n in (node("root", None, kind="question"), node("a", "root", 0), node("b", "root", 1))}
    return LiveMap(nodes, [])


def ev(type_: str, data: dict, i: int = 1) -> RunEvent:
    return RunEvent(f"{i}-0", type_, data)


def test_a_written_node_is_added_under_its_parent_and_marked_live():
    m = a_map()
    e = ev("node", {"id": "c", "parent_id": "a", "title": "New", "order": 0, "citations": 2, "support": 0.8})
    assert m.counted_write(e)
    change = m.apply(e)
    assert m.nodes["c"]["title"] == "New"
    assert m.nodes["c"]["created_by"] == "agent"
    assert m.nodes["c"]["position"] is None
    assert m.nodes["c"]["citation_count"] == 2
    assert m.live_ids == ["c"]
    assert m.written == 1
    assert change.note == "1 node(s) written"
    assert not m.counted_write(e)  # held now: a replay is not counted twice


def test_a_node_under_an_unknown_parent_is_not_added_nor_counted():
    m = a_map()
    e = ev("node", {"id": "x", "parent_id": "elsewhere"})
    assert not m.counted_write(e)
    m.apply(e)
    assert "x" not in m.nodes


def test_an_update_changes_fields_and_is_not_counted():
    m = a_map()
    e = ev("node", {"id": "a", "updated": True, "title": "Renamed", "body": "text", "parent_id": "b"})
    assert not m.counted_write(e)
    m.apply(e)
    assert (m.nodes["a"]["title"], m.nodes["a"]["body"], m.nodes["a"]["parent_id"]) == ("Renamed", "text", "b")


def test_relations_and_proposals_are_taken_once():
    m = a_map()
    rel = ev("relation", {"id": "r1", "source_id": "a", "target_id": "b"})
    before = m.relations
    assert m.counted_write(rel)
    m.apply(rel)
    m.apply(rel)
    assert m.relations == [{"id": "r1", "source_id": "a", "target_id": "b", "kind": "contradicts"}]
    assert before == []
    assert m.relations is not before  # a new list: the state sees the change
    prop = ev("proposal", {"id": "p1", "kind": "chapters", "payload": {"groups": []}})
    assert m.apply(prop).proposal["id"] == "p1"
    assert not m.counted_write(prop)
    assert m.apply(prop).proposal is None


def test_progress_notes_finding_route_text_and_end():
    m = a_map()
    assert m.apply(ev("agent", {"role": "planner", "aspects": [1, 2, 3]})).note == "planner: 3 aspect(s)"
    assert m.apply(ev("agent", {"role": "critic", "pass": 2})).note == "critic: pass 2"
    done = m.apply(ev("agent", {"role": "writer", "done": True, "note": "No counter-evidence found."}))
    assert done.finding == done.note == "No counter-evidence found."
    assert m.apply(ev("agent", {"role": "writer", "done": True})).note == "writing done"
    assert m.apply(ev("route", {"route": "answer"})).route == "answered from the map"
    assert m.apply(ev("text", {"delta": "Hi"})).text == "Hi"
    assert m.apply(ev("status", {"status": "RUNNING"})).note == "Running…"
    assert m.apply(ev("done", {})).finished
    assert not m.apply(ev("text", "not a dict")).finished  # malformed data is ignored


def test_live_ids_keep_the_newest_fifty():
    m = a_map()
    for i in range(60):
        m.apply(ev("node", {"id": f"n{i}", "parent_id": "root", "order": i}, i + 1))
    assert len(m.live_ids) == 50
    assert m.live_ids[-1] == "n59"
    assert m.live_ids[0] == "n10"


def test_insert_shifts_later_siblings_and_expands_the_parent():
    m = a_map()
    m.nodes["root"]["collapsed"] = True
    assert m.insert(node("new", "root", 1), expand_parent=True)
    assert [m.nodes[i]["order"] for i in ("a", "new", "b")] == [0, 1, 2]
    assert not m.nodes["root"]["collapsed"]
    assert not m.insert(node("orphan", "gone", 0), expand_parent=False)
    assert "orphan" not in m.nodes


def test_patch_takes_only_the_edited_fields():
    m = a_map()
    m.patch({"id": "a", "title": "T", "position": {"x": 1, "y": 2}, "parent_id": "b"})
    assert m.nodes["a"]["title"] == "T"
    assert m.nodes["a"]["position"] == {"x": 1, "y": 2}
    assert m.nodes["a"]["parent_id"] == "root"


def test_graph_hides_collapsed_branches_and_counts_them():
    m = a_map()
    m.insert(node("a1", "a", 0), expand_parent=False)
    m.insert(node("a2", "a1", 0), expand_parent=False)
    m.nodes["a"]["collapsed"] = True
    m.relations = [{"id": "r", "source_id": "a2", "target_id": "b", "kind": "contradicts"}]
    g = build_graph(m.nodes, m.relations, live_layout=False, live_ids={"b"})
    shown = {n["id"]: n for n in g["nodes"]}
    assert set(shown) == {"root", "a", "b"}
    assert shown["a"]["hidden"] == 2
    assert shown["b"]["live"]
    assert all(e["kind"] == "tree" for e in g["edges"])  # the relation's end is hidden
    assert all(n["position"] is not None for n in g["nodes"])  # unplaced nodes get the tidy layout


def test_support_levels():
    assert [support_level(s) for s in (None, 0.9, 0.5, 0.1)] == ["", "good", "weak", "poor"]
