"""extraction tables: a table over papers, its cells (value, quote, page), its members

Revision ID: tables_0001
Revises: sec_a_0001
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = 'tables_0001'
down_revision: Union[str, None] = 'sec_a_0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('extraction_tables',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('owner_id', sa.String(length=32), nullable=False),
    sa.Column('title', sa.String(length=300), nullable=False),
    sa.Column('collection_id', sa.String(length=32), nullable=True),
    sa.Column('document_ids', sa.JSON(), nullable=False),
    sa.Column('columns', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['owner_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('extraction_tables', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_extraction_tables_collection_id'), ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_extraction_tables_owner_id'), ['owner_id'], unique=False)

    op.create_table('table_cells',
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('document_id', sa.String(length=32), nullable=False),
    sa.Column('column_key', sa.String(length=40), nullable=False),
    sa.Column('value', sa.JSON(), nullable=True),
    sa.Column('quote', sa.Text(), nullable=True),
    sa.Column('page', sa.Integer(), nullable=True),
    sa.Column('char_start', sa.Integer(), nullable=True),
    sa.Column('char_end', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('edited_by', sa.String(length=32), nullable=True),
    sa.Column('run_id', sa.String(length=32), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['table_id'], ['extraction_tables.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('table_id', 'document_id', 'column_key')
    )
    op.create_table('table_members',
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('user_id', sa.String(length=32), nullable=False),
    sa.Column('role', sa.String(length=10), nullable=False),
    sa.Column('added_by', sa.String(length=32), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['table_id'], ['extraction_tables.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('table_id', 'user_id')
    )
    with op.batch_alter_table('table_members', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_table_members_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('table_members', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_table_members_user_id'))

    op.drop_table('table_members')
    op.drop_table('table_cells')
    with op.batch_alter_table('extraction_tables', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_extraction_tables_owner_id'))
        batch_op.drop_index(batch_op.f('ix_extraction_tables_collection_id'))

    op.drop_table('extraction_tables')
