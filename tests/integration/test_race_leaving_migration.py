"""Migration 0016: races may be ``cancelled`` (with a reason) and games get checkpoints; a race row
the previous release writes still passes the widened constraint, and the downgrade turns cancelled
races into finished ones before narrowing it again."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

_RACE = (
    "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version, "
    "created_at) VALUES (%s, %s, 'classic', 1, '{}', '[]', 2, %s, 1, now())"
)


def test_0016_widens_the_race_status_and_its_downgrade_narrows_it_again(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0015")
    player, old, cancelled = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (player,))
        conn.execute(_RACE, (old, player, "open"))  # written by the previous release
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_RACE, (uuid.uuid4(), player, "cancelled"))

    command.upgrade(config, "0016")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute(_RACE, (cancelled, player, "cancelled"))
        conn.execute("UPDATE races SET cancelled_reason = 'gone' WHERE id = %s", (cancelled,))
        conn.execute(_RACE, (uuid.uuid4(), player, "running"))  # what the previous release writes still goes in
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_RACE, (uuid.uuid4(), player, "paused"))
        assert conn.execute("SELECT count(*) FROM game_checkpoints").fetchone() == (0,)

    command.downgrade(config, "0015")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        row = conn.execute("SELECT status, finished_at IS NOT NULL FROM races WHERE id = %s", (cancelled,)).fetchone()
        assert row == ("finished", True)
        assert conn.execute("SELECT status FROM races WHERE id = %s", (old,)).fetchone() == ("open",)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_RACE, (uuid.uuid4(), player, "cancelled"))
    command.upgrade(config, "head")
