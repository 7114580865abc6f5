"""Reads of many games at once, for a watch (service.streams.watch): their rows, the events after
a position of each, and the games of some players, each one statement however many games."""

from __future__ import annotations

import uuid
from datetime import datetime

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from .event_store import GAME_COLUMNS, uuid_array
from .game_records import GameRow, StoredEvent

_GAMES = f"SELECT {GAME_COLUMNS} FROM games g JOIN game_snapshots s ON s.game_id = g.id WHERE g.id = ANY(%s::uuid[])"

_EVENTS_AFTER = """
SELECT w.id, e.version, e.type, e.data, e.recorded_at
FROM unnest(%s::uuid[], %s::int[]) AS w(id, after)
CROSS JOIN LATERAL (
    SELECT version, type, data, recorded_at FROM events
    WHERE game_id = w.id AND version > w.after ORDER BY version LIMIT %s
) AS e
ORDER BY w.id, e.version
"""

_PLAYERS_GAMES = """
SELECT g.id FROM unnest(%(players)s::uuid[]) AS p(id)
CROSS JOIN LATERAL (
    SELECT id FROM games
    WHERE player_id = p.id AND (started_at >= %(since)s OR (%(playing)s AND finished_at IS NULL))
    ORDER BY started_at DESC, id DESC LIMIT %(limit)s
) AS g
"""


async def load_games(pool: AsyncConnectionPool, ids: list[uuid.UUID]) -> dict[uuid.UUID, GameRow]:
    """The stored rows of the games among ``ids`` that exist."""
    if not ids:
        return {}
    async with pool.connection() as conn:
        cursor = conn.cursor(row_factory=tuple_row)
        await cursor.execute(_GAMES, (uuid_array(ids),))
        rows = await cursor.fetchall()
    return {row[0]: GameRow(*row) for row in rows}


async def changes(
    pool: AsyncConnectionPool, positions: dict[uuid.UUID, int], limit: int
) -> tuple[dict[uuid.UUID, list[StoredEvent]], dict[uuid.UUID, GameRow]]:
    """``events_after`` and then ``load_games`` of the same games, in one round trip (a pipeline:
    two statements, the rows read after the events, so never older than them)."""
    if not positions:
        return {}, {}
    ids = list(positions)
    array = uuid_array(ids)
    async with pool.connection() as conn:
        events_cursor = conn.cursor(row_factory=tuple_row)
        rows_cursor = conn.cursor(row_factory=tuple_row)
        async with conn.pipeline():
            await events_cursor.execute(_EVENTS_AFTER, (array, [positions[i] for i in ids], limit))
            await rows_cursor.execute(_GAMES, (array,))
        event_rows = await events_cursor.fetchall()
        game_rows = await rows_cursor.fetchall()
    found: dict[uuid.UUID, list[StoredEvent]] = {}
    for game_id, version, kind, data, recorded_at in event_rows:
        found.setdefault(game_id, []).append(StoredEvent(version, kind, data, recorded_at))
    return found, {row[0]: GameRow(*row) for row in game_rows}


async def players_games(
    pool: AsyncConnectionPool, players: list[uuid.UUID], since: datetime, playing: bool, limit: int
) -> list[uuid.UUID]:
    """The ids of the games of ``players`` started at or after ``since`` (with ``playing``, also
    those still in progress), the newest ``limit`` of each player."""
    if not players:
        return []
    async with pool.connection() as conn:
        cursor = conn.cursor(row_factory=tuple_row)
        await cursor.execute(
            _PLAYERS_GAMES, {"players": uuid_array(players), "since": since, "playing": playing, "limit": limit}
        )
        rows = await cursor.fetchall()
    return [row[0] for row in rows]
