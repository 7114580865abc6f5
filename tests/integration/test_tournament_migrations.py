"""Migrations 0023 (tournaments) and 0024 (rated tournaments in the ratings' order): a rated race as
the previous release writes it still goes in and rates, a tournament's row needs no race, and
both downgrade cleanly (0024's first taking the tournament rows out)."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

_RACE = (
    "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version, "
    "created_at) VALUES (%s, %s, 'classic', 1, '{}', '[]', 2, 'finished', 1, now())"
)
_RATED = "INSERT INTO rated_races (race_id, ruleset_id, rated_at) VALUES (%s, 'classic', now())"


def test_the_tournament_migrations_keep_the_previous_release_working(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0022")
    ann, race, later_race, tournament = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (ann,))
        conn.execute(_RACE, (race, ann))
        conn.execute(_RATED, (race,))

    command.upgrade(config, "0024")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert conn.execute("SELECT tournament FROM rated_races WHERE race_id = %s", (race,)).fetchone() == (False,)
        conn.execute(_RACE, (later_race, ann))  # as the previous release rates a race
        conn.execute(_RATED, (later_race,))
        conn.execute("INSERT INTO rated_races (race_id, ruleset_id, rated_at, tournament)"
                     " VALUES (%s, 'classic', now(), true)", (tournament,))  # no race of that id
        assert conn.execute("SELECT count(*) FROM rated_races").fetchone() == (3,)

    command.downgrade(config, "0022")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert not tables & {"tournaments", "tournament_deals", "tournament_entrants", "tournament_games"}
        rated = {row[0] for row in conn.execute("SELECT race_id FROM rated_races")}
        assert rated == {race, later_race}  # the tournament's row went with 0024
    command.upgrade(config, "head")
