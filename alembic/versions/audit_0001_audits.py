"""Draft audits: the audits table

Revision ID: audit_0001
Revises: tables_0001
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = 'audit_0001'
down_revision: Union[str, None] = 'tables_0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        'audits',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('owner_id', sa.String(length=32), nullable=False),
        sa.Column('run_id', sa.String(length=32), nullable=True),
        sa.Column('filename', sa.String(length=500), nullable=False),
        sa.Column('format', sa.String(length=20), nullable=False),
        sa.Column('collection_id', sa.String(length=32), nullable=True),
        sa.Column('draft', sa.JSON(), nullable=False),
        sa.Column('sentences', sa.JSON(), nullable=False),
        sa.Column('summary', sa.JSON(), nullable=False),
        sa.Column('progress_done', sa.Integer(), nullable=False),
        sa.Column('progress_total', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['owner_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_audits_owner_created', 'audits', ['owner_id', 'created_at'], unique=False)
    op.create_index('ix_audits_run_id', 'audits', ['run_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_audits_run_id', table_name='audits')
    op.drop_index('ix_audits_owner_created', table_name='audits')
    op.drop_table('audits')
