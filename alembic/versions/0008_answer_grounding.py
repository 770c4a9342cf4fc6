"""answer grounding: whether an Ask answer cites the library (cited | quoted | unsupported | uncited)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 11:30:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision: str = '0008'
down_revision: Union[str, None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('chat_messages', schema=None) as batch_op:
        batch_op.add_column(sa.Column('grounding', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('chat_messages', schema=None) as batch_op:
        batch_op.drop_column('grounding')
