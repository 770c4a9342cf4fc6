"""The suite's own set-up: the file order (tests/support/ordering.py: by stage, then longest
first), the shared TLS context of the test processes' HTTP clients (conftest) and the one
frontend build copied to every stack port (tests/support/frontend.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.support import ordering


@dataclass
class FakeItem:
    nodeid: str
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object:
        return name if name in self.markers else None


def _files(items: list[FakeItem]) -> list[str]:
    out: list[str] = []
    for it in items:
        f = ordering.file_of(it.nodeid)
        if not out or out[-1] != f:
            out.append(f)
    return out


def test_files_run_whole_by_stage_and_longest_first():
    items = [
        FakeItem("tests/integration/test_api.py::a", {"slow"}),
        FakeItem("tests/browser/test_x_ui.py::a", {"browser", "slow"}),
        FakeItem("tests/unit/test_short.py::a"),
        FakeItem("tests/integration/test_stack.py::a", {"stack", "slow"}),
        FakeItem("tests/browser/test_own_ui.py::a", {"browser", "stack", "slow"}),
        FakeItem("tests/unit/test_long.py::a"),
        FakeItem("tests/unit/test_short.py::b"),
        FakeItem("tests/browser/test_y_ui.py::a", {"browser", "slow"}),
        FakeItem("tests/unit/test_unknown.py::a"),
    ]
    durations = {
        "tests/unit/test_long.py": 90.0,
        "tests/integration/test_stack.py": 60.0,
        "tests/unit/test_short.py": 2.0,
        "tests/browser/test_x_ui.py": 10.0,
        "tests/browser/test_y_ui.py": 30.0,
        "tests/integration/test_api.py": 20.0,  # on the shared app, beside its browser tests
    }
    assert _files(ordering.order(items, durations)) == [
        "tests/integration/test_stack.py",  # stage 0's waiting file first, its busy ones beside it
        "tests/unit/test_long.py",
        "tests/unit/test_short.py",
        "tests/unit/test_unknown.py",
        "tests/browser/test_own_ui.py",
        "tests/browser/test_y_ui.py",
        "tests/integration/test_api.py",
        "tests/browser/test_x_ui.py",
    ]


def test_files_that_wait_on_processes_run_one_at_a_time_beside_busy_ones():
    items = [
        FakeItem("tests/integration/test_stack.py::a", {"stack", "slow"}),
        FakeItem("tests/integration/test_chaos.py::a", {"waits"}),
        FakeItem("tests/unit/test_long.py::a"),
        FakeItem("tests/unit/test_short.py::a"),
        FakeItem("tests/integration/test_api.py::a", {"slow"}),
        FakeItem("tests/integration/test_crash.py::a", {"waits"}),
    ]
    durations = {
        "tests/integration/test_stack.py": 90.0,
        "tests/integration/test_chaos.py": 80.0,
        "tests/unit/test_long.py": 50.0,
        "tests/unit/test_short.py": 1.0,
        "tests/integration/test_api.py": 100.0,  # stage 2: after stage 0 whatever its length
        "tests/integration/test_crash.py": 5.0,
    }
    # two processes: stack (0-90 s) beside long (0-50) and short (50-51); busy files used up, chaos
    # (51-131) must start beside stack, and crash follows on the first process free
    assert _files(ordering.order(items, durations)) == [
        "tests/integration/test_stack.py",
        "tests/unit/test_long.py",
        "tests/unit/test_short.py",
        "tests/integration/test_chaos.py",
        "tests/integration/test_crash.py",
        "tests/integration/test_api.py",
    ]


def test_a_short_busy_file_beside_a_long_wait_is_followed_by_another_busy_one():
    items = [
        FakeItem("tests/integration/test_supervision.py::a", {"waits"}),
        FakeItem("tests/integration/test_chaos.py::a", {"waits"}),
        FakeItem("tests/integration/test_agents.py::a"),
        FakeItem("tests/integration/test_grouping.py::a"),
        FakeItem("tests/integration/test_quality.py::a"),
    ]
    durations = {
        "tests/integration/test_supervision.py": 117.0,
        "tests/integration/test_chaos.py": 104.0,
        "tests/integration/test_agents.py": 57.0,
        "tests/integration/test_grouping.py": 53.0,
        "tests/integration/test_quality.py": 42.0,
    }
    # alternating one of each put chaos beside supervision at 57 s: both cores waiting
    assert _files(ordering.order(items, durations)) == [
        "tests/integration/test_supervision.py",  # 0-117 s
        "tests/integration/test_agents.py",  # 0-57 s
        "tests/integration/test_grouping.py",  # 57-110 s
        "tests/integration/test_quality.py",  # 110-152 s: supervision still runs
        "tests/integration/test_chaos.py",  # 117 s, beside quality
    ]


def test_a_file_runs_at_the_latest_stage_of_its_tests():
    items = [
        FakeItem("tests/integration/test_mixed.py::pure"),
        FakeItem("tests/unit/test_other.py::a"),
        FakeItem("tests/integration/test_mixed.py::on_the_app", {"slow"}),
    ]
    out = ordering.order(items, {})
    assert [it.nodeid for it in out] == [
        "tests/unit/test_other.py::a",
        "tests/integration/test_mixed.py::pure",
        "tests/integration/test_mixed.py::on_the_app",
    ]


def test_durations_are_read_from_the_durations_report(tmp_path):
    report = [
        "============================= slowest durations =============================",
        "71.59s call     tests/browser/test_v_ui.py::test_a[desktop]",
        "7.58s setup    tests/browser/test_v_ui.py::test_a[desktop]",
        "0.50s teardown tests/unit/test_u.py::test_b",
        "(12 durations < 0.005s hidden.)",
    ]
    assert ordering.durations_from_report(report) == {"tests/browser/test_v_ui.py": 79.2, "tests/unit/test_u.py": 0.5}
    assert ordering.recorded_durations(tmp_path / "missing.json") == {}


def test_the_recorded_durations_name_files_that_exist():
    recorded = ordering.recorded_durations()
    assert len(recorded) > 100
    root = ordering.DURATIONS.parent.parent
    missing = [f for f in recorded if not (root / f).is_file()]
    assert not missing, f"tests/durations.json names files that are gone: {missing} (scripts/test_durations.py)"


def test_test_clients_share_one_tls_context():
    """conftest caches httpx's TLS context (CA bundle loaded once per process, not per client)."""
    import httpx

    with httpx.Client() as a, httpx.Client() as b:
        assert a._transport._pool._ssl_context is b._transport._pool._ssl_context  # type: ignore[attr-defined]


def _web_dir(root, port: int):
    """A built web directory as a stack on `port` leaves it (the parts the copy must handle)."""
    import gzip

    from bayes_app.procs.web import STAMP, sources_digest

    env = f'{{"PING": "http://localhost:{port}/ping", "EVENT": "ws://localhost:{port}/_event"}}'
    (root / "node_modules" / "react").mkdir(parents=True)
    (root / "node_modules" / "react" / "index.js").write_text("module.exports = 1;")
    (root / "build" / "client" / "assets").mkdir(parents=True)
    (root / "env.json").write_text(env)
    (root / "build" / "client" / "index.html").write_text("<html></html>")
    chunk = f"var e={{EVENT:`ws://localhost:{port}/_event`,N:{port}1}};"
    (root / "build" / "client" / "assets" / "reflex-env-X.js").write_text(chunk)
    (root / "build" / "client" / "assets" / "reflex-env-X.js.gz").write_bytes(gzip.compress(chunk.encode()))
    (root / "build" / STAMP).write_text(sources_digest(root) + "\n")
    return root


def test_a_stack_port_gets_the_template_with_its_own_port(tmp_path, monkeypatch):
    import gzip
    import os

    from bayes_app.procs.web import is_current, sources_digest
    from tests.support import frontend

    monkeypatch.setattr(frontend, "BUILDS", tmp_path)
    monkeypatch.setattr(frontend, "TEMPLATE", tmp_path / "template")
    monkeypatch.setattr(frontend, "_FROM_TEMPLATE", set())
    first = tmp_path / "gw0-30768"
    with frontend.shared_build(first, 30768):  # no template: this stack builds, then it is kept
        _web_dir(first, 30768)
    assert frontend.is_built(frontend.TEMPLATE)

    other = tmp_path / "gw1-28768"
    _web_dir(other, 28768)
    (other / "build/client/index.html").write_text("<html>an earlier run's pages</html>")
    with frontend.shared_build(other, 28768):  # the stack finds this run's build for its port
        assert is_current(other, sources_digest(other))
    assert (other / "env.json").read_text() == (_web_dir(tmp_path / "expected", 28768) / "env.json").read_text()
    chunk = (other / "build/client/assets/reflex-env-X.js").read_text()
    assert chunk == "var e={EVENT:`ws://localhost:28768/_event`,N:307681};"  # only URLs' ports change
    assert gzip.decompress((other / "build/client/assets/reflex-env-X.js.gz").read_bytes()).decode() == chunk
    assert os.path.samefile(other / "node_modules/react/index.js", first / "node_modules/react/index.js")
    assert (other / "build/client/index.html").read_text() == "<html></html>"
    assert "30768" in (first / "env.json").read_text()  # the template's own port untouched
