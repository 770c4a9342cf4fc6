"""One frontend build per test run, shared by every stack port.

Reflex writes a stack's port into the built bundle (`env.json`, inlined into the `reflex-env`
chunk), so each port's web directory (`procs.web_workdir`) would need a build of its own: an
npm install and a Vite build, ~35 s of CPU. `make test` builds the run's template beside its
set-up instead (`prebuild`, on the core pip leaves idle); without one (pytest run directly), the
first stack of the run builds while it holds a lock and its directory becomes the template. A
test process's first stack on a port gets a copy of the template with the port rewritten and a
stamp saying which sources it holds (`bayes_app/procs/web.py`), so the web program serves it
instead of building again. Were the copy not what that port would have built (a setting that
reaches the pages, say), the stamp would not match the sources Reflex compiles at start and the
web program would build as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bayes_app.procs.web import STAMP, sources_digest

BUILDS = Path(__file__).resolve().parents[2] / ".web-tests"
TEMPLATE = BUILDS / "template"
_PORT_FILE = "bayes-template-port"  # in the template: the port its bundle was built for
_PACKAGES = "node_modules"
_TEXT = {".js", ".mjs", ".json", ".html"}
PREBUILD_PORT = 19768  # below every test process's block of ports (procs._port_block)


def is_built(web_dir: Path) -> bool:
    """`web_dir` holds a built bundle (current or not: the web program decides)."""
    return (web_dir / "build" / "client" / "index.html").is_file()


def forget_template() -> None:
    """Called once per run, before any stack starts: a template from an earlier run may be of
    other code (it would be detected and rebuilt, but every port would pay for it)."""
    with _locked():
        shutil.rmtree(TEMPLATE, ignore_errors=True)


@contextmanager
def _locked() -> Iterator[None]:
    BUILDS.mkdir(parents=True, exist_ok=True)
    with open(BUILDS / "template.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


_FROM_TEMPLATE: set[Path] = set()  # web directories this process made from the run's template


@contextmanager
def shared_build(web_dir: Path, port: int) -> Iterator[None]:
    """Around a stack's start on `port` whose frontend is built into `web_dir`: a copy of the
    run's template the first time this process starts a stack there (a directory left by an
    earlier run may hold other code); with no template, the stack builds while holding the lock
    (other processes wait for it rather than build the same bundle beside it), or serves what
    `web_dir` holds, and its build becomes the template once it serves."""
    with _locked():
        if is_built(TEMPLATE) and web_dir not in _FROM_TEMPLATE:
            clone(TEMPLATE, web_dir, port)
            _FROM_TEMPLATE.add(web_dir)
        elif not is_built(web_dir):
            yield
            _save(web_dir, port)
            return
    yield
    if not is_built(TEMPLATE):
        with _locked():
            _save(web_dir, port)


def _save(web_dir: Path, port: int) -> None:
    """`web_dir`, which a stack on `port` has just served, becomes the template (lock held)."""
    if is_built(TEMPLATE) or not is_built(web_dir):
        return
    partial = TEMPLATE.with_name(TEMPLATE.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    _copy(web_dir, partial)
    (partial / _PORT_FILE).write_text(str(port))
    shutil.rmtree(TEMPLATE, ignore_errors=True)
    partial.rename(TEMPLATE)
    _FROM_TEMPLATE.add(web_dir)


def prebuild(port: int = PREBUILD_PORT, timeout: float = 600) -> bool:
    """Build the run's template before the suite starts: `make test` runs this in the background
    while pip installs the test requirements, on the core pip leaves idle. The web program
    (`bayes_app.procs.web`, as every stack runs it) builds into `.web-tests/prebuild` — or finds
    its last build current — and is stopped once it serves; the lock is held throughout, so a
    stack that starts meanwhile waits for the template instead of building its own."""
    from tests.support.procs import ROOT, _port_open, stack_env

    work = BUILDS / "prebuild"
    with _locked():
        shutil.rmtree(TEMPLATE, ignore_errors=True)
        if _port_open(port):
            return False  # someone else's server: the stacks build as before
        started = time.time()
        with tempfile.TemporaryDirectory() as data:
            env = stack_env(Path(data), port, REFLEX_SSR="false", REFLEX_WEB_WORKDIR=str(work))
            with open(BUILDS / "prebuild.log", "w") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "bayes_app.procs.web", str(port)],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:
                deadline = time.monotonic() + timeout
                while proc.poll() is None and time.monotonic() < deadline and not _port_open(port):
                    time.sleep(0.5)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
        stamp = work / "build" / STAMP
        served = "Frontend unchanged since its last build" in (BUILDS / "prebuild.log").read_text(errors="replace")
        if not (stamp.is_file() and (served or stamp.stat().st_mtime >= started)):
            return False  # not built (or only an earlier run's build is there): the stacks build as before
        _save(work, port)
        return True


def clone(template: Path, web_dir: Path, port: int) -> None:
    """`web_dir` becomes the template's build for `port`: the packages hard-linked, the rest
    copied, the port rewritten wherever the template's appears (sources and bundle, their
    gzipped twins re-made), and the build stamped with the digest of the rewritten sources."""
    old = int((template / _PORT_FILE).read_text())
    shutil.rmtree(web_dir, ignore_errors=True)
    _copy(template, web_dir)
    pattern = re.compile(rb"(//(?:localhost|127\.0\.0\.1):)" + str(old).encode() + rb"(?!\d)")
    for path in _files(web_dir):
        if path.suffix not in _TEXT:
            continue
        data = path.read_bytes()
        new = pattern.sub(rb"\g<1>" + str(port).encode(), data)
        if new == data:
            continue
        path.write_bytes(new)
        twin = path.with_name(path.name + ".gz")
        if twin.is_file():
            twin.write_bytes(gzip.compress(new, mtime=0))
    (web_dir / "build" / STAMP).write_text(sources_digest(web_dir) + "\n")


def _copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(_PACKAGES, _PORT_FILE))
    if (src / _PACKAGES).is_dir():
        shutil.copytree(src / _PACKAGES, dst / _PACKAGES, symlinks=True, copy_function=os.link)


def _files(root: Path) -> Iterator[Path]:
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != _PACKAGES]
        for name in files:
            yield Path(here) / name


if __name__ == "__main__":  # python -m tests.support.frontend prebuild
    if sys.argv[1:] != ["prebuild"]:
        sys.exit("usage: python -m tests.support.frontend prebuild")
    sys.exit(0 if prebuild() else 1)
