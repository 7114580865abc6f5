"""Alembic environment: the URL comes from the caller (service.store.migrations.migrate), never from a file."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from service.store.tables import metadata

url = context.config.get_main_option("sqlalchemy.url")
if not url:
    raise RuntimeError("no database URL: run migrations through `canfield migrate`")


def run_offline() -> None:
    context.configure(url=url, target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
