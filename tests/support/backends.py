"""Which database backends a test runs on.

`db_url` (tests/conftest.py) runs a test once on SQLite and once on PostgreSQL 15. What the
database does — queries, locks, migrations, bulk writes, settlement under faults — keeps both.
Logic above it whose queries other tests already cover on both (the agents' choices of claims,
fallbacks between endpoint modes) runs once, on SQLite, the backend `make run` uses:
`@SQLITE_ONLY` on the test.
"""

import pytest

SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
