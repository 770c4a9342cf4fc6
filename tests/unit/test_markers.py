"""The pytest markers hold on the source: a test that starts a whole app of its own
(`AppStack(...)`, in its body or a fixture of its module) is marked `stack` (module `pytestmark`
or on the test), and a test outside tests/browser that drives Chromium (a `page` or `browser`
fixture) is marked `browser` (conftest marks tests/browser by folder; both become `slow`)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
BROWSER_FIXTURES = {"page", "browser"}


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in TESTS.rglob("test_*.py")]


def _marks(decorators: list[ast.expr]) -> set[str]:
    names = set()
    for d in decorators:
        for node in ast.walk(d):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "mark":
                names.add(node.attr)
    return names


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            return _marks([node.value])
    return set()


def _tests(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def _builds_a_stack(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "AppStack"
        for n in ast.walk(node)
    )


def _stack_fixtures(tree: ast.Module) -> set[str]:
    return {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and "fixture" in ast.unparse(n.decorator_list) and _builds_a_stack(n)
    }


def _args(t: ast.FunctionDef) -> set[str]:
    """The fixtures a test asks for (its arguments, less those `parametrize` fills)."""
    params: set[str] = set()
    for d in t.decorator_list:
        if isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "parametrize" and d.args:
            first = d.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                params |= {p.strip() for p in first.value.split(",")}
            elif isinstance(first, ast.Tuple | ast.List):  # ("a", "b"), the style ruff's PT006 asks for
                params |= {e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return {a.arg for a in t.args.args} - params


def test_every_test_that_starts_its_own_app_is_marked_stack() -> None:
    unmarked = []
    for path, tree in _modules():
        if "stack" in _module_marks(tree):
            continue
        fixtures = _stack_fixtures(tree)
        for t in _tests(tree):
            if (_builds_a_stack(t) or fixtures & _args(t)) and "stack" not in _marks(t.decorator_list):
                unmarked.append(f"{path.name}::{t.name}")
    assert unmarked == []


def test_tests_outside_the_browser_folder_that_drive_chromium_are_marked_browser() -> None:
    unmarked = []
    for path, tree in _modules():
        if path.parent.name == "browser" or "browser" in _module_marks(tree):
            continue
        for t in _tests(tree):
            if BROWSER_FIXTURES & _args(t) and "browser" not in _marks(t.decorator_list):
                unmarked.append(f"{path.name}::{t.name}")
    assert unmarked == []


def test_the_checks_see_the_marked_modules() -> None:
    stacks = {p.name for p, tree in _modules() if _builds_a_stack(tree)}
    assert {"test_stack.py", "test_supervision.py", "test_maps_ui.py"} <= stacks
    maps_ui = ast.parse((TESTS / "browser" / "test_maps_ui.py").read_text(encoding="utf-8"))
    assert "stack" in _module_marks(maps_ui)
    assert "map_stack" in _stack_fixtures(maps_ui)
    topology = ast.parse((TESTS / "integration" / "test_topology.py").read_text(encoding="utf-8"))
    live = next(t for t in _tests(topology) if "browser" in _args(t))
    assert "browser" in _marks(live.decorator_list)
