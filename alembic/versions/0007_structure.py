"""document structure: chunk roles and sections, page role spans, parsed reference lists

Revision ID: 0007
Revises: 0006
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision: str = '0007'
down_revision: Union[str, None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('chunks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('role', sqlmodel.sql.sqltypes.AutoString(length=20),
                                      nullable=False, server_default='body'))
        batch_op.add_column(sa.Column('section', sqlmodel.sql.sqltypes.AutoString(length=500),
                                      nullable=False, server_default=''))
    with op.batch_alter_table('page_texts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('spans', sa.JSON(), nullable=False, server_default='[]'))
    with op.batch_alter_table('documents', schema=None) as batch_op:
        # 0: ingested before roles existed; the worker re-analyses these in the background.
        batch_op.add_column(sa.Column('structure_version', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('reference_count', sa.Integer(), nullable=False, server_default='0'))
        batch_op.create_index(batch_op.f('ix_documents_structure_version'), ['structure_version'], unique=False)
    op.create_table(
        'document_references',
        sa.Column('document_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('page', sa.Integer(), nullable=False),
        sa.Column('raw', sa.Text(), nullable=False),
        sa.Column('authors', sa.JSON(), nullable=False),
        sa.Column('year', sa.Integer(), nullable=True),
        sa.Column('title', sa.Text(), nullable=True),
        sa.Column('venue', sa.Text(), nullable=True),
        sa.Column('doi', sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.ForeignKeyConstraint(['document_id'], ['documents.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('document_id', 'position'),
    )


def downgrade() -> None:
    op.drop_table('document_references')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_documents_structure_version'))
        batch_op.drop_column('reference_count')
        batch_op.drop_column('structure_version')
    with op.batch_alter_table('page_texts', schema=None) as batch_op:
        batch_op.drop_column('spans')
    with op.batch_alter_table('chunks', schema=None) as batch_op:
        batch_op.drop_column('section')
        batch_op.drop_column('role')
