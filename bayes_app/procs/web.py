"""The web program `make run` supervises: `reflex run --env prod --single-port`, except that the
frontend is not built again when the compiled app is the one already built.

Reflex compiles the pages to JavaScript sources (a few seconds) and then bundles them with Vite
on every start (20 s on a quiet 2-core machine, over a minute on a busy one). The bundle depends
only on those sources, so after compiling we hash them (the port is in them, `env.json`) and keep
the last bundle when the hash is the one stamped beside it: a restart with unchanged code serves
in seconds, and any change to a page, a state or a setting that reaches the frontend rebuilds.

    python -m bayes_app.procs.web PORT [reflex run options, e.g. --backend-host HOST]
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

STAMP = "bayes-sources.sha256"  # in the build directory: Reflex deletes it with the bundle
# Not the bundle's input: installed packages (their lock file is hashed), the bundle itself,
# generated type stubs, and files Reflex rewrites with timestamps or for the backend only.
SKIP_DIRS = frozenset({"node_modules", "build", ".react-router", "backend"})
SKIP_FILES = frozenset({"reflex.json"})


def _sources(web_dir: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(web_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name not in SKIP_FILES:
                yield Path(root) / name


def sources_digest(web_dir: Path) -> str:
    """A hash of the compiled frontend sources in `web_dir` (paths and contents)."""
    h = hashlib.sha256()
    for path in _sources(web_dir):
        h.update(str(path.relative_to(web_dir)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def is_current(web_dir: Path, digest: str) -> bool:
    """The bundle in `web_dir` was built from sources with this digest."""
    stamp = web_dir / "build" / STAMP
    built = (web_dir / "build" / "client" / "index.html").is_file()
    return built and stamp.is_file() and stamp.read_text().strip() == digest


def cached(build: Callable[[], None], web_dir: Callable[[], Path], say: Callable[[str], None]) -> Callable[[], None]:
    """`build` (Reflex's frontend build), skipped when the sources are the last build's."""

    def build_unless_current() -> None:
        wd = web_dir()
        digest = sources_digest(wd)
        if is_current(wd, digest):
            say("Frontend unchanged since its last build: serving that build.")
            return
        build()
        (wd / "build" / STAMP).write_text(digest + "\n")

    return build_unless_current


def main(argv: list[str]) -> None:
    port, more = argv[0], argv[1:]
    from reflex.reflex import cli
    from reflex.utils import build, console, prerequisites

    build.build = cached(build.build, prerequisites.get_web_dir, console.info)
    args = ["run", "--env", "prod", "--single-port", "--frontend-port", port, "--backend-port", port, *more]
    cli.main(args=args, prog_name="reflex")


if __name__ == "__main__":
    main(sys.argv[1:])
