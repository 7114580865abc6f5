"""Migration 0013 adds the fingerprints of shared decks (``daily_deals.fingerprint``,
``races.fingerprint``, the partial index ``races_live_fingerprint``): the release before it keeps
writing daily deals and races with its own statements, the lookup of the decks in play
(``service.deals.live_decks``) fingerprints the rows stored without one when it meets them (only
deals in play), and the downgrade drops the columns and the index and keeps the rows."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta

import psycopg
from alembic import command
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from domain import CODES, shuffled_deck
from domain.fingerprint import fingerprint, relabelled
from service.deals.live_decks import DAILY, RACE, LiveDeal, LiveDecks
from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)

DAY = date(2030, 6, 15)
# The statements of the release before 0013 (service/deals/daily_deals.py, service/races/race_store.py)
OLD_DAILY = (
    "INSERT INTO daily_deals (day, ruleset_id, ruleset_version, candidate, seed, deck, line, line_length,"
    " solver_states, verified_at) VALUES (%s, 'open-runs', 1, 0, %s, %s, 'x', 1, 1, now())"
    " ON CONFLICT (day) DO NOTHING"
)
OLD_RACE = (
    "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants,"
    " time_limit_seconds, status, version, created_at, deal_proof)"
    " VALUES (%s, %s, 'open-runs', 1, %s, %s, 2, NULL, %s, 1, now(), NULL)"
)


def _deck(seed: int) -> Jsonb:
    return Jsonb([CODES[card] for card in shuffled_deck(seed)])


def _race(conn: psycopg.Connection[tuple[object, ...]], creator: uuid.UUID, seed: int, status: str) -> uuid.UUID:
    race_id = uuid.uuid4()
    conn.execute(OLD_RACE, (race_id, creator, Jsonb({"source": "secret"}), _deck(seed), status))
    return race_id


def _columns(conn: psycopg.Connection[tuple[object, ...]], table: str) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,))}


async def test_decks_stored_before_0013_are_fingerprinted_when_met_and_the_release_before_keeps_working(
    scratch_url: str,  # noqa: F811
) -> None:
    config = alembic_config(scratch_url)
    command.upgrade(config, "0012")
    creator = uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name, created_at) VALUES (%s, 'Ann', %s)", (creator, datetime.now(UTC)))
        conn.execute(OLD_DAILY, (DAY, 11, _deck(11)))
        running = _race(conn, creator, 12, "running")
        finished = _race(conn, creator, 13, "finished")

    command.upgrade(config, "0013")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert "fingerprint" in _columns(conn, "daily_deals")
        assert "fingerprint" in _columns(conn, "races")
        assert conn.execute("SELECT to_regclass('races_live_fingerprint')").fetchone() == ("races_live_fingerprint",)
        conn.execute(OLD_DAILY, (DAY + timedelta(days=1), 14, _deck(14)))  # the old release, on the new schema
        opened = _race(conn, creator, 15, "open")
        assert conn.execute("SELECT count(*) FROM races WHERE fingerprint IS NOT NULL").fetchone() == (0,)

    command.upgrade(config, "head")  # the code reads the live decks of later tables too (tournaments)
    pool = AsyncConnectionPool(scratch_url, kwargs={"autocommit": True}, open=False)
    await pool.open()
    try:
        live = LiveDecks(pool)
        copy = relabelled(shuffled_deck(12), 4, (0, 2, 1, 3), (2, 0, 3, 1))
        assert await live.holders(copy, DAY) == [LiveDeal(RACE, None, running)]
        assert await live.holders(relabelled(shuffled_deck(11), 9, (3, 2, 1, 0)), DAY) == [LiveDeal(DAILY, DAY, None)]
        assert await live.holders(shuffled_deck(11), DAY + timedelta(days=1)) == []  # the date is over
        assert await live.holders(shuffled_deck(14), DAY) == [LiveDeal(DAILY, DAY + timedelta(days=1), None)]
        assert await live.holders(shuffled_deck(15), DAY) == []  # an open race has dealt no card yet
        assert await live.holders(shuffled_deck(13), DAY) == []  # a finished race is no deal in play
    finally:
        await pool.close()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        stored = dict(conn.execute("SELECT id, fingerprint FROM races").fetchall())
        assert stored == {running: fingerprint(shuffled_deck(12)), opened: None,
                          finished: None}  # fingerprinted when met, only deals in play
        days = dict(conn.execute("SELECT day, fingerprint FROM daily_deals").fetchall())
        assert days == {DAY: fingerprint(shuffled_deck(11)), DAY + timedelta(days=1): fingerprint(shuffled_deck(14))}

    command.downgrade(config, "0012")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert "fingerprint" not in _columns(conn, "daily_deals") | _columns(conn, "races")
        assert conn.execute("SELECT to_regclass('races_live_fingerprint')").fetchone() == (None,)
        assert conn.execute("SELECT count(*) FROM races").fetchone() == (3,)
    command.upgrade(config, "head")
