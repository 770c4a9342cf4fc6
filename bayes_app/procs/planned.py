"""Planned restarts: a supervised program that is about to exit on purpose (a worker recycled
over its memory ceiling) says so first, so that health does not read the gap before the
supervisor has it running again as an outage (issue 36.10). One small file per program in
`<data dir>/supervisor/planned/`, written by the program itself (SUPERVISOR_PROCESS_NAME)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from bayes_app.procs.config import paths

# How long after announcing a program may be down (exited, starting) without health minding;
# a program that starts in time is RUNNING long before this.
GRACE_S = 60.0


def _dir(data_path: Path) -> Path:
    return paths(data_path).dir / "planned"


def announce(data_path: Path, reason: str, program: str | None = None) -> bool:
    """Record that this program is about to exit on purpose; False when it is not supervised."""
    program = program or os.environ.get("SUPERVISOR_PROCESS_NAME", "")
    if not program or "/" in program:
        return False
    d = _dir(data_path)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{program}.tmp"
    tmp.write_text(json.dumps({"ts": time.time(), "pid": os.getpid(), "reason": reason[:200]}))
    os.replace(tmp, d / program)
    return True


def recent(data_path: Path, now: float, grace_s: float = GRACE_S) -> dict[str, dict[str, Any]]:
    """program → its announcement, for announcements in the last `grace_s` seconds."""
    out: dict[str, dict[str, Any]] = {}
    try:
        files = list(_dir(data_path).iterdir())
    except OSError:
        return out
    for f in files:
        if f.name.startswith("."):
            continue
        try:
            rec = json.loads(f.read_text())
            if now - float(rec["ts"]) < grace_s:
                out[f.name] = rec
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out
