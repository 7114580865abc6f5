"""Migrations: Alembic brings the database to the newest schema (the only way tables are made).

The database is named by a libpq connection string in any form libpq reads (``DATABASE_URL``): a
URL with several hosts (``postgresql://u@h1:5432,h2:5432/db?target_session_attrs=read-write``) or
``key=value`` pairs as well as a plain URL. SQLAlchemy's URL parser knows one host only, so
SQLAlchemy never parses it: psycopg opens the migration's connection from the string itself
(``migration_engine``), and Alembic is handed the string through its configuration's attributes.
"""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, pool

from ..settings import connect_timeout_seconds
from .connections import STANDBY, PrimaryUnavailable, checked_url, connect_timeout

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
log = logging.getLogger("canfield.migrations")

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


def is_later(revision: str, than: str) -> bool:
    """Whether ``revision`` is a later migration than ``than``. A revision id is its number (0017
    follows 0016), so a release tells a later release's revision, which its own scripts do not
    hold, from one it has never heard of."""
    return revision.isdigit() and than.isdigit() and int(revision) > int(than)


def serves_schema(revision: str | None, head: str) -> bool:
    """Whether code whose newest migration is ``head`` serves a database at ``revision``: at its
    head, or at a later release's (every migration leaves the release before it working:
    docs/operations.md, "The rule: two releases side by side")."""
    return revision is not None and (revision == head or is_later(revision, head))


def migrate(url: str) -> None:
    """Bring the database up to the newest schema (idempotent). A database a later release has
    already migrated past this code's head is left as it is: a process of the release before
    starts and serves on it during a rolling deploy, or after a rollback of the code. Raises
    ``PrimaryUnavailable`` when ``url`` reaches a read-only standby rather than the primary."""
    config = alembic_config(url)
    current = primary_revision(config.attributes[CONNINFO])
    head = head_revision()
    if current is not None and is_later(current, head):
        log.info("the database schema is at %s, past this code's %s (a later release's): left as it is",
                 current, head)
        return
    command.upgrade(config, "head")


def primary_revision(conninfo: str) -> str | None:
    """The migration revision of the primary ``conninfo`` reaches (None: no ``alembic_version``
    yet). Raises ``PrimaryUnavailable`` (saying so) if it reaches a standby; libpq's
    ``OperationalError`` if it reaches nothing within the connect timeout."""
    with psycopg.connect(conninfo, **connect_timeout(conninfo, connect_timeout_seconds())) as conn:
        row = conn.execute("SELECT pg_is_in_recovery(), to_regclass('alembic_version') IS NOT NULL").fetchone()
        if row is not None and row[0]:
            raise PrimaryUnavailable(STANDBY)
        if row is None or not row[1]:
            return None
        found = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if found is None else str(found[0])
