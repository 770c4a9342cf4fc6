"""Which database backends a test runs on.

`db_url` (tests/conftest.py) runs a test once on SQLite and once on PostgreSQL 15. What the
database does — queries, locks, migrations, bulk writes, settlement under faults — keeps both.
Logic above it whose queries other tests already cover on both (the agents' choices of claims,
fallbacks between endpoint modes) runs once, on SQLite, the backend `make run` uses:
`@SQLITE_ONLY` on the test. A test whose size is what it measures (a 5,000-item Zotero library)
runs once, on PostgreSQL, when a smaller run of the same path covers SQLite: `@POSTGRES_ONLY`.
"""

import pytest

SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
POSTGRES_ONLY = pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
