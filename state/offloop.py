"""Page work off the server's event loop.

Reflex calls a synchronous event handler directly on the one event loop that serves every
tab's events and every `/api/v1` request of the process, so a handler that queries the
database, embeds a search query or lays a map out would make everyone wait. `off_loop` turns
such a handler into an async one that runs its body in a worker thread; `run_off_loop` does
the same for one call inside an async handler or a background task's `async with self:` block.

The thread runs while the event still holds this tab's state lock (Reflex keeps it for the
whole of a foreground event, and `async with self:` keeps it in a background task), so no
other event of the tab sees the state half-changed; the changes are sent as one delta when
the handler returns, exactly as for a synchronous handler (tests/unit/test_state_off_loop.py).
Other tabs' events and API requests go on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# Page handlers get their own threads: they hold a tab's lock while they run, and must not
# queue behind (or starve) the threads the rest of the process borrows with asyncio.to_thread.
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="page-handler")

OFF_LOOP = "_bayes_off_loop"  # marks a handler wrapped by off_loop (the state tests read it)


async def run_off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Await `fn(*args, **kwargs)` run in a page-handler thread (context variables carried over)."""
    ctx = contextvars.copy_context()
    call = functools.partial(ctx.run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_POOL, call)


def off_loop(fn: Callable[..., T]) -> Callable[..., Coroutine[Any, Any, T]]:
    """Make a synchronous event handler async, its body running in a thread. Put it under
    `@rx.event`; the signature and annotations stay the handler's (Reflex reads them)."""

    @functools.wraps(fn)
    async def handler(self: Any, *args: Any, **kwargs: Any) -> T:
        return await run_off_loop(fn, self, *args, **kwargs)

    setattr(handler, OFF_LOOP, True)
    return handler
