"""Maps and their nodes: create / list / rename / delete maps, node edits, undo, views.

Every function takes the caller's `owner_id` and raises `MapNotFound` for a map, node,
citation or proposal that does not exist or is someone else's (answer 404), `MapError`
for an edit that cannot apply (answer `err.status`). Each edit is ONE transaction that
also bumps `Mindmap.revision` and commits, so pass a session without pending changes.

User edits are recorded in `map_edits` with what is needed to reverse them; `undo`
reverses the caller's most recent one not yet undone, `revert` any one of the map's history.
Agent writes (`write_agent_node`, `add_relation`, …) of a run are recorded as one entry of the
user who started the run.

The UI calls (all return plain dicts / lists, JSON-ready):
    list_maps(db, owner_id)                       -> [map_summary], last edited first
    create_map(db, owner_id, title, question="")  -> map_summary (with a root question node)
    rename_map / delete_map / map_view / revision
    add_child(db, owner_id, map_id, parent_id, title="", kind=None, body="")  -> node
                                  (kind None: "theme" under the root, else "note")
    add_sibling(db, owner_id, map_id, node_id, title="", kind=None, body="")   -> node
    update_node(db, owner_id, map_id, node_id, title=?, body=?, kind=?, collapsed=?,
                position=(x, y)?, confidence=?)                                 -> node
    move_node(db, owner_id, map_id, node_id, new_parent_id, index=None)         -> node
    move_step(db, owner_id, map_id, node_id, "up"|"down"|"indent"|"outdent")    -> node
    delete_subtree(db, owner_id, map_id, node_id)                                -> deleted ids
    set_positions(db, owner_id, map_id, {node_id: (x, y)})  (drag of several nodes)
    auto_layout(db, owner_id, map_id)                        -> {node_id: (x, y)}
    undo(db, owner_id, map_id)                               -> action undone or None
    accept_proposal / reject_proposal
Citations: see `bayes_app.maps.citations`; export: `bayes_app.maps.export`.

This module is the maps feature's entry point; the code lives in `access` (loading for the
owner, the tree, the revision), `views` (JSON views), `edits` (the user's edits), `undo`
(the undo log), `agent_writes` (what runs write), `proposals` (regrouping previews) and `outline` (one-step
moves, the outline's rows).
"""

from __future__ import annotations

from bayes_app.maps.access import _nodes, _touch, children_index, get_map, get_node, revision, root_of, subtree
from bayes_app.maps.agent_writes import (
    add_agent_citations,
    add_relation,
    mark_offline,
    update_agent_node,
    write_agent_node,
)
from bayes_app.maps.edits import (
    MAX_BODY,
    MAX_COORDINATE,
    MAX_NODE_TITLE,
    MAX_TITLE,
    add_child,
    add_sibling,
    auto_layout,
    create_map,
    delete_map,
    delete_subtree,
    list_maps,
    move_node,
    rename_map,
    set_positions,
    update_node,
)
from bayes_app.maps.outline import branch_hues, move_step, outline_rows
from bayes_app.maps.proposals import accept_proposal, create_proposal, reject_proposal
from bayes_app.maps.undo import UNDO_KEEP, _commit_edit, _Undo, revert, undo
from bayes_app.maps.views import (
    _iso,
    citation_view,
    map_citations,
    map_summary,
    map_view,
    node_view,
    proposal_view,
    relation_view,
)
