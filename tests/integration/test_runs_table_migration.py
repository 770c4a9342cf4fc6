"""Migration 0023 renames the run table `operations` to `runs` on SQLite and PostgreSQL: its
rows, the usage events and ledger entries that reference them, and its indexes are kept."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from alembic.config import Config

from alembic import command
from bayes_app.db import PROJECT_ROOT


@pytest.fixture(params=["sqlite", "postgresql"])
def old_db(request, tmp_path):
    """A database migrated to 0020 (before the rename), with one user's run and its usage."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        url = request.getfixturevalue("pg_cluster").create_database(f"t_{uuid.uuid4().hex[:12]}")
    cfg = Config(str(PROJECT_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    cfg.attributes["database_url"] = url
    command.upgrade(cfg, "0020")
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.execute(
            sa.text(
                "INSERT INTO users (id, email, email_skeleton, password_hash, is_admin, created_at, "
                "password_changed_at) VALUES ('u1', 'a@example.org', 'a@example.org', 'x', false, "
                "'2026-01-01', '2026-01-01')"
            )
        )
        c.execute(
            sa.text(
                "INSERT INTO operations (id, owner_id, kind, title, status, attempt, model, reserved_credits, "
                "created_at, input) VALUES ('r1', 'u1', 'deepen', 'Dive deeper · M', 'STOPPED', 1, 'm', 5, "
                "'2026-01-02', '{\"mindmap_id\": \"m1\"}')"
            )
        )
        c.execute(
            sa.text(
                "INSERT INTO usage_events (id, operation_id, attempt, seq, step, model, input_tokens, "
                "cached_tokens, output_tokens, cost_credits, estimated, created_at) VALUES "
                "('e1', 'r1', 1, 1, 'critic', 'm', 10, 0, 5, 3, false, '2026-01-02')"
            )
        )
    yield cfg, engine
    engine.dispose()


def test_the_run_table_is_renamed_with_its_rows_references_and_indexes(old_db) -> None:
    cfg, engine = old_db
    command.upgrade(cfg, "0023")
    inspector = sa.inspect(engine)
    assert "runs" in inspector.get_table_names()
    assert "operations" not in inspector.get_table_names()
    assert {i["name"] for i in inspector.get_indexes("runs")} >= {
        "ix_runs_owner_created",
        "ix_runs_resource_id",
        "ix_runs_status",
    }
    for table in ("usage_events", "ledger_entries"):
        assert {fk["referred_table"] for fk in inspector.get_foreign_keys(table)} >= {"runs"}, table
    with engine.begin() as c:
        row = c.execute(sa.text("SELECT kind, title, reserved_credits FROM runs WHERE id = 'r1'")).one()
        used = c.execute(sa.text("SELECT e.cost_credits FROM usage_events e JOIN runs r ON r.id = e.operation_id"))
        assert tuple(row) == ("deepen", "Dive deeper · M", 5)
        assert used.scalar_one() == 3
    command.downgrade(cfg, "0020")
    inspector = sa.inspect(engine)
    assert "operations" in inspector.get_table_names()
    assert "runs" not in inspector.get_table_names()
    assert "ix_operations_status" in {i["name"] for i in inspector.get_indexes("operations")}


def test_the_model_is_the_run_table_and_the_old_name_still_works() -> None:
    from bayes_app.models import Operation, Run, UsageEvent

    assert Operation is Run
    assert Run.__tablename__ == "runs"
    assert {fk.column.table.name for fk in UsageEvent.__table__.foreign_keys} == {"runs"}
