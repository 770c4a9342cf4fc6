"""The web program builds the frontend only when the compiled sources changed (procs/web.py)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from bayes_app.procs import web


def _web_dir(tmp_path: Path, port: int = 3000) -> Path:
    wd = tmp_path / ".web"
    (wd / "app" / "routes").mkdir(parents=True)
    (wd / "app" / "routes" / "index.jsx").write_text("export default () => 'hi'")
    (wd / "env.json").write_text(f'{{"EVENT": "ws://localhost:{port}/_event"}}')
    (wd / "reflex.json").write_text('{"last_reflex_run_datetime": "1"}')
    (wd / "node_modules" / "react").mkdir(parents=True)
    return wd


def _bundle(wd: Path, html: str) -> None:
    (wd / "build" / "client").mkdir(parents=True, exist_ok=True)
    (wd / "build" / "client" / "index.html").write_text(html)


def _builder(wd: Path) -> tuple[list[int], object]:
    calls: list[int] = []

    def build() -> None:  # as Reflex's: a new bundle is written
        calls.append(1)
        _bundle(wd, f"<html>{len(calls)}</html>")

    return calls, web.cached(build, lambda: wd, lambda _msg: None)


def test_a_restart_with_the_same_sources_serves_the_last_build(tmp_path):
    wd = _web_dir(tmp_path)
    calls, build = _builder(wd)
    build()
    build()
    assert len(calls) == 1
    # what does not reach the bundle changes nothing: timestamps, installed packages
    (wd / "reflex.json").write_text('{"last_reflex_run_datetime": "2"}')
    (wd / "node_modules" / "react" / "index.js").write_text("x")
    build()
    assert len(calls) == 1


def test_a_changed_page_or_port_builds_again(tmp_path):
    wd = _web_dir(tmp_path)
    calls, build = _builder(wd)
    build()
    (wd / "app" / "routes" / "index.jsx").write_text("export default () => 'changed'")
    build()
    assert len(calls) == 2
    (wd / "env.json").write_text('{"EVENT": "ws://localhost:3001/_event"}')  # the port is in the bundle
    build()
    assert len(calls) == 3
    build()
    assert len(calls) == 3


def test_a_missing_or_partial_bundle_is_built(tmp_path):
    wd = _web_dir(tmp_path)
    calls, build = _builder(wd)
    build()
    (wd / "build" / "client" / "index.html").unlink()  # an interrupted build
    build()
    assert len(calls) == 2


def test_a_failed_build_leaves_no_stamp(tmp_path):
    wd = _web_dir(tmp_path)

    def failing() -> None:
        _bundle(wd, "<html>half</html>")
        raise SystemExit(1)

    with contextlib.suppress(SystemExit):
        web.cached(failing, lambda: wd, lambda _msg: None)()
    assert not web.is_current(wd, web.sources_digest(wd))
