"""The import rules of docs/architecture.md, checked on the source (every import, including
ones inside functions): the two front doors never import each other, the domain imports no
front door, broker or web framework, the application layer sits between them, and the run
engine knows no feature."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bayes_app", "state", "components", "jobs")
# bayes_app modules that are not domain code: the front doors (the HTTP API; the index process's
# Qdrant-compatible server), the app layer, composition roots
EDGES = (
    "bayes_app.api",
    "bayes_app.usecases",
    "bayes_app.pages",
    "bayes_app.bayes_app",
    "bayes_app.cli",
    "bayes_app.procs",
    "bayes_app.registry",
    "bayes_app.search.index_server",
)
FRAMEWORKS = ("reflex", "dramatiq", "starlette", "fastapi")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            src = _module(path)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    out += [(src, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    out.append((src, node.module))
                    out += [(src, f"{node.module}.{a.name}") for a in node.names]
    return out


IMPORTS = _imports()


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _domain(name: str) -> bool:
    return _under(name, "bayes_app") and not _under(name, *EDGES)


RULES = [
    ("state does not import the HTTP API", lambda s: _under(s, "state"), lambda d: _under(d, "bayes_app.api")),
    ("the HTTP API does not import state", lambda s: _under(s, "bayes_app.api"), lambda d: _under(d, "state")),
    (
        "state hands work to the queue only through the app layer",
        lambda s: _under(s, "state"),
        lambda d: _under(d, "jobs", "dramatiq"),
    ),
    (
        "the domain imports no front door, app layer, jobs or framework",
        _domain,
        lambda d: _under(d, "state", "components", "bayes_app.api", "bayes_app.usecases", "jobs", *FRAMEWORKS),
    ),
    (
        "the app layer imports no front door, jobs or framework",
        lambda s: _under(s, "bayes_app.usecases"),
        lambda d: _under(d, "state", "components", "bayes_app.api", "jobs", *FRAMEWORKS),
    ),
    (
        "the front doors open no database sessions and run no queries (the app layer owns transactions)",
        lambda s: _under(s, "state", "components", "bayes_app.api"),
        lambda d: _under(d, "bayes_app.db", "sqlmodel", "sqlalchemy"),
    ),
    (
        "the run engine knows no feature",
        lambda s: _under(s, "bayes_app.runs"),
        lambda d: _under(d, "bayes_app.chat", "bayes_app.maps", "bayes_app.agents"),
    ),
]


@pytest.mark.parametrize(("rule", "source", "target"), RULES, ids=[r[0] for r in RULES])
def test_import_rule(rule, source, target) -> None:
    broken = sorted({(s, d) for s, d in IMPORTS if source(s) and target(d)})
    assert not broken, f"{rule}: " + ", ".join(f"{s} → {d}" for s, d in broken)


def test_the_rules_see_imports() -> None:
    """The scan finds imports inside functions too (so a rule cannot pass by finding nothing)."""
    assert ("bayes_app.api", "jobs.queue.DramatiqQueue") in IMPORTS
    assert any(s == "state.chat" and d == "bayes_app.usecases" for s, d in IMPORTS)


def test_no_product_module_is_over_500_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not long, long


# The front doors (pages' states, components, the HTTP API) reach the domain through the
# application layer: they import it (its use cases, their return types and `usecases.views`, the
# display helpers), the errors and the settings only.
DOOR_MAY_IMPORT = (
    "bayes_app.usecases",
    "bayes_app.errors",
    "bayes_app.settings",
    "bayes_app.api",
    "bayes_app.registry",  # build_api is the web process's composition root
)


def _door_imports() -> set[tuple[str, str]]:
    found = {
        (s, d)
        for s, d in IMPORTS
        if _under(s, "state", "components", "bayes_app.api")
        and _under(d, "bayes_app")
        and d != "bayes_app"
        and not _under(d, *DOOR_MAY_IMPORT)
    }  # `from bayes_app import x`: x is checked
    return {(s, d) for s, d in found if not any(s == s2 and d2 != d and d2.startswith(d + ".") for s2, d2 in found)}


def test_front_doors_reach_the_domain_only_through_the_app_layer() -> None:
    found = _door_imports()
    assert not found, "direct domain imports from a front door (use a use case or usecases.views): " + ", ".join(
        f"{s} → {d}" for s, d in sorted(found)
    )


# The page states call use cases through `AuthState._as_user` (a refusal becomes a toast or the
# page's error line). A hand-written `except DomainError` is allowed only where the refusal does
# more than show its message:
OWN_HANDLERS = {
    ("auth.py", "_as_user"),  # the helper itself
    ("admin.py", "grant_credits"),  # an unknown e-mail gets its own message
    ("admin.py", "save_price"),  # a price that is not a number (ValueError) too
    ("library.py", "handle_upload"),  # one result row per file: a refused file does not stop the rest
    ("map_edits.py", "_undo"),  # nothing to undo (NotFound) is not an error
    ("map_share.py", "_share_call"),  # a lost map leaves the page
    ("map_zotero.py", "z_send"),  # a background task: the var is set under `async with self`
    ("maps.py", "save_rename"),  # a map deleted meanwhile just closes the dialog
    ("mindmap.py", "_edit"),  # the editor's helper: a lost node re-reads the map
    ("mindmap.py", "_start"),  # an unavailable queue gets its own message
}


def test_states_handle_refusals_through_the_helper() -> None:
    found = set()
    for path in (ROOT / "state").glob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for h in ast.walk(fn):
                if isinstance(h, ast.ExceptHandler) and h.type is not None:
                    caught = {getattr(n, "id", None) or getattr(n, "attr", None) for n in ast.walk(h.type)}
                    if caught & {"DomainError", "MapError"}:
                        found.add((path.name, fn.name))
    assert found - OWN_HANDLERS == set(), "use AuthState._as_user (error_var= for the page's error line)"
    assert found == OWN_HANDLERS  # an entry no longer needed goes from the list
