"""The map run kinds, one module each; every module declares its `KIND` (a `runs.kinds.RunKind`:
name, label, what it needs, prompt budget, model role, entry point). Input: {"mindmap_id",
"node_id"?, "prompt"?}. Every node is written by the Writer (own transaction + `node` event);
deleting the map mid-run ends the run (resource_deleted)."""

from bayes_app.agents.kinds import (
    build_map,
    chapters,
    check_support,
    counter,
    deepen,
    expand,
    message,
    restructure,
    synthesize,
    update_map,
)

# in the order the editor and the API list them
MAP_KINDS = (
    build_map.KIND,
    expand.KIND,
    deepen.KIND,
    counter.KIND,
    restructure.KIND,
    chapters.KIND,
    synthesize.KIND,
    message.KIND,
    check_support.KIND,
    update_map.KIND,
)
