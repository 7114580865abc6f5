"""Alembic environment: the database's libpq string comes from the caller (service.store.migrations.alembic_config),
never from a file; psycopg opens the connection from it, so any form libpq reads works."""

from __future__ import annotations

from alembic import context

from service.store.migrations import CONNINFO, migration_engine
from service.store.tables import metadata

conninfo = context.config.attributes.get(CONNINFO)
if not conninfo:
    raise RuntimeError("no database URL: run migrations through `canfield migrate`")


def run_offline() -> None:
    context.configure(dialect_name="postgresql", target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    engine = migration_engine(conninfo)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
