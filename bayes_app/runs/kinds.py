"""Run kinds: what each kind of run is, declared once beside its feature.

A feature declares a `RunKind` (`chat/agent.py`: Ask; `agents/kinds/`: the map kinds) and
`bayes_app.registry` registers it. Every list the product keeps about kinds — which kinds run
on a map, which need a node or a prompt, the prompt budget a run reserves, the model role of
its call, the label it reads as (history, admin list, the editor's live line) — is derived
from this one registry; the engine runs `entry` (`executor`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Entry = Callable[[Any], Awaitable[None]]  # async def kind(ctx: RunContext) -> None


@dataclass(frozen=True)
class RunKind:
    """One kind of run. `resource` names what the run works on ("mindmap"; None: nothing);
    `whole_map`: the selected node is not passed; `prompt_budget` is the prompt tokens its
    reserve assumes (0: the starter computes it); `role` is the agent role whose model makes
    the kind's own call."""

    name: str
    label: str
    entry: Entry
    resource: str | None = None
    needs_node: bool = False
    whole_map: bool = False  # works on the whole resource, never on the node selected
    needs_prompt: bool = False
    prompt_budget: int = 0
    role: str = "writer"


_KINDS: dict[str, RunKind] = {}


def register(kind: RunKind) -> None:
    """Register `kind` (a second registration under the same name replaces the first)."""
    _KINDS[kind.name] = kind


def get(name: str) -> RunKind | None:
    """The registered kind called `name`, or None."""
    return _KINDS.get(name)


def all_kinds() -> list[RunKind]:
    """Every registered kind, in registration order."""
    return list(_KINDS.values())


def on(resource: str) -> list[RunKind]:
    """The kinds that run on `resource` (e.g. every map kind), in registration order."""
    return [k for k in _KINDS.values() if k.resource == resource]


def label(name: str) -> str:
    """How a kind reads to a person ("Dive deeper"); an unknown kind reads as its name."""
    k = _KINDS.get(name)
    return k.label if k else name
