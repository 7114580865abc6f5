"""Migrations 0021 and 0022: the account outbox and webhooks. What the previous release writes
(a player without an event number) still goes in and starts at 0; the downgrade drops it all."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)


def test_0021_and_0022_add_the_outbox_and_webhooks_beside_the_previous_release(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0020")
    before, after = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (before,))

    command.upgrade(config, "0022")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Bob')", (after,))  # as the previous release does
        rows = conn.execute("SELECT event_seq FROM players WHERE id IN (%s, %s)", (before, after)).fetchall()
        assert rows == [(0,), (0,)]
        conn.execute("INSERT INTO account_events (player_id, seq, type, data) VALUES (%s, 1, 'gameEnded', '{}')",
                     (before,))
        conn.execute("INSERT INTO webhooks (id, player_id, url, events, secret, api_version, cursor_seq)"
                     " VALUES (%s, %s, 'https://example.com', '{gameEnded}', 'whsec_x', '2026-12-04', 0)",
                     (uuid.uuid4(), before))

    command.downgrade(config, "0020")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert not tables & {"account_events", "webhooks", "webhook_deliveries"}
        columns = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'players'")}
        assert "event_seq" not in columns
        assert conn.execute("SELECT count(*) FROM players").fetchone() == (2,)
    command.upgrade(config, "head")
