"""OCR language: chosen per upload, and the one OCR used, per document

Revision ID: 0025
Revises: 0023
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0025'
down_revision: Union[str, None] = '0023'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ocr_lang', sa.String(length=40), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('ocr_lang_choice', sa.String(length=20), nullable=False, server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_column('ocr_lang_choice')
        batch_op.drop_column('ocr_lang')
