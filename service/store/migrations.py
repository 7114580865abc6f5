"""Migrations: Alembic brings the database to the newest schema (the only way tables are made).

The database is named by a libpq connection string in any form libpq reads (``DATABASE_URL``): a
URL with several hosts (``postgresql://u@h1:5432,h2:5432/db?target_session_attrs=read-write``) or
``key=value`` pairs as well as a plain URL. SQLAlchemy's URL parser knows one host only, so
SQLAlchemy never parses it: psycopg opens the migration's connection from the string itself
(``migration_engine``), and Alembic is handed the string through its configuration's attributes.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, pool

from ..settings import connect_timeout_seconds
from .connections import STANDBY, PrimaryUnavailable, checked_url, connect_timeout

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
CONNINFO = "canfield.conninfo"
"""The key of ``Config.attributes`` under which the database's libpq string reaches migrations/env.py."""


def sqlalchemy_url(url: str) -> str:
    """The same database as a SQLAlchemy URL using the psycopg 3 driver (a URL with one host;
    ``migration_engine`` takes any form)."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise ValueError("DATABASE_URL must be a postgresql:// URL")


def alembic_config(url: str | None = None) -> Config:
    """The migrations' Alembic configuration, for the database at ``url`` (None: no database,
    only the scripts)."""
    config = Config(str(MIGRATIONS_DIR / "alembic.ini"))
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("version_locations", str(MIGRATIONS_DIR / "versions"))
    if url is not None:
        config.attributes[CONNINFO] = checked_url(url)
    return config


def migration_engine(conninfo: str) -> Engine:
    """A SQLAlchemy engine whose connections psycopg opens from ``conninfo`` (any form libpq
    reads, several hosts included), one at a time, none kept."""
    timeout = connect_timeout(conninfo, connect_timeout_seconds())  # a host that is down cannot hang it
    return create_engine(
        "postgresql+psycopg://", creator=lambda: psycopg.connect(conninfo, **timeout), poolclass=pool.NullPool
    )


def head_revision() -> str:
    """The newest migration this code knows (what a ready database is at)."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError("no migrations found")
    return head


def migrate(url: str) -> None:
    """Bring the database up to the newest schema (idempotent). Raises ``PrimaryUnavailable``
    when ``url`` reaches a read-only standby rather than the primary."""
    config = alembic_config(url)
    require_primary(config.attributes[CONNINFO])
    command.upgrade(config, "head")


def require_primary(conninfo: str) -> None:
    """Raise ``PrimaryUnavailable`` (saying so) if ``conninfo`` reaches a standby; libpq's
    ``OperationalError`` if it reaches nothing within the connect timeout."""
    with psycopg.connect(conninfo, **connect_timeout(conninfo, connect_timeout_seconds())) as conn:
        row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
    if row is not None and row[0]:
        raise PrimaryUnavailable(STANDBY)
