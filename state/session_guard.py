"""The page state of a tab belongs to one signed-in user (or to nobody).

Reflex keeps page state on the server per tab, and a tab keeps its state across a logout or a
sign-in (both are HTTP form posts followed by a full page load). Before a page load is
answered — the first snapshot of a (re)connected socket, or a client-side navigation — the
guard looks the session cookie up on the server; when it belongs to someone other than the
user the state was built for, every user-scoped state is reset first, loaded or not, so the
snapshot and the page's on_load handlers start from nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import reflex as rx
from reflex.middleware import Middleware
from reflex.state import BaseState

from bayes_app.usecases import accounts
from state.auth import AuthState, session_token_of
from state.offloop import run_off_loop

# The events that start a page: the snapshot of a new socket and the on_load chain of a navigation.
_PAGE_EVENTS = ("hydrate_and_load", "hydrate", "on_load_internal")


def _descendants(cls: type[BaseState]) -> Iterator[type[BaseState]]:
    for sub in cls.get_substates():
        yield sub
        yield from _descendants(sub)


def user_states() -> list[type[BaseState]]:
    """Every state of this app that can hold a user's data: AuthState's whole subtree and any
    other app state hung on the root (Reflex's own internal states are not ours to reset)."""
    roots: list[type[BaseState]] = [
        AuthState,
        *(
            s
            for s in rx.State.get_substates()
            if s is not AuthState and not s.__module__.startswith(("reflex.", "reflex_"))
        ),
    ]
    return [cls for root in roots for cls in (root, *_descendants(root))]


async def reset_user_states(state: rx.State) -> None:
    """Reset every user-scoped state of this tab, including substates not loaded yet (a redis
    state manager loads only what an event needs; an unloaded state would keep its old values)."""
    loaded = [await state.get_state(cls) for cls in user_states()]
    await run_off_loop(_reset_all, loaded)


def _reset_all(loaded: list[BaseState]) -> None:
    for s in loaded:
        s.reset()  # a state's reset() resets only its own fields and its *loaded* substates


async def guard(state: rx.State) -> None:
    """Make the tab's state belong to the cookie's user, resetting it when that changed."""
    auth = await state.get_state(AuthState)
    token = session_token_of(state.router.headers.cookie)
    info = await run_off_loop(accounts.session_user, token) if token else None
    owner = info.id if info else ""
    if owner != auth._owner:
        await reset_user_states(state)
        auth._owner = owner
    auth._set_user(info)


class SessionGuard(Middleware):
    """Runs `guard` before every page load (see the module docstring)."""

    async def preprocess(self, app, state, event):  # noqa: ARG002 - Reflex's Middleware signature
        if event.name.rsplit(".", 1)[-1] in _PAGE_EVENTS:
            await guard(state)
        return
