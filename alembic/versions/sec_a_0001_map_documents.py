"""Papers the owner makes readable to a shared map (map_documents); a run's writes in the map's
history (map_edits.run_id)

Revision ID: sec_a_0001
Revises: 0026
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "sec_a_0001"
down_revision: Union[str, None] = '0026'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "map_documents",
        sa.Column("map_id", sa.String(length=32), nullable=False),
        sa.Column("document_id", sa.String(length=32), nullable=False),
        sa.Column("added_by", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["map_id"], ["mindmaps.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("map_id", "document_id"),
    )
    op.create_index("ix_map_documents_document_id", "map_documents", ["document_id"], unique=False)
    with op.batch_alter_table("map_edits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("run_id", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_map_edits_run_id", ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("map_edits", schema=None) as batch_op:
        batch_op.drop_index("ix_map_edits_run_id")
        batch_op.drop_column("run_id")
    op.drop_index("ix_map_documents_document_id", table_name="map_documents")
    op.drop_table("map_documents")
