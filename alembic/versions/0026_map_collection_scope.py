"""A map scoped to one collection: mindmaps.collection_id

Revision ID: 0026
Revises: 0025
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0026'
down_revision: Union[str, None] = '0025'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('mindmaps', schema=None) as batch_op:
        batch_op.add_column(sa.Column('collection_id', sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f('ix_mindmaps_collection_id'), ['collection_id'], unique=False)
        batch_op.create_foreign_key(
            'fk_mindmaps_collection_id_collections', 'collections', ['collection_id'], ['id'], ondelete='SET NULL'
        )


def downgrade() -> None:
    with op.batch_alter_table('mindmaps', schema=None) as batch_op:
        batch_op.drop_constraint('fk_mindmaps_collection_id_collections', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_mindmaps_collection_id'))
        batch_op.drop_column('collection_id')
