"""`state.offloop.off_loop` under Reflex's own state manager: the loop keeps serving while a
handler's body works in a thread, the tab's lock is held for the whole event (a second event of
the same tab waits), other tabs go on at once, and what the thread changed goes out in the delta."""

from __future__ import annotations

import asyncio
import time

import reflex as rx
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken

from state.offloop import off_loop

WORK_S = 0.3


class OffLoopProbe(rx.State):
    value: str = ""
    seen: list[str] = []

    @rx.event
    @off_loop
    def slow_set(self, value: str):
        time.sleep(WORK_S)  # blocking work, as a database call would be
        self.seen.append(self.value)  # what the previous event of this tab left
        self.value = value


async def _event(mgr: StateManagerMemory, token: str, value: str) -> dict:
    async with mgr.modify_state(BaseStateToken(ident=token, cls=OffLoopProbe)) as root:
        probe = await root.get_state(OffLoopProbe)
        await OffLoopProbe.event_handlers["slow_set"].fn(probe, value=value)
        return await root._get_resolved_delta()


async def _ticks_during(coro) -> tuple[int, object]:
    ticks = 0
    task = asyncio.ensure_future(coro)
    while not task.done():
        ticks += 1
        await asyncio.sleep(0.01)
    return ticks, task.result()


def test_the_loop_serves_while_a_handler_works():
    async def scenario():
        mgr = StateManagerMemory()
        ticks, delta = await _ticks_during(_event(mgr, "tab-a", "x"))
        return ticks, delta

    ticks, delta = asyncio.run(scenario())
    assert ticks >= 10, ticks  # ~30 with the loop free; 1 if the sleep ran on it
    assert delta[OffLoopProbe.get_full_name()] == {"value_rx_state_": "x", "seen_rx_state_": [""]}


def test_one_tab_waits_other_tabs_do_not():
    async def scenario():
        mgr = StateManagerMemory()
        t0 = time.monotonic()
        await asyncio.gather(_event(mgr, "tab-a", "1"), _event(mgr, "tab-a", "2"))
        same_tab = time.monotonic() - t0
        t0 = time.monotonic()
        await asyncio.gather(_event(mgr, "tab-b", "1"), _event(mgr, "tab-c", "1"))
        two_tabs = time.monotonic() - t0
        async with mgr.modify_state(BaseStateToken(ident="tab-a", cls=OffLoopProbe)) as root:
            probe = await root.get_state(OffLoopProbe)
            return same_tab, two_tabs, probe.value, list(probe.seen)

    same_tab, two_tabs, value, seen = asyncio.run(scenario())
    assert same_tab >= 2 * WORK_S * 0.95, same_tab  # serialized by the tab's lock
    assert value == "2"
    assert seen == ["", "1"]  # the second event saw the first one's whole change
    assert two_tabs < 1.8 * WORK_S, two_tabs  # two tabs at once
