"""Living maps: "Watch for new papers" per map; a counterpoint's newer paper and when it arrived

Revision ID: 0022
Revises: 0021
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

import bayes_app.models.base


revision: str = '0022'
down_revision: Union[str, None] = '0021'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # maps made before this feature keep their current behaviour (off); new maps default to on
    with op.batch_alter_table('mindmaps', schema=None) as batch_op:
        batch_op.add_column(sa.Column('watch_new_papers', sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table('map_relations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('evidence_document_id', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('evidence_title', sa.String(length=1000), nullable=True))
        batch_op.add_column(
            sa.Column('evidence_at', bayes_app.models.base.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table('map_relations', schema=None) as batch_op:
        batch_op.drop_column('evidence_at')
        batch_op.drop_column('evidence_title')
        batch_op.drop_column('evidence_document_id')
    with op.batch_alter_table('mindmaps', schema=None) as batch_op:
        batch_op.drop_column('watch_new_papers')
