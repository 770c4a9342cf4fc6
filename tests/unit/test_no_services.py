"""`make test-fast` (tests/unit) needs nothing running: no unit test asks for a fixture that
starts a service (Redis, PostgreSQL, the index, the app stack)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE_FIXTURES = {"redis_server", "pg_cluster", "db_url", "dbs", "app_stack", "index_env", "chromium_browser"}


def test_unit_tests_start_no_services():
    found = []
    for path in sorted(p for p in Path(__file__).parent.glob("test_*.py") if p.name != Path(__file__).name):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                used = {a.arg for a in node.args.args} & SERVICE_FIXTURES
                if used:
                    found.append(f"{path.name}::{node.name} {sorted(used)}")
        if "RedisServer(" in path.read_text() or "PgCluster(" in path.read_text():
            found.append(f"{path.name} starts a server itself")
    assert not found, "unit tests that need services (move them to tests/integration):\n" + "\n".join(found)
