"""Migration 0025 (expired challenges stored as such): the previous release's rows and writes
still go in, an ``expired`` row is admitted, the job's index serves the lookup, and the downgrade
stores expired rows as pending again (past their time, so they still read as expired)."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

_CHALLENGE = (
    "INSERT INTO challenges (id, from_id, to_id, ruleset_id, rated, status, created_at, expires_at)"
    " VALUES (%s, %s, %s, 'classic', false, %s, now() - interval '1 hour', now() - interval '50 minutes')"
)


def test_the_expiry_migration_keeps_the_previous_release_working(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0024")
    ann, bob, old, expired = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann'), (%s, 'Bob')", (ann, bob))
        conn.execute(_CHALLENGE, (old, ann, bob, "pending"))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_CHALLENGE, (uuid.uuid4(), ann, bob, "expired"))

    command.upgrade(config, "0025")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute(_CHALLENGE, (uuid.uuid4(), bob, ann, "declined"))  # as the previous release ends one
        conn.execute(_CHALLENGE, (expired, bob, ann, "expired"))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_CHALLENGE, (uuid.uuid4(), ann, bob, "lapsed"))
        index = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'challenges_pending_expiry'").fetchone()
        assert index is not None
        assert "WHERE (status = 'pending'::text)" in index[0]

    command.downgrade(config, "0024")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        statuses = dict(conn.execute("SELECT id, status FROM challenges WHERE id IN (%s, %s)", (old, expired)))
        assert statuses == {old: "pending", expired: "pending"}
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(_CHALLENGE, (uuid.uuid4(), ann, bob, "expired"))
    command.upgrade(config, "head")
