"""A fresh, migrated database for a benchmark: on ``BENCH_DATABASE_URL`` or an embedded PostgreSQL."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from .service_api import embedded_db, libpq_url, migrate


@dataclass
class Database:
    url: str  # the bench's database (libpq URL)
    admin_url: str  # the server's maintenance database, to create and drop it
    name: str
    description: str
    postmaster_pid: int | None  # the embedded server's, to meter its CPU


@contextmanager
def fresh_database(admin_url: str, prefix: str) -> Iterator[tuple[str, str]]:
    """A new database ``<prefix>_<hex>`` on the server of ``admin_url``: its (name, libpq URL);
    dropped at the end, open connections and all."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield name, embedded_db.with_database(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def bench_database(work_dir: Path) -> Iterator[Database]:
    given = os.environ.get("BENCH_DATABASE_URL", "").strip()
    embedded = None
    if given:
        admin_url = libpq_url(given)
    else:
        embedded = embedded_db.start(work_dir / "embedded", database=None)
        admin_url = embedded.admin_url
    try:
        with fresh_database(admin_url, "canfield_bench") as (name, url):
            migrate(url)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(
                    "CREATE TABLE bench_ceiling (id bigserial PRIMARY KEY, game_id uuid, body jsonb, "
                    "at timestamptz DEFAULT now())"
                )
                version = conn.execute("SHOW server_version").fetchone()
            where = "BENCH_DATABASE_URL" if given else "embedded, Unix socket"
            description = f"PostgreSQL {version[0] if version else '?'} ({where})"
            yield Database(url, admin_url, name, description, embedded.pid if embedded else None)
    finally:
        if embedded is not None:
            embedded.stop()
