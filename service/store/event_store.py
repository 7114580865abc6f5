"""The event store in PostgreSQL: one row per game stream, its events, and a snapshot of it.

A move is at most two round trips: ``load`` (the game's row, its snapshot and the events after
it, the caller's identity and any stored idempotent response, in one query; skipped when the game
is in this process's cache) and its write: ``append`` (one statement that updates the game's row
only if the version is still the one the move was decided on, inserts the events at the next
versions, writes the snapshot when one is due and stores the idempotent response), or
``append_many`` for the moves of several games at once (group commit). ``UNIQUE (game_id,
version)`` backs the version check: a violation is a concurrency conflict, like an update that
found the version moved on.

A write with more in its transaction (a game's creation or the move that ends it, with the
projections and account events that go with it) is a unit of work (service.store.unit_of_work):
the use case records it, ``commit`` writes it.

The records these statements read and write are service.store.game_records'; when a snapshot is
due and the events a stored game folds after it, service.store.snapshots; the checkpoints of past
states, service.store.checkpoints (``CheckpointStore``, which ``EventStore`` is).
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg import errors as pg_errors
from psycopg.rows import tuple_row
from psycopg.types.json import Json, Jsonb
from psycopg_pool import AsyncConnectionPool

from . import outbox
from .checkpoints import CheckpointStore
from .game_records import Append, GameRow, GameSummaryRow, Loaded, NewEvent, NewGame, StoredEvent
from .players import TokenRow, token_hash
from .replica import ReadPool
from .snapshots import TAIL
from .unit_of_work import UnitOfWork


class ConcurrencyConflict(Exception):
    """The stream moved on since it was loaded: nothing was written."""


class IdempotencyRace(Exception):
    """Another request with the same Idempotency-Key was stored first: nothing was written."""


class DailyEntryTaken(Exception):
    """The player already has an entry (a first game) for that date's daily deal: nothing was written."""


GAME_COLUMNS = (f"g.id, g.player_id, g.deal, g.version, s.snapshot, g.started_at, g.finished_at, {TAIL}, "
                "(SELECT p.name FROM players p WHERE p.id = g.player_id), "
                "(SELECT p.bot FROM players p WHERE p.id = g.player_id)")
"""A ``GameRow``'s columns, from ``games g JOIN game_snapshots s``."""

_LOAD_GAME = f"SELECT {GAME_COLUMNS} FROM games g JOIN game_snapshots s ON s.game_id = g.id WHERE g.id = %s"

_LOAD = f"""
SELECT {GAME_COLUMNS},
       t.id, t.player_id, t.name, t.scopes, t.created_at, t.expires_at,
       k.request_hash, k.response
FROM (SELECT %(id)s::uuid AS id) AS wanted
LEFT JOIN games g ON g.id = wanted.id
LEFT JOIN game_snapshots s ON s.game_id = g.id
LEFT JOIN tokens t ON t.token_hash = %(token_hash)s AND t.revoked_at IS NULL
                  AND (t.expires_at IS NULL OR t.expires_at > %(now)s)
LEFT JOIN idempotency_keys k ON k.game_id = wanted.id AND k.key = %(key)s
"""

LOG_QUERY = """
SELECT version, type, data, recorded_at FROM events
WHERE game_id = %(game)s AND (%(cutoff)s::timestamptz IS NULL OR recorded_at < %(cutoff)s::timestamptz)
ORDER BY version
"""
"""A game's stored log (``LogRow``s), cut at ``cutoff`` (None: whole): what a race's or a
tournament's finish replays to check its entrants' games (their ratings' rebuild too)."""

CHANNEL = "canfield_events"
"""The PostgreSQL channel every append notifies (``<game id>:<version>``, comma-separated for a
batch), delivered on commit; service.streams.hub listens on it."""

GAMES_CHANNEL = "canfield_games"
"""The PostgreSQL channel every new game notifies (``<player id>:<game id>``), delivered on commit;
service.streams.hub listens on it for the watches that follow players (service.streams.watch). A
channel of its own: a release that does not know it never listens to it."""

_APPEND_EVENTS = f"""
WITH updated AS (
    UPDATE games
    SET version = %(version)s, status = %(status)s, move_count = %(move_count)s, undo_count = %(undo_count)s,
        assisted = %(assisted)s, updated_at = %(now)s, finished_at = %(finished_at)s
    WHERE id = %(id)s AND version = %(expected)s
      -- the token the move came with is still live when it is written: a revocation is final at once
      AND (%(token)s::uuid IS NULL OR EXISTS (SELECT 1 FROM tokens t WHERE t.id = %(token)s::uuid
           AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > %(now)s)))
    -- only when the update happened; delivered to listeners on commit (service.streams.hub)
    RETURNING id, pg_notify('{CHANNEL}', id::text || ':' || version::text) AS notified
), inserted AS (
    INSERT INTO events (game_id, version, type, data, recorded_at)
    SELECT updated.id, e.version, e.type, e.data, %(now)s
    FROM updated, jsonb_to_recordset(%(events)s) AS e(version integer, type text, data jsonb)
    RETURNING 1
), snapped AS (
    UPDATE game_snapshots s SET version = %(version)s, snapshot = %(snapshot)s
    FROM updated WHERE s.game_id = updated.id AND %(snapshot)s::json IS NOT NULL
    RETURNING 1
)"""
_APPEND_COUNTS = """
SELECT (SELECT count(*) FROM updated), (SELECT count(*) FROM inserted)
"""
_APPEND = _APPEND_EVENTS + _APPEND_COUNTS
"""A move: the game's row updated only if still at the expected version, then its events and
(unless ``snapshot`` is null) its snapshot."""

_APPEND_WITH_KEY = _APPEND_EVENTS + """, remembered AS (
    INSERT INTO idempotency_keys (game_id, key, request_hash, response, created_at)
    SELECT updated.id, %(key)s, %(request_hash)s, %(response)s, %(now)s
    FROM updated
    RETURNING 1
)""" + _APPEND_COUNTS
"""A move with an Idempotency-Key: also stores the key and the response, in the same statement."""

_APPEND_MANY = f"""
WITH batch AS (
    SELECT * FROM json_to_recordset(%(batch)s::json) AS b(
        id uuid, expected integer, version integer, status text, moves integer, undos integer, assisted boolean,
        snapshot json, now timestamptz, events json, token uuid)
), updated AS (
    UPDATE games g
    SET version = b.version, status = b.status, move_count = b.moves, undo_count = b.undos, assisted = b.assisted,
        updated_at = b.now
    FROM batch b
    -- ANY(ids): the batch's size for the planner, which takes json_to_recordset for 100 rows and
    -- would hash-join them against a scan of every game (measured: docs/performance.md)
    WHERE g.id = ANY(%(ids)s::uuid[]) AND g.id = b.id AND g.version = b.expected
      AND (b.token IS NULL OR EXISTS (SELECT 1 FROM tokens t WHERE t.id = b.token
           AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > b.now)))
    RETURNING g.id, g.version
), inserted AS (
    INSERT INTO events (game_id, version, type, data, recorded_at)
    SELECT b.id, e.version, e.type, e.data, b.now
    FROM updated u JOIN batch b ON b.id = u.id, json_to_recordset(b.events) AS e(version integer, type text, data jsonb)
    RETURNING 1
), snapped AS (
    UPDATE game_snapshots s SET version = b.version, snapshot = b.snapshot
    FROM updated u JOIN batch b ON b.id = u.id
    WHERE s.game_id = ANY(%(ids)s::uuid[]) AND s.game_id = u.id AND b.snapshot IS NOT NULL
    RETURNING 1
), notified AS (
    -- one notification for the whole batch: "id:version,id:version,..." (service.streams.hub)
    SELECT pg_notify('{CHANNEL}', string_agg(id::text || ':' || version::text, ',')) FROM updated HAVING count(*) > 0
)
SELECT u.id, (SELECT count(*) FROM notified) FROM updated u
"""

_CREATE = f"""
WITH game AS (
    INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, move_count, undo_count,
                       assisted, started_at, updated_at)
    VALUES (%(id)s, %(player_id)s, %(ruleset_id)s, %(ruleset_version)s, %(deal)s, %(status)s, %(version)s,
            %(move_count)s, %(undo_count)s, %(assisted)s, %(now)s, %(now)s)
    -- delivered to listeners on commit (the watches that follow this player: service.streams.watch)
    RETURNING id, pg_notify('{GAMES_CHANNEL}', player_id::text || ':' || id::text) AS notified
), snapshot AS (
    INSERT INTO game_snapshots (game_id, version, snapshot) SELECT game.id, %(version)s, %(snapshot)s FROM game
)
INSERT INTO events (game_id, version, type, data, recorded_at)
SELECT game.id, e.version, e.type, e.data, %(now)s
FROM game, jsonb_to_recordset(%(events)s) AS e(version integer, type text, data jsonb)
"""


def _event_rows(events: list[NewEvent]) -> list[dict[str, Any]]:
    return [{"version": e.version, "type": e.type, "data": e.data} for e in events]


async def insert_game(conn: AsyncConnection[Any], game: NewGame) -> None:
    """The game's row, snapshot and first events, on ``conn`` (in the caller's transaction, if
    any: a race deals all its games in one). A second daily entry of a player for one date
    (``games_daily_entry_key``) raises ``DailyEntryTaken``."""
    snapshot = game.snapshot
    params = {
        "id": game.game_id,
        "player_id": game.player_id,
        "ruleset_id": game.ruleset[0],
        "ruleset_version": game.ruleset[1],
        "deal": Jsonb(game.deal),
        "status": game.status,
        "version": game.events[-1].version,
        "move_count": snapshot["moveCount"],
        "undo_count": snapshot["undoCount"],
        "assisted": snapshot["assisted"],
        "snapshot": Json(snapshot),
        "now": game.now,
        "events": Jsonb(_event_rows(game.events)),
    }
    try:
        await conn.execute(_CREATE, params)
    except pg_errors.UniqueViolation as error:
        if error.diag.constraint_name == "games_daily_entry_key":
            raise DailyEntryTaken() from None
        raise


def _append_params(move: Append) -> dict[str, Any]:
    figures = move.figures
    params = {
        "id": move.game_id,
        "expected": move.expected_version,
        "version": move.events[-1].version,
        "status": figures.status,
        "move_count": figures.move_count,
        "undo_count": figures.undo_count,
        "assisted": figures.assisted,
        "snapshot": None if move.snapshot is None else Json(move.snapshot),
        "finished_at": move.finished_at,
        "now": move.now,
        "events": Jsonb(_event_rows(move.events)),
        "token": move.token_id,
    }
    if move.reply is not None:
        params.update(key=move.reply.key, request_hash=move.reply.request_hash, response=Json(move.reply.response))
    return params


async def write_append(conn: AsyncConnection[Any], move: Append) -> None:
    """``move``'s one statement on ``conn`` (``EventStore.append``): raises ``ConcurrencyConflict``
    when nothing was written (the game moved on, or the token is no longer live) and
    ``IdempotencyRace`` when another request stored the move's key first."""
    try:
        cursor = await conn.execute(_APPEND if move.reply is None else _APPEND_WITH_KEY, _append_params(move))
        row = await cursor.fetchone()
    except pg_errors.UniqueViolation as error:
        if error.diag.constraint_name == "idempotency_keys_pkey":
            raise IdempotencyRace() from None
        raise ConcurrencyConflict() from None
    assert row is not None
    if row[0] == 0:
        raise ConcurrencyConflict()


def batch_params(moves: list[Append]) -> dict[str, Any]:
    """``_APPEND_MANY``'s parameters for ``moves``: the batch document and the games' ids."""
    return {"batch": Json(batch_rows(moves)), "ids": uuid_array([move.game_id for move in moves])}


def uuid_array(ids: list[uuid.UUID]) -> str:
    """``ids`` as PostgreSQL's text form of an array (``{id,id,...}``), for a ``::uuid[]`` cast:
    made by msgspec in one call, where psycopg's list dumper adapts the ids one by one (about
    1.4 microseconds each, a batch's largest parameter cost)."""
    return "{" + msgspec.json.encode(ids)[1:-1].decode("ascii").replace('"', "") + "}"


def batch_rows(moves: list[Append]) -> list[dict[str, Any]]:
    """``append_many``'s batch document (the rows of ``_APPEND_MANY``'s ``json_to_recordset``)."""
    return [
        {"id": m.game_id, "expected": m.expected_version, "version": m.events[-1].version,
         "status": m.figures.status, "moves": m.figures.move_count, "undos": m.figures.undo_count,
         "assisted": m.figures.assisted, "snapshot": m.snapshot, "now": m.now, "events": _event_rows(m.events),
         "token": m.token_id}
        # rows locked in one order in every process (a UUID's order is its int's, compared in C)
        for m in sorted(moves, key=lambda m: m.game_id.int)
    ]


class EventStore(CheckpointStore):
    def __init__(self, pool: AsyncConnectionPool, reads: ReadPool | None = None) -> None:
        self.pool = pool
        self.reads = reads or ReadPool(pool)  # the reads that tolerate a replica (service.store.replica)

    def unit_of_work(self) -> UnitOfWork:
        """A unit of work to record a change's writes in, written by its ``commit``
        (service.store.unit_of_work)."""
        return UnitOfWork(self)

    async def commit(self, work: UnitOfWork) -> None:
        """Write what ``work`` recorded: its game's write first (``insert_game`` or
        ``write_append``, whose errors say why nothing was written), then its statements, then its
        account events, in one transaction; the game's write alone as its one statement."""
        async with self.pool.connection() as conn:
            if work.alone:
                await self._write(conn, work)
                return
            async with conn.transaction():
                await self._write(conn, work)
                for statement in work.statements:
                    await conn.execute(statement.sql, statement.params)
                if work.told:
                    await outbox.append_all(conn, work.told)

    @staticmethod
    async def _write(conn: AsyncConnection[Any], work: UnitOfWork) -> None:
        write = work.write
        if isinstance(write, NewGame):
            await insert_game(conn, write)
        elif write is not None:
            await write_append(conn, write)

    async def load(
        self, game_id: uuid.UUID, token: str | None = None, key: str | None = None, now: datetime | None = None
    ) -> Loaded:
        """The game's snapshot row, who the token belongs to and what the idempotency key stored."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                _LOAD,
                {"id": game_id, "token_hash": token_hash(token) if token else None, "key": key,
                 "now": now or datetime.now(UTC)},
            )
            row = await cursor.fetchone()
        assert row is not None
        game = None if row[0] is None else GameRow(*row[:10])
        caller = None if row[10] is None else TokenRow(row[10], row[11], row[12], tuple(row[13]), row[14], row[15])
        return Loaded(game, caller, row[16], row[17])

    async def player_games(
        self, player_id: uuid.UUID, ended: bool | None, before: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[GameSummaryRow]:
        """A player's games, newest first (by start, then id), strictly before the ``before`` key."""
        conditions = ["g.player_id = %(player)s"]
        if ended is not None:
            conditions.append("g.finished_at IS NOT NULL" if ended else "g.finished_at IS NULL")
        if before is not None:
            conditions.append("(g.started_at, g.id) < (%(started)s, %(id)s)")
        query = (
            "SELECT g.id, g.ruleset_id, g.ruleset_version, g.deal, g.status, g.version,"
            " g.move_count, g.undo_count, g.assisted, g.started_at, g.finished_at"
            f" FROM games g WHERE {' AND '.join(conditions)}"
            " ORDER BY g.started_at DESC, g.id DESC LIMIT %(limit)s"
        )
        parameters = {"player": player_id, "limit": limit}
        if before is not None:
            parameters |= {"started": before[0], "id": before[1]}
        async with self.reads.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(query, parameters)
            rows = await cursor.fetchall()
        return [GameSummaryRow(*row) for row in rows]

    async def player_game_keys(
        self, player_id: uuid.UUID, since: datetime | None, until: datetime | None,
        after: tuple[datetime, uuid.UUID] | None, limit: int,
    ) -> list[tuple[datetime, uuid.UUID]]:
        """The (start, id) keys of a player's games, oldest first, started in [since, until),
        strictly after the ``after`` key: an export's next page (keyset, never an offset)."""
        conditions = ["g.player_id = %(player)s"]
        if since is not None:
            conditions.append("g.started_at >= %(since)s")
        if until is not None:
            conditions.append("g.started_at < %(until)s")
        if after is not None:
            conditions.append("(g.started_at, g.id) > (%(started)s, %(id)s)")
        parameters: dict[str, Any] = {"player": player_id, "since": since, "until": until, "limit": limit}
        if after is not None:
            parameters |= {"started": after[0], "id": after[1]}
        async with self.reads.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                f"SELECT g.started_at, g.id FROM games g WHERE {' AND '.join(conditions)}"
                " ORDER BY g.started_at, g.id LIMIT %(limit)s",
                parameters,
            )
            rows = await cursor.fetchall()
        return [(row[0], row[1]) for row in rows]

    async def load_game(self, game_id: uuid.UUID, ended_from_replica: bool = False) -> GameRow | None:
        """The game's row; ``ended_from_replica``: from the replica when the copy there has ended (an
        ended game never changes), else from the primary."""
        if ended_from_replica and self.reads.replica is not None:
            async with self.reads.connection() as conn:
                row = await (await conn.execute(_LOAD_GAME, (game_id,))).fetchone()
            if row is not None and row[6] is not None:
                return GameRow(*row)
        async with self.pool.connection() as conn:
            row = await (await conn.execute(_LOAD_GAME, (game_id,))).fetchone()
        return None if row is None else GameRow(*row)

    async def append(self, move: Append) -> None:
        """Write ``move`` alone, in one statement (``write_append``: conditional on its version and
        its token, raising ``ConcurrencyConflict`` or ``IdempotencyRace`` when nothing was written)."""
        async with self.pool.connection() as conn:
            await write_append(conn, move)

    async def append_many(self, moves: list[Append]) -> set[uuid.UUID]:
        """Write several games' moves in one statement (one transaction): each game whose stored
        version is still the one its move was decided on gets its events, figures and any due snapshot; the
        rest are left untouched. Returns the ids of the games written. For moves that neither
        finish the game nor carry an idempotency key (``service.games.batching``)."""
        params = batch_params(moves)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(_APPEND_MANY, params)
            rows = await cursor.fetchall()
        return {row[0] for row in rows}

    async def read_events(self, game_id: uuid.UUID, after: int, limit: int | None) -> list[StoredEvent]:
        query = (
            "SELECT version, type, data, recorded_at FROM events WHERE game_id = %s AND version > %s "
            "ORDER BY version"
        )
        params: tuple[Any, ...] = (game_id, after)
        if limit is not None:
            query += " LIMIT %s"
            params += (limit,)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(query, params)
            rows = await cursor.fetchall()
        return [StoredEvent(*row) for row in rows]

    async def read_events_upto(self, game_id: uuid.UUID, version: int) -> list[StoredEvent]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT version, type, data, recorded_at FROM events WHERE game_id = %s AND version <= %s "
                "ORDER BY version",
                (game_id, version),
            )
            rows = await cursor.fetchall()
        return [StoredEvent(*row) for row in rows]

    async def ping(self) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("SELECT 1")

    async def schema_revision(self) -> str | None:
        """The database's migration revision (``alembic_version``), None if it has none."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT to_regclass('alembic_version') IS NOT NULL")
            row = await cursor.fetchone()
            if row is None or not row[0]:
                return None
            cursor = await conn.execute("SELECT version_num FROM alembic_version")
            found = await cursor.fetchone()
        return None if found is None else str(found[0])

    async def check_connections(self) -> None:
        """Test the pool's idle connections, replacing the dead ones (service.streams.hub calls this
        when its own connection to the database breaks or comes back)."""
        if self.pool.closed:
            return
        try:
            await self.pool.check()
        except Exception as error:  # best effort: a request that draws a dead connection gets a 503
            logging.getLogger("canfield").warning("checking the pool's connections failed: %r", error)
