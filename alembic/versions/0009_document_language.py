"""document language: the language most of a document's text is in (ISO 639-1, '' unknown)

Revision ID: 0009
Revises: 0008
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision: str = '0009'
down_revision: Union[str, None] = '0008'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        # '' until (re-)ingested: documents indexed before this revision have no language yet.
        batch_op.add_column(sa.Column('language', sqlmodel.sql.sqltypes.AutoString(length=8),
                                      nullable=False, server_default=''))
        batch_op.create_index(batch_op.f('ix_documents_language'), ['language'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_documents_language'))
        batch_op.drop_column('language')
