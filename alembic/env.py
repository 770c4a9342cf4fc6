"""Alembic environment: target metadata = all SQLModel tables; URL from settings."""

from sqlmodel import SQLModel

import bayes_app.models  # noqa: F401  (registers every table on SQLModel.metadata)
from alembic import context
from bayes_app.db import make_engine
from bayes_app.settings import get_settings

config = context.config
target_metadata = SQLModel.metadata


def _url() -> str:
    return config.attributes.get("database_url") or get_settings().effective_database_url


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = _url()
    engine = make_engine(url)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=url.startswith("sqlite"),  # SQLite needs batch mode for ALTERs
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
