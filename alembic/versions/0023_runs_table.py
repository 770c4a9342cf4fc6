"""The run table is called what it is: operations -> runs (rows, keys and references kept)

Revision ID: 0023
Revises: 0022
"""
from typing import Sequence, Union

from alembic import op


revision: str = '0023'
down_revision: Union[str, None] = '0022'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

INDEXES = (
    ('owner_created', ['owner_id', 'created_at']),
    ('resource_id', ['resource_id']),
    ('status', ['status']),
)


def _rename(old: str, new: str) -> None:
    # SQLite (>= 3.26) and PostgreSQL both carry the foreign keys of usage_events and
    # ledger_entries over to the renamed table; the indexes are renamed after it
    op.rename_table(old, new)
    for suffix, columns in INDEXES:
        op.drop_index(f'ix_{old}_{suffix}', table_name=new)
        op.create_index(f'ix_{new}_{suffix}', new, columns, unique=False)


def upgrade() -> None:
    _rename('operations', 'runs')


def downgrade() -> None:
    _rename('runs', 'operations')
