"""users.email_skeleton: the TR39 confusable skeleton of the address (lookalike accounts refused)

Revision ID: 0012
Revises: 0010
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel
from icu import SpoofChecker


revision: str = '0012'
down_revision: Union[str, None] = '0010'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email_skeleton', sqlmodel.sql.sqltypes.AutoString(length=1280),
                                      nullable=False, server_default=''))
        batch_op.create_index(batch_op.f('ix_users_email_skeleton'), ['email_skeleton'], unique=False)
    # existing accounts: the same skeleton as bayes_app.accounts.identity.skeleton (stored
    # addresses are already in sign-in's normal form)
    users = sa.table('users', sa.column('id', sa.String), sa.column('email', sa.String),
                     sa.column('email_skeleton', sa.String))
    bind, checker = op.get_bind(), SpoofChecker()
    for uid, email in bind.execute(sa.select(users.c.id, users.c.email)).all():
        bind.execute(users.update().where(users.c.id == uid)
                     .values(email_skeleton=checker.getSkeleton(0, email.casefold())))


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_users_email_skeleton'))
        batch_op.drop_column('email_skeleton')
