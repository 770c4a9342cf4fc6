"""List the functions longer than 80 lines (issue 38): `make lint` fails while there is one.

    python scripts/long_functions.py [--max 80] [PATH ...]

A function's length runs from its first line (its first decorator, else its `def`) to its last
line, nested functions included. Left out: the UI builders (Reflex component trees in
`components/` and `bayes_app/pages/`, long declarative expressions) and the database migrations
(`alembic/versions/`, history that is never edited). The files are compiled (the code objects
carry each function's lines) and what they hold is kept in a cache in the temp dir, by file
size and mtime: only the files changed since the last run are compiled again (a full run takes
a second or two, a cached one a tenth of that).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import CodeType

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80
LEFT_OUT = ("components/", "bayes_app/pages/", "alembic/versions/")


def python_files(paths: list[str]) -> list[Path]:
    """The repository's tracked Python files (under `paths`, when given), less those left out."""
    out = subprocess.run(["git", "ls-files", "--", *(paths or ["*.py"])], cwd=ROOT, capture_output=True, text=True)
    files = [f for f in out.stdout.splitlines() if f.endswith(".py") and not f.startswith(LEFT_OUT)]
    return [ROOT / f for f in files if (ROOT / f).exists()]


def _last_line(code: CodeType, found: list[tuple[int, int, str]]) -> int:
    """The last source line of `code` and the code nested in it; each function's span goes to `found`."""
    last = code.co_firstlineno
    for _, end, _, _ in code.co_positions():
        if end is not None and end > last:
            last = end
    for const in code.co_consts:
        if isinstance(const, CodeType):
            last = max(last, _last_line(const, found))
    is_function = code.co_flags & inspect.CO_NEWLOCALS and not code.co_name.startswith("<")  # no lambda, no class
    if is_function:
        found.append((code.co_firstlineno, last - code.co_firstlineno + 1, code.co_qualname))
    return last


def functions(path: Path) -> list[tuple[int, int, str]]:
    """(first line, length, name) of each function in the file."""
    found: list[tuple[int, int, str]] = []
    _last_line(compile(path.read_bytes(), str(path), "exec", dont_inherit=True), found)
    return found


CACHE = Path(tempfile.gettempdir()) / f"long-functions-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]}.json"


def all_functions(files: list[Path]) -> dict[str, list[tuple[int, int, str]]]:
    """Each file's functions, from the cache when the file is unchanged (same size and mtime)."""
    try:
        cache = json.loads(CACHE.read_text())
    except (OSError, ValueError):
        cache = {}
    out: dict[str, list[tuple[int, int, str]]] = {}
    changed = False
    for f in files:
        st = f.stat()
        key, stamp = str(f.relative_to(ROOT)), [st.st_size, st.st_mtime_ns]
        hit = cache.get(key)
        if not hit or hit["stamp"] != stamp:
            hit = cache[key] = {"stamp": stamp, "functions": functions(f)}
            changed = True
        out[key] = [(line, n, name) for line, n, name in hit["functions"]]
    if changed:
        tmp = CACHE.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache))
        tmp.replace(CACHE)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=MAX_LINES, help="the longest a function may be (lines)")
    ap.add_argument("paths", nargs="*", help="files or folders (default: the whole repository)")
    args = ap.parse_args(argv)
    found = [
        (f, line, n, name)
        for f, spans in all_functions(python_files(args.paths)).items()
        for line, n, name in spans
        if n > args.max
    ]
    for f, line, n, name in sorted(found):
        print(f"{f}:{line}: {name} is {n} lines long (max {args.max}); split it into named steps")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
