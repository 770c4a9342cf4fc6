"""Measure a benchmark on another commit: its own detached worktree under /tmp, the current
versions of the benchmark's files copied in, the script run with `--json`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure_at(ref: str, script: str, args: Sequence[str] = (), copy: Sequence[str] = ()) -> dict | None:
    """Run `script` (a path under the repo, e.g. "benchmarks/map_quality.py") with `--json` on
    commit `ref` and return its last JSON line; `copy` lists further files taken from this tree.
    None (and the error printed) when the run fails."""
    base = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref], check=True, capture_output=True, text=True
    ).stdout.strip()
    wt = Path(f"/tmp/bayes-{Path(script).stem.replace('_', '-')}-{base}")
    if not wt.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), base], check=True, capture_output=True
        )
        (wt / ".venv").symlink_to(ROOT / ".venv")
    for rel in (script, *copy):
        (wt / rel).parent.mkdir(parents=True, exist_ok=True)
        (wt / rel).write_text((ROOT / rel).read_text())
    res = subprocess.run([sys.executable, str(wt / script), "--json", *args], cwd=wt, capture_output=True, text=True)
    if res.returncode != 0:
        print("baseline failed:", res.stderr[-2000:])
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])
