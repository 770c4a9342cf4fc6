"""zotero: connected libraries, their collections and items; Zotero columns on documents

Revision ID: 0005
Revises: 0004
"""
from typing import Sequence, Union

import sqlalchemy as sa
import sqlmodel
from alembic import op

import bayes_app.models.base

revision: str = '0005'
down_revision: Union[str, None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

S = sqlmodel.sql.sqltypes.AutoString
T = bayes_app.models.base.UTCDateTime


def upgrade() -> None:
    op.create_table(
        'zotero_libraries',
        sa.Column('id', S(length=32), nullable=False),
        sa.Column('owner_id', S(length=32), nullable=False),
        sa.Column('api', S(length=10), nullable=False),
        sa.Column('library_type', S(length=10), nullable=False),
        sa.Column('library_key', S(length=40), nullable=False),
        sa.Column('name', S(length=300), nullable=False),
        sa.Column('api_key_encrypted', sa.Text(), nullable=True),
        sa.Column('permissions', sa.JSON(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('status', S(length=20), nullable=False),
        sa.Column('progress', sa.JSON(), nullable=False),
        sa.Column('last_result', sa.JSON(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('last_sync_at', T(timezone=True), nullable=True),
        sa.Column('lease_token', S(length=32), nullable=True),
        sa.Column('lease_until', T(timezone=True), nullable=True),
        sa.Column('created_at', T(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['owner_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('owner_id', 'api', 'library_type', 'library_key', name='uq_zotero_library'),
    )
    with op.batch_alter_table('zotero_libraries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_zotero_libraries_owner_id'), ['owner_id'], unique=False)

    op.create_table(
        'zotero_collections',
        sa.Column('library_id', S(length=32), nullable=False),
        sa.Column('key', S(length=16), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('name', S(length=300), nullable=False),
        sa.Column('parent_key', S(length=16), nullable=True),
        sa.Column('trashed', sa.Boolean(), nullable=False),
        sa.Column('collection_id', S(length=32), nullable=True),
        sa.Column('created_collection', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['library_id'], ['zotero_libraries.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('library_id', 'key'),
    )

    op.create_table(
        'zotero_items',
        sa.Column('library_id', S(length=32), nullable=False),
        sa.Column('key', S(length=16), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('item_type', S(length=40), nullable=False),
        sa.Column('parent_key', S(length=16), nullable=True),
        sa.Column('trashed', sa.Boolean(), nullable=False),
        sa.Column('data', sa.JSON(), nullable=False),
        sa.Column('dirty', sa.Boolean(), nullable=False),
        sa.Column('file_md5', S(length=32), nullable=True),
        sa.Column('document_id', S(length=32), nullable=True),
        sa.Column('problem_code', S(length=40), nullable=True),
        sa.Column('problem_message', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['library_id'], ['zotero_libraries.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('library_id', 'key'),
    )
    with op.batch_alter_table('zotero_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_zotero_items_parent_key'), ['parent_key'], unique=False)
        batch_op.create_index(batch_op.f('ix_zotero_items_dirty'), ['dirty'], unique=False)
        batch_op.create_index(batch_op.f('ix_zotero_items_document_id'), ['document_id'], unique=False)

    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('zotero_library_id', S(length=32), nullable=True))
        batch_op.add_column(sa.Column('zotero_item_key', S(length=16), nullable=True))
        batch_op.add_column(sa.Column('zotero_attachment_key', S(length=16), nullable=True))
        batch_op.add_column(sa.Column('zotero_version', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('zotero_md5', S(length=32), nullable=True))
        batch_op.create_index(batch_op.f('ix_documents_zotero_library_id'), ['zotero_library_id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_documents_zotero_library_id'))
        for c in ('zotero_md5', 'zotero_version', 'zotero_attachment_key', 'zotero_item_key',
                  'zotero_library_id'):
            batch_op.drop_column(c)
    op.drop_table('zotero_items')
    op.drop_table('zotero_collections')
    op.drop_table('zotero_libraries')
