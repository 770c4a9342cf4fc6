"""zotero both ways: notes written back to Zotero; annotations re-read with their fields;
citations can carry a page region (a Zotero highlight's rectangles)

Revision ID: 0013
Revises: 0012

Annotations were synced before but stored without their annotation fields: forget those rows
and reset the libraries' versions, so the next sync lists everything again and fetches only
what is missing (the annotations); nothing else is downloaded again.
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel

import bayes_app.models.base


revision: str = '0013'
down_revision: Union[str, None] = '0012'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        'zotero_notes',
        sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('library_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('map_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('parent_item_key', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column('note_key', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('updated_at', bayes_app.models.base.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(['library_id'], ['zotero_libraries.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['map_id'], ['mindmaps.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('library_id', 'map_id', 'parent_item_key', name='uq_zotero_note'),
    )
    with op.batch_alter_table('zotero_notes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_zotero_notes_library_id'), ['library_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_zotero_notes_map_id'), ['map_id'], unique=False)
    with op.batch_alter_table('map_citations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('region', sa.JSON(), nullable=True))
    op.execute("DELETE FROM zotero_items WHERE item_type = 'annotation'")
    op.execute("UPDATE zotero_libraries SET version = 0")


def downgrade() -> None:
    with op.batch_alter_table('map_citations', schema=None) as batch_op:
        batch_op.drop_column('region')
    with op.batch_alter_table('zotero_notes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_zotero_notes_map_id'))
        batch_op.drop_index(batch_op.f('ix_zotero_notes_library_id'))
    op.drop_table('zotero_notes')
