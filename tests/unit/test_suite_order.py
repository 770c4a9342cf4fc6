"""The suite's own set-up: the file order (tests/support/ordering.py: by stage, then longest
first) and the shared TLS context of the test processes' HTTP clients (conftest)."""

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
        "tests/unit/test_long.py",
        "tests/integration/test_stack.py",
        "tests/unit/test_short.py",
        "tests/unit/test_unknown.py",
        "tests/browser/test_own_ui.py",
        "tests/browser/test_y_ui.py",
        "tests/integration/test_api.py",
        "tests/browser/test_x_ui.py",
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
