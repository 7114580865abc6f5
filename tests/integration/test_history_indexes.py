"""The reads that grow with history are served by indexes in their own order (migration 0010),
and the migration builds and drops those indexes; GET /stats reads its players per ruleset from
the counter rows of migration 0011, which its upgrade backfills and its downgrade removes."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime

import psycopg
import pytest
from alembic import command

from service import cursors
from service.bootstrap import Services, build_services, close
from service.games import abandon
from service.settings import Settings
from service.stats.queries import BoardKey, Stats, board_key
from service.store.connections import PoolOptions, open_pool
from service.store.event_store import EventStore
from service.store.migrations import alembic_config, migrate
from tests.query_plans import INDEX_ONLY, RecordingPool, counts, growing_reads, plan, problems, summary

from .test_snapshot_migration import scratch_url  # noqa: F401  (a fixture: an empty database of its own)

DAY = date(2026, 3, 1)
PLAYER = uuid.UUID(int=1)


def _seed(url: str) -> None:
    """A player with 300 games, 60 other players with a leaderboard entry each, races open and finished."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO players (id, name) SELECT md5('p' || q)::uuid, 'p' || q FROM generate_series(1, 60) q"
        )
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'many games')", (PLAYER,))
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, started_at,"
            " finished_at) SELECT md5('g' || i)::uuid, CASE WHEN i <= 300 THEN %s ELSE md5('p' || (i %% 60 + 1))::uuid"
            " END, 'classic', 1, '{\"source\": \"seed\", \"seed\": 1}', 'resigned', 2,"
            " '2026-01-01'::timestamptz + i * interval '1 minute',"
            " CASE WHEN i %% 7 <> 0 THEN '2026-01-01'::timestamptz + i * interval '1 minute' END"
            " FROM generate_series(1, 600) i",
            (PLAYER,),
        )
        conn.execute(
            "INSERT INTO daily_leaderboard (game_id, day, player_id, moves, seconds, finished_at, status, assisted,"
            " unranked) SELECT md5('g' || (300 + q))::uuid, %s, md5('p' || ((300 + q) %% 60 + 1))::uuid, q %% 9,"
            " q %% 4 + 0.5, '2026-03-01'::timestamptz + q * interval '1 second', 'won', false,"
            " CASE WHEN q %% 3 = 0 THEN 'late' END FROM generate_series(1, 60) q",
            (DAY,),
        )
        conn.execute(
            "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version,"
            " created_at) SELECT md5('r' || r)::uuid, %s, 'classic', 1, '{}', '[]', 4,"
            " CASE WHEN r %% 5 = 0 THEN 'open' ELSE 'finished' END, 1, now() - r * interval '1 minute'"
            " FROM generate_series(1, 300) r",
            (PLAYER,),
        )
        conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at, game_id, place)"
            " SELECT md5('r' || r)::uuid, %s, 1, now(), md5('g' || r)::uuid, 1 FROM generate_series(1, 300) r",
            (PLAYER,),
        )
        conn.execute(
            "INSERT INTO player_stats (player_id, ruleset_id, played, won, current_streak, best_streak, undos)"
            " SELECT id, 'classic', 3, 1, 1, 1, 0 FROM players"
        )
        conn.execute(
            "INSERT INTO source_stats (source, ruleset_id, played, won, undos) VALUES ('seed', 'classic', 1, 1, 0)"
        )
        conn.execute("ANALYZE")


@pytest.fixture
async def recorded(clean_database: str) -> AsyncIterator[tuple[RecordingPool, Services]]:
    _seed(clean_database)
    pool = open_pool(clean_database, PoolOptions(1, 2, 5000))
    await pool.open()
    recording = RecordingPool(pool)
    services = build_services(EventStore(recording), Settings(database_url=clean_database))  # type: ignore[arg-type]
    try:
        yield recording, services
    finally:
        await close(services)
        await pool.close()


async def test_every_growing_read_has_an_index_in_its_order(
    clean_database: str, recorded: tuple[RecordingPool, Services]
) -> None:
    recording, services = recorded
    stats = Stats(recording)  # type: ignore[arg-type]
    first = await stats.leaderboard(DAY, 5)
    assert first.next is not None
    assert first.next.ranked  # the later page starts among the ranked entries
    assert first.next.rank == 5  # from the rank its key carries (without it, from the rank count)
    reads = growing_reads(services, stats, PLAYER, DAY, first.next)
    for name, read in reads.items():
        recording.seen.clear()
        await read()
        assert recording.seen, name
        for query, params in recording.seen:
            found = plan(clean_database, query, params, settings=INDEX_ONLY)
            assert problems(found) == [], f"{name}: {summary(found)}\n{query}"


async def test_the_stats_over_all_players_count_no_player(
    clean_database: str, recorded: tuple[RecordingPool, Services]
) -> None:
    """GET /stats: its counts come from the projections' rows (a row per ruleset and per deal
    source), and a longest streak is the last entry of an index: no statement aggregates over a
    history table, even with the planner free to choose."""
    recording, _ = recorded
    totals = await Stats(recording).overall_stats(("classic", "draw-one", "open-runs"))  # type: ignore[arg-type]
    assert [(r.ruleset, r.players, r.current_streak) for r in totals.rulesets] == [
        ("classic", 61, 1), ("draw-one", 0, 0), ("open-runs", 0, 0)
    ]
    assert recording.seen
    for query, params in recording.seen:
        for settings in ((), INDEX_ONLY):
            found = plan(clean_database, query, params, settings=settings)
            assert problems(found) + counts(found) == [], f"{summary(found)}\n{query}"


async def test_the_plan_check_sees_a_read_no_index_serves(clean_database: str) -> None:
    _seed(clean_database)
    found = plan(clean_database, "SELECT id FROM games WHERE version = 2 ORDER BY updated_at LIMIT 5", None,
                 settings=INDEX_ONLY)
    assert "Seq Scan on games" in problems(found)
    found = plan(clean_database, "SELECT count(*) FROM player_stats WHERE ruleset_id = 'classic'", None,
                 settings=INDEX_ONLY)
    assert counts(found) == ["Aggregate over player_stats"]
    found = plan(clean_database, "SELECT max(best_streak) FROM player_stats WHERE ruleset_id = 'classic'", None)
    assert counts(found) == []


def _indexes(url: str) -> dict[str, bool]:
    """Each index of the history tables: is it valid."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname IN"
            " ('games', 'daily_leaderboard', 'races', 'race_entrants', 'player_stats')"
        ).fetchall()
    return dict(rows)


def test_the_migration_builds_its_indexes_and_the_downgrade_puts_the_old_ones_back(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0009")  # the revision before this one
    _seed(scratch_url)
    before = _indexes(scratch_url)
    command.upgrade(config, "0010")  # this revision only: later ones add indexes of their own
    after = _indexes(scratch_url)
    added = {"games_player_started", "games_player_playing", "games_player_daily", "daily_leaderboard_ranked",
             "daily_leaderboard_unranked", "daily_leaderboard_player", "races_open", "race_entrants_player",
             "player_stats_current_streak", "player_stats_best_streak", "games_idle"}
    replaced = {"ix_games_player_id", "ix_daily_leaderboard_rank", "ix_race_entrants_player_id"}
    assert replaced <= set(before)
    assert added.isdisjoint(before)
    assert set(after) == set(before) - replaced | added
    assert all(after.values())  # built whole (CONCURRENTLY leaves an invalid index when it fails)

    command.downgrade(config, "0009")
    assert _indexes(scratch_url) == before
    command.upgrade(config, "0010")  # and up again
    assert _indexes(scratch_url) == after


def _players_per_ruleset(url: str) -> dict[str, int] | None:
    """``ruleset_stats`` as a dict; None when the table is not there."""
    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('ruleset_stats')").fetchone() == (None,):
            return None
        return dict(conn.execute("SELECT ruleset_id, players FROM ruleset_stats").fetchall())


def _triggers(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'player_stats'::regclass"
                            " AND NOT tgisinternal").fetchall()
    return {row[0] for row in rows}


def test_the_counter_migration_backfills_then_counts_every_writer(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0010")  # the revision before this one
    _seed(scratch_url)  # a classic row per player: 61
    with psycopg.connect(scratch_url) as conn:
        conn.execute("INSERT INTO player_stats (player_id, ruleset_id, played, won, current_streak, best_streak,"
                     " undos) SELECT id, 'draw-one', 1, 0, 0, 0, 0 FROM players WHERE name LIKE 'p1%%'")
    command.upgrade(config, "0011")
    assert _players_per_ruleset(scratch_url) == {"classic": 61, "draw-one": 11}
    assert _triggers(scratch_url) == {"player_stats_added", "player_stats_removed"}

    with psycopg.connect(scratch_url) as conn:  # a writer that knows nothing of the counter
        conn.execute(  # a new row and an existing one in one upsert: only the new one counts
            "INSERT INTO player_stats AS s (player_id, ruleset_id, played, won, current_streak, best_streak, undos)"
            " SELECT id, 'draw-one', 1, 0, 0, 0, 0 FROM players WHERE name IN ('p1', 'p2')"
            " ON CONFLICT (player_id, ruleset_id) DO UPDATE SET played = s.played + 1"
        )
        conn.execute("DELETE FROM player_stats WHERE ruleset_id = 'classic' AND player_id = md5('p3')::uuid")
    assert _players_per_ruleset(scratch_url) == {"classic": 60, "draw-one": 12}

    command.downgrade(config, "0010")
    assert _players_per_ruleset(scratch_url) is None
    assert _triggers(scratch_url) == set()
    migrate(scratch_url)  # and up again: counted afresh
    assert _players_per_ruleset(scratch_url) == {"classic": 60, "draw-one": 12}


def test_a_leaderboard_cursor_round_trips_exactly() -> None:
    key = BoardKey(DAY, 17, 0.1 + 0.2, datetime(2026, 3, 1, 12, 0, 1, 5, tzinfo=UTC), uuid.uuid4())
    unranked = dataclasses.replace(key, moves=None, seconds=None)
    for each in (key, dataclasses.replace(key, rank=1234, wins=5678), unranked):
        assert board_key(each.cursor("a secret"), DAY, "a secret") == each
    too_long = dataclasses.replace(key, rank=10**10 - 1, wins=10**10 - 1)  # with its rank, over the API's length
    assert len(too_long.cursor("a secret")) <= cursors.LENGTH
    assert board_key(too_long.cursor("a secret"), DAY, "a secret") == key  # the rank left out: counted


def test_the_abandon_jobs_search_for_idle_games_reads_an_index(clean_database: str) -> None:
    """The idle games, oldest move first (service.games.abandon): from the partial index on the
    games in progress, never a scan and sort of every game."""
    _seed(clean_database)
    found = plan(clean_database, abandon._IDLE, (datetime(2026, 2, 1, tzinfo=UTC), abandon.BATCH), settings=INDEX_ONLY)
    assert problems(found) == [], summary(found)
    assert "games_idle" in json.dumps(found)
