"""sharing: map members (viewer/editor), collection members (read-only), who made each node and edit

Revision ID: 0021
Revises: 0020
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0021'
down_revision: Union[str, None] = '0020'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        'map_members',
        sa.Column('map_id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('role', sa.String(length=10), nullable=False),
        sa.Column('added_by', sa.String(length=32), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['map_id'], ['mindmaps.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('map_id', 'user_id'),
    )
    op.create_index('ix_map_members_user_id', 'map_members', ['user_id'], unique=False)
    op.create_table(
        'collection_members',
        sa.Column('collection_id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('role', sa.String(length=10), nullable=False),
        sa.Column('added_by', sa.String(length=32), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['collection_id'], ['collections.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('collection_id', 'user_id'),
    )
    op.create_index('ix_collection_members_user_id', 'collection_members', ['user_id'], unique=False)
    with op.batch_alter_table('map_nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('author_id', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('edited_by', sa.String(length=32), nullable=True))
    with op.batch_alter_table('map_edits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('user_id', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('node_ids', sa.JSON(), nullable=False, server_default='[]'))
        batch_op.add_column(sa.Column('after', sa.JSON(), nullable=False, server_default='{}'))
        batch_op.create_index('ix_map_edits_user_id', ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('map_edits', schema=None) as batch_op:
        batch_op.drop_index('ix_map_edits_user_id')
        batch_op.drop_column('after')
        batch_op.drop_column('node_ids')
        batch_op.drop_column('user_id')
    with op.batch_alter_table('map_nodes', schema=None) as batch_op:
        batch_op.drop_column('edited_by')
        batch_op.drop_column('author_id')
    op.drop_index('ix_collection_members_user_id', table_name='collection_members')
    op.drop_table('collection_members')
    op.drop_index('ix_map_members_user_id', table_name='map_members')
    op.drop_table('map_members')
