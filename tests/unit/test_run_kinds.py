"""One run-kind registry: every kind is declared once (`runs.kinds.RunKind` beside its feature)
and every list — the map kinds the API accepts, node/prompt needs, budgets, model roles, the
labels of the history, the editor and its buttons — is derived from it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from bayes_app import registry
from bayes_app.agents import llm_json
from bayes_app.agents.critic import Verdicts
from bayes_app.agents.kinds import MAP_KINDS
from bayes_app.agents.kinds.check_support import Scores
from bayes_app.agents.kinds.message import EditOps
from bayes_app.agents.planner import Plan
from bayes_app.agents.regroup import Groups
from bayes_app.agents.router import Routed
from bayes_app.llm import structured
from bayes_app.maps import runs as map_runs
from bayes_app.runs import kinds
from bayes_app.settings import ROLES
from bayes_app.usecases import runs as app_runs

ROOT = Path(__file__).resolve().parents[2]
registry.register()


def test_every_map_kind_is_registered_once_with_all_it_needs() -> None:
    names = [k.name for k in MAP_KINDS]
    assert len(set(names)) == len(names) == 10
    assert [k.name for k in kinds.on(map_runs.RESOURCE)] == names
    assert kinds.get("ask") is not None
    assert kinds.get("ask").resource is None
    product = [k for k in kinds.all_kinds() if k.entry.__module__.startswith("bayes_app.")]  # not tests' ad-hoc kinds
    assert [k.name for k in product] == [
        "ask",
        *names,
        "audit",
        "fill_table",
    ]
    assert kinds.get("audit").resource == "audit"
    assert kinds.get("fill_table").resource == "table"
    for k in product:
        assert inspect.iscoroutinefunction(k.entry), k.name
        assert k.label, k.name
        assert k.label != k.name, k.name
        assert k.role in ROLES, k.name
    for k in MAP_KINDS:
        assert k.prompt_budget > 0, k.name  # the reserve of a map run


@pytest.mark.parametrize("kind", MAP_KINDS, ids=lambda k: k.name)
def test_every_view_of_a_kind_comes_from_the_registry(kind: kinds.RunKind) -> None:
    assert map_runs.map_kind(kind.name) is kind
    assert map_runs.run_title(kind.name, "PaSa") == f"{kind.label} · PaSa"  # history, admin list
    assert app_runs.label(kind.name) == kind.label  # editor's live line and its buttons
    assert app_runs.needs_node(kind.name) is kind.needs_node
    assert app_runs.whole_map(kind.name) is kind.whole_map
    assert llm_json.step_role(kind.name) == kind.role  # a step named after the kind


def test_the_api_names_the_kinds_a_user_starts_from_the_registry() -> None:
    from bayes_app.api.maps import router as maps_router
    from bayes_app.api.maps import start_run

    route = next(r for r in maps_router.routes if getattr(r, "endpoint", None) is start_run)
    started = [k.name for k in kinds.on(map_runs.RESOURCE) if k.name != map_runs.UPDATE_KIND]
    assert list(app_runs.USER_MAP_KINDS) == started
    assert len(started) == len(MAP_KINDS) - 1
    assert route.summary == f"Start a run on the map (kind: {', '.join(started)})"


def test_labels_no_longer_drift() -> None:
    """The history said "Deepen" while the button and the live line said "Dive deeper"."""
    assert map_runs.run_title("deepen", "M") == "Dive deeper · M" == f"{app_runs.label('deepen')} · M"
    assert map_runs.map_kind("ask") is None
    assert map_runs.map_kind("nope") is None
    assert app_runs.label("nope") == "nope"


def _kind_lists(path: Path) -> list[int]:
    """Lines of literal lists, tuples, sets or dict keys naming two or more map kinds."""
    names = {k.name for k in MAP_KINDS}
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set) and elts:
            found = {e.value for e in elts if isinstance(e, ast.Constant) and e.value in names}
            if len(found) >= 2:
                out.append(node.lineno)
    return out


def test_no_module_keeps_its_own_list_of_kinds() -> None:
    lists = {
        str(p.relative_to(ROOT)): lines
        for pkg in ("bayes_app", "state", "components", "jobs")
        for p in (ROOT / pkg).rglob("*.py")
        if (lines := _kind_lists(p))
    }
    assert not lists, lists


def test_output_models_give_the_strict_schema() -> None:
    scores = structured.schema_of(Scores)
    item = scores["properties"]["scores"]["items"]
    assert scores["required"] == ["scores"]
    assert scores["additionalProperties"] is False
    assert item == {
        "type": "object",
        "properties": {
            "quote": {"type": "integer"},
            "support": {"type": "number"},
            "rewrite": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "reason": {"type": "string"},
        },
        "required": ["quote", "support", "rewrite", "reason"],
        "additionalProperties": False,
    }
    plan = structured.schema_of(Plan)["properties"]["aspects"]
    assert (plan["minItems"], plan["maxItems"]) == (3, 8)
    assert plan["items"]["properties"] == {"title": {"type": "string"}, "query": {"type": "string"}}
    assert structured.schema_of(Routed)["properties"]["route"] == {
        "enum": ["answer", "edit", "research"],
        "type": "string",
    }
    verdicts = structured.schema_of(Verdicts)["properties"]
    assert verdicts["contradictions"]["items"]["required"] == ["a", "b"]
    assert verdicts["scores"]["items"]["properties"]["rewrite"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    group = structured.schema_of(Groups)["properties"]["groups"]["items"]
    assert group["properties"]["nodes"] == {"type": "array", "items": {"type": "integer"}}
    op = structured.schema_of(EditOps)["properties"]["ops"]["items"]
    assert op["properties"]["op"]["enum"] == ["add", "rename", "delete"]
    assert "title" in op["required"]


def test_a_malformed_item_costs_that_item_only() -> None:
    reply = {"scores": [{"quote": 1, "support": 0.5}, {"quote": "x", "support": 1}, "junk", {"quote": 2, "support": 1}]}
    got = structured.items_as(Scores.model_fields["scores"].annotation.__args__[0], reply, "scores")
    assert [(s.quote, s.support) for s in got] == [(1, 0.5), (2, 1.0)]
    assert structured.items_as(Routed, None, "x") == []
    assert structured.parse_as(Routed, {"route": "fly"}) is None
