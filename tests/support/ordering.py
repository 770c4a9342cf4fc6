"""The order in which the suite's files run (see `tests/conftest.py`, `pytest_collection_modifyitems`).

xdist (`--dist loadfile --no-loadscope-reorder`) hands whole files to its two processes from one
queue, in the order given here. Files run by stage (what they need running, below); within a
stage the longest first, by the seconds recorded in `tests/durations.json`, so that the last
minutes hold only short files and neither core waits for the other at the end (longest
processing time first). A file missing from the record counts as short.

Stages (a file runs whole at the latest stage of its tests):
  0. tests that start their own process set (`stack`) and no browser, and everything that needs
     no app (unit, integration over real Redis/PostgreSQL/workers) — one pool, so the stacks'
     waits (restarts, leases) overlap with work that keeps the CPU busy;
  1. browser tests that start their own stack;
  2. tests against the shared app, browser and API alike — one pool again, so the API tests,
     which mostly wait for the app's worker, run beside browser tests, which keep the CPU busy,
     instead of leaving the last minutes half idle.
Browser tests come after stage 0: sync Playwright keeps an event loop running in the main
thread while its session fixture lives, which would break asyncio.run() in later tests (stage 2
does not call it). Stacks build their frontend into the directory of their port
(procs.web_workdir): a process's stacks, one after another on its one port, share one build, so
the shared app (2) starts after every stack of its own (0, 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"
_LINE = re.compile(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::")


class Item(Protocol):
    nodeid: str

    def get_closest_marker(self, name: str) -> object: ...


def file_of(nodeid: str) -> str:
    return nodeid.replace("\\", "/").split("::")[0]


def stage(item: Item) -> int:
    """0 no app, or a stack of its own without a browser; 1 a browser and a stack of its own;
    2 the shared app (`slow` marks what boots an app)."""
    browser, stack = item.get_closest_marker("browser"), item.get_closest_marker("stack")
    if stack:
        return 1 if browser else 0
    return 2 if item.get_closest_marker("slow") else 0


def recorded_durations(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds per test file from the last recording ({} when there is none)."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def order(items: list, durations: Mapping[str, float]) -> list:
    """`items` grouped by file, files by stage, then longest first; collection order breaks ties.
    Within stage 0 the files that wait on processes they start (`stack`, `waits`) run one at a
    time beside those that keep their own process busy (`_beside`), each kind longest first, so
    neither core idles while both wait (nor does the second file wait for the first one's
    frontend build, tests/support/frontend.py)."""
    per_file: dict[str, list] = {}
    for it in items:
        per_file.setdefault(file_of(it.nodeid), []).append(it)
    key = {f: (max(stage(it) for it in its), -durations.get(f, 0.0), n) for n, (f, its) in enumerate(per_file.items())}
    files = sorted(per_file, key=key.__getitem__)
    first = [f for f in files if key[f][0] == 0]
    waiting = [f for f in first if _waits(per_file[f])]
    busy = [f for f in first if not _waits(per_file[f])]
    files = _beside(waiting, busy, durations) + files[len(first) :]
    return [it for f in files for it in per_file[f]]


def _waits(items: list) -> bool:
    return any(it.get_closest_marker("stack") or it.get_closest_marker("waits") for it in items)


def _beside(waiting: list[str], busy: list[str], durations: Mapping[str, float], workers: int = 2) -> list[str]:
    """The queue a simulated run of `workers` processes would take, each free process taking the
    next file from it (as xdist does): a waiting file when no other process is running one,
    else the longest busy file left (a waiting one when none is left). Alternating one of each
    was not enough: a 57 s busy file beside a 117 s waiting one let the next waiting file start
    beside it, and for a minute both cores mostly waited."""
    waiting, busy = list(waiting), list(busy)
    free_at = [0.0] * workers
    waits_until = [0.0] * workers
    out: list[str] = []
    while waiting or busy:
        w = min(range(workers), key=free_at.__getitem__)
        now = free_at[w]
        other_waits = any(waits_until[o] > now for o in range(workers) if o != w)
        takes_waiting = bool(waiting) and (not other_waits or not busy)
        f = (waiting if takes_waiting else busy).pop(0)
        free_at[w] = now + max(durations.get(f, 0.0), 0.1)
        waits_until[w] = free_at[w] if takes_waiting else 0.0
        out.append(f)
    return out


def durations_from_report(lines: Iterable[str]) -> dict[str, float]:
    """Seconds per file from pytest's `--durations=0` report (setup, call and teardown summed)."""
    out: dict[str, float] = {}
    for line in lines:
        m = _LINE.match(line)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0.0) + float(m.group(1))
    return {f: round(s, 1) for f, s in sorted(out.items())}
