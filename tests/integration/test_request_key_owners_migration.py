"""Migration 0014 adds ``request_keys.player_id`` and ``scopes`` (nullable, indexed by player):
rows stored before it keep their replies, the release before it keeps claiming, completing and
erasing keys with its own statements on the new schema, and the downgrade drops the columns
and keeps the rows."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import psycopg
from alembic import command
from psycopg.types.json import Json

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

# The statements of the release before 0014 (service/store/request_keys.py, service/store/players.py)
OLD_CLAIM = (
    "INSERT INTO request_keys (scope, key, request_hash, created_at) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (scope, key) DO NOTHING RETURNING 1"
)
OLD_FOUND = "SELECT request_hash, status, headers, body, created_at FROM request_keys WHERE scope = %s AND key = %s"
OLD_COMPLETE = (
    "UPDATE request_keys SET status = %s, headers = %s, body = %s"
    " WHERE scope = %s AND key = %s AND created_at = %s AND status IS NULL"
)
OLD_ERASE = "DELETE FROM request_keys WHERE scope = %s"


def _columns(conn: psycopg.Connection[tuple[object, ...]]) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'request_keys'")}


def _old_release_stores(conn: psycopg.Connection[tuple[object, ...]], scope: str, key: str) -> None:
    now = datetime.now(UTC)
    assert conn.execute(OLD_CLAIM, (scope, key, b"hash", now)).fetchone() == (1,)
    conn.execute(OLD_COMPLETE, (201, Json({"location": "/games/1"}), b"sealed", scope, key, now))
    row = conn.execute(OLD_FOUND, (scope, key)).fetchone()
    assert row is not None
    assert (row[1], bytes(row[3])) == (201, b"sealed")


def test_request_keys_gain_owners_and_the_release_before_keeps_working(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0013")
    ann = uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        _old_release_stores(conn, f"player:{ann}", "before")

    command.upgrade(config, "0014")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert {"player_id", "scopes"} <= _columns(conn)
        assert conn.execute("SELECT player_id, scopes, status FROM request_keys").fetchall() == [(None, None, 201)]
        assert conn.execute("SELECT to_regclass('request_keys_player_id')").fetchone() == ("request_keys_player_id",)
        _old_release_stores(conn, f"player:{ann}", "during")  # the old release, on the new schema
        conn.execute(  # and the new one, beside it
            "INSERT INTO request_keys (scope, key, request_hash, created_at, player_id, scopes)"
            " VALUES ('address:127.0.0.1', 'signup', 'x', now(), %s, NULL)", (ann,))
        assert conn.execute(OLD_ERASE, (f"player:{ann}",)).rowcount == 2  # the old erase finds its rows
        assert conn.execute("SELECT key FROM request_keys").fetchall() == [("signup",)]

    command.downgrade(config, "0013")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert not {"player_id", "scopes"} & _columns(conn)
        assert conn.execute("SELECT key FROM request_keys").fetchall() == [("signup",)]
    command.upgrade(config, "head")
