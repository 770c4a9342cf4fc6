"""citation graph: library documents whose reference lists name each other

Revision ID: 0019
Revises: 0013
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0019'
down_revision: Union[str, None] = '0013'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        'document_citations',
        sa.Column('citing_id', sa.String(length=32), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('cited_id', sa.String(length=32), nullable=False),
        sa.Column('owner_id', sa.String(length=32), nullable=False),
        sa.Column('how', sa.String(length=10), nullable=False),
        sa.Column('score', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['citing_id'], ['documents.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['cited_id'], ['documents.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('citing_id', 'position'),
    )
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('citations_version', sa.Integer(), nullable=False, server_default='0'))
        batch_op.create_index('ix_documents_citations_version', ['citations_version'], unique=False)
    with op.batch_alter_table('document_citations', schema=None) as batch_op:
        batch_op.create_index('ix_document_citations_cited_id', ['cited_id'], unique=False)
        batch_op.create_index('ix_document_citations_owner_id', ['owner_id'], unique=False)


def downgrade() -> None:
    op.drop_table('document_citations')
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index('ix_documents_citations_version')
        batch_op.drop_column('citations_version')
