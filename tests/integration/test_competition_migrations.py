"""Migrations 0019 (bots, rated races, ratings) and 0020 (challenges): rows the previous release
wrote get the defaults (a person, an unrated race, challenges from everyone), what it still
writes goes in, and both downgrade cleanly."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

_RACE = (
    "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version, "
    "created_at) VALUES (%s, %s, 'classic', 1, '{}', '[]', 2, 'open', 1, now())"
)


def test_the_competition_migrations_keep_the_previous_release_working(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0016")
    ann, bob, race = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (ann,))
        conn.execute(_RACE, (race, ann))

    command.upgrade(config, "0020")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Bob')", (bob,))  # as the previous release does
        conn.execute(_RACE, (uuid.uuid4(), bob))
        assert conn.execute("SELECT bot, accept_challenges FROM players WHERE id = %s", (ann,)).fetchone() == (
            False, "everyone")
        assert conn.execute("SELECT bool_or(rated) FROM races").fetchone() == (False,)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE players SET accept_challenges = 'robots' WHERE id = %s", (ann,))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO challenges (id, from_id, to_id, ruleset_id, rated, status, created_at, expires_at)"
                " VALUES (%s, %s, %s, 'classic', false, 'pending', now(), now())", (uuid.uuid4(), ann, ann))
        conn.execute("INSERT INTO rated_races (race_id, ruleset_id, rated_at) VALUES (%s, 'classic', now())", (race,))

    command.downgrade(config, "0016")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert not tables & {"rated_races", "player_ratings", "rating_changes", "challenges"}
        columns = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name IN ('players', 'races')")}
        assert not columns & {"bot", "rated", "accept_challenges"}
        assert conn.execute("SELECT count(*) FROM races").fetchone() == (2,)
    command.upgrade(config, "head")
