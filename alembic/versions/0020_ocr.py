"""OCR: pages read by text recognition keep their word boxes; documents count them

Revision ID: 0020
Revises: 0019
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0020'
down_revision: Union[str, None] = '0019'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('page_texts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ocr_words', sa.JSON(), nullable=False, server_default='[]'))
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ocr_pages', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_column('ocr_pages')
    with op.batch_alter_table('page_texts', schema=None) as batch_op:
        batch_op.drop_column('ocr_words')
