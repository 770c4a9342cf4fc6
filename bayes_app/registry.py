"""Run kinds and domain hooks, registered explicitly in one place.

`runs/` is a generic engine that knows no feature: the features' run kinds (the Ask chat,
the map runs) and the document-removal hook (map citations marked "source removed") are
registered here. Every process that executes runs or removes documents calls `register()`
at start: the worker (`jobs/__init__.py`) and the web process (`bayes_app.api.build_api`).
"""

from __future__ import annotations

_registered = False


def register() -> None:
    """Register every run kind and hook (idempotent)."""
    global _registered
    if _registered:
        return
    from bayes_app.agents import kinds as map_kinds
    from bayes_app.agents import map_message, update
    from bayes_app.chat import agent
    from bayes_app.library.documents import on_document_removed
    from bayes_app.maps.sources import mark_citations_source_removed
    from bayes_app.runs.executor import register_kind

    register_kind("ask", agent.ask)
    for name in ("build_map", "expand", "deepen", "counter"):  # a theme they crowd gets a split proposal
        register_kind(name, update.then_split(getattr(map_kinds, name)))
    register_kind("update_map", update.update_map)
    for name in (
        "restructure",
        "chapters",
        "synthesize",
        "check_support",
    ):
        register_kind(name, getattr(map_kinds, name))
    register_kind("message", update.then_split(map_message.message))
    on_document_removed(mark_citations_source_removed)
    _registered = True
