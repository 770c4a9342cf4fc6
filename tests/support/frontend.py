"""One frontend build per test run, shared by every stack port.

Reflex writes a stack's port into the built bundle (`env.json`, inlined into the `reflex-env`
chunk), so each port's web directory (`procs.web_workdir`) needs a build of its own: an npm
install and a Vite build, about a minute of CPU each. The first stack of a run builds as usual
while it holds a lock; its directory is then kept as the run's template, and a stack on another
port gets a copy with the port rewritten and a stamp saying which sources it holds
(`bayes_app/procs/web.py`), so the web program serves it instead of building again. Were the
copy not what that port would have built (a setting that reaches the pages, say), the stamp would
not match the sources Reflex compiles at start and the web program would build as before.
"""

from __future__ import annotations

import fcntl
import gzip
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bayes_app.procs.web import STAMP, sources_digest

BUILDS = Path(__file__).resolve().parents[2] / ".web-tests"
TEMPLATE = BUILDS / "template"
_PORT_FILE = "bayes-template-port"  # in the template: the port its bundle was built for
_PACKAGES = "node_modules"
_TEXT = {".js", ".mjs", ".json", ".html"}


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


@contextmanager
def shared_build(web_dir: Path, port: int) -> Iterator[None]:
    """Around a stack's start on `port` whose frontend is built into `web_dir`: a copy of the
    run's template if this port has no build yet; with no template either, the stack builds
    while holding the lock (other processes wait for it rather than build the same bundle beside
    it), and its build becomes the template once it serves."""
    if is_built(web_dir):
        yield
        _keep_as_template(web_dir, port)
        return
    with _locked():
        if is_built(TEMPLATE):
            clone(TEMPLATE, web_dir, port)
        else:
            yield
            _save(web_dir, port)
            return
    yield


def _keep_as_template(web_dir: Path, port: int) -> None:
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
