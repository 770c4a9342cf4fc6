"""Every page event handler that does work leaves the server's event loop.

Reflex runs a synchronous handler directly on the one event loop of the web process, so a
synchronous handler that calls the database, a use case or a state helper blocks every other
tab and every API request while it runs. A synchronous handler may only move values it was
given into vars: calls to builtins, `rx.*`, string/dict methods, and event references
(`SomeState.handler`). Anything else must be `async` (`state.offloop.off_loop`,
`run_off_loop`) or a background event.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import reflex as rx

import state
from state.offloop import OFF_LOOP

# Calls a synchronous handler may make: they compute nothing worth a thread.
_BUILTINS = {"len", "str", "int", "float", "bool", "min", "max", "round", "isinstance", "any", "all", "next", "type"}
_VALUE_METHODS = {"strip", "lstrip", "rstrip", "split", "join", "partition", "startswith", "endswith", "lower"}
_VALUE_METHODS |= {"get", "items", "values", "keys", "append", "push"}
_CHEAP_SELF = {"_live"}  # a cache lookup of a loaded substate


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func) + "()"
    return "?"


def _work_calls(fn, awaited_ok: bool = False) -> list[str]:
    """The calls in a handler's body that may do work (see the module docstring); with
    `awaited_ok`, a call that is awaited (a coroutine helper, which leaves the loop itself) is not one."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    body = tree.body[0]
    awaited = {id(n.value) for n in ast.walk(body) if isinstance(n, ast.Await)} if awaited_ok else set()
    found = []
    for call in (n for n in ast.walk(body) if isinstance(n, ast.Call) and id(n) not in awaited):
        func = call.func
        name = _dotted(func)
        if name in _BUILTINS or name.startswith(("rx.", "uuid.")):
            continue
        if isinstance(func, ast.Attribute):
            owner = _dotted(func.value)
            if owner == "self":
                if func.attr in _CHEAP_SELF:
                    continue
            elif func.attr in _VALUE_METHODS or owner[:1].isupper() or owner == "type()":
                continue  # a method of a value, or an event reference (`ChatState.consume(...)`)
        found.append(name)
    return found


def _app_states() -> list[type[rx.State]]:
    for mod in pkgutil.iter_modules(state.__path__):
        importlib.import_module(f"state.{mod.name}")

    def walk(cls):
        for sub in cls.get_substates():
            yield sub
            yield from walk(sub)

    return [s for s in walk(rx.State) if s.__module__.startswith("state.")]


def test_handlers_that_do_work_are_async():
    offenders = []
    seen = 0
    for cls in _app_states():
        for name, handler in cls.event_handlers.items():
            fn = handler.fn
            if fn.__module__ is None or not fn.__module__.startswith("state."):
                continue
            seen += 1
            if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
                continue
            calls = _work_calls(fn)
            if calls:
                offenders.append(f"{cls.__name__}.{name}: {', '.join(calls)}")
    assert seen > 100, seen  # the walk found the app's handlers
    assert not sorted(set(offenders)), "synchronous handlers doing work on the event loop:\n" + "\n".join(
        sorted(set(offenders))
    )


# What an async handler or a background task may still call on the loop: cheap in-memory helpers
# and use-case constructors that do no I/O (the watcher and follower read Redis asynchronously).
_CHEAP_ON_LOOP = {"self._reset_live", "self._apply", "self._apply_batch", "self._live", "self._note"}
_CHEAP_ON_LOOP |= {"app_maps.watcher", "app_runs.follower"}


def _blocking_calls(fn) -> list[str]:
    """Calls in an async handler that block the loop: a state helper or a use case called
    directly instead of through `run_off_loop` / `asyncio.to_thread`."""
    found = []
    for name in _work_calls(fn, awaited_ok=True):
        owner = name.split(".", 1)[0]
        mod = getattr(fn.__globals__.get(owner), "__name__", "")
        if name in _CHEAP_ON_LOOP:
            continue
        if owner == "self" or mod.startswith("bayes_app."):
            found.append(name)
    return found


def test_async_handlers_do_not_block():
    offenders = []
    for cls in _app_states():
        for name, handler in cls.event_handlers.items():
            fn = handler.fn
            if getattr(fn, OFF_LOOP, False) or not fn.__module__.startswith("state."):
                continue
            is_async = inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
            if is_async and (calls := _blocking_calls(fn)):
                offenders.append(f"{cls.__name__}.{name}: {', '.join(calls)}")
    assert not offenders, "async handlers calling blocking work on the loop:\n" + "\n".join(sorted(set(offenders)))


def test_the_check_catches_work():
    def load(self):
        self.rows = app_lib.documents(self.user_id)  # noqa: F821 - only parsed

    def set_query(self, value: str):
        self.query = value.strip()

    def refresh(self):
        self._refresh()

    assert _work_calls(load) == ["app_lib.documents"]
    assert _work_calls(set_query) == []
    assert _work_calls(refresh) == ["self._refresh"]


def test_off_loop_keeps_the_handler_shape():
    from state.search import SearchState

    fn = SearchState.event_handlers["run_search"].fn
    assert inspect.iscoroutinefunction(fn)
    assert getattr(fn, OFF_LOOP, False)
    assert list(inspect.signature(SearchState.event_handlers["submit"].fn).parameters) == ["self", "form"]
