"""Run kinds and domain hooks, registered explicitly in one place.

`runs/` is a generic engine that knows no feature: the features declare their run kinds beside
them (`chat/agent.py`: Ask; `agents/kinds/`: the map kinds) and the document-removal hook (map
citations marked "source removed"), and they are registered here. Every process that executes
runs or removes documents calls `register()` at start: the worker (`jobs/__init__.py`) and the
web process (`bayes_app.api.build_api`); every list of kinds is derived from `runs.kinds`.
"""

from __future__ import annotations

_registered = False


def register() -> None:
    """Register every run kind and hook (idempotent)."""
    global _registered
    if _registered:
        return
    from bayes_app.agents.kinds import MAP_KINDS
    from bayes_app.audits import kind as audit_kind
    from bayes_app.chat import agent
    from bayes_app.library.documents import on_document_removed
    from bayes_app.maps.sources import mark_citations_source_removed
    from bayes_app.runs import kinds
    from bayes_app.tables import fill as table_fill

    for kind in (agent.KIND, *MAP_KINDS, audit_kind.KIND, table_fill.KIND):
        kinds.register(kind)
    on_document_removed(mark_citations_source_removed)
    _registered = True
