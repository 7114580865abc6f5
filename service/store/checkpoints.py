"""Checkpoints of past states: a game's state and whole undo stack at every ``CHECKPOINT_EVERY``
versions (``game_checkpoints``), so a past state (``GET /games/{id}/states/{v}``) folds from the
nearest one instead of the whole log (service.games.past_states).

``CheckpointStore`` holds the two statements that read and store them; service.store.event_store's
``EventStore`` is one, on its pool. They are written after a move has been answered, never in the
move's own statement (``Checkpoints.after_move`` in service.games.past_states).
"""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.types.json import Json
from psycopg_pool import AsyncConnectionPool

CHECKPOINT_EVERY = 500
"""A game's state and whole undo stack are stored (``game_checkpoints``) at every multiple of this many
versions, so a past state (``GET /games/{id}/states/{v}``) folds fewer than this many events from the
nearest one at or below it instead of the whole log (service.games.past_states, docs/performance.md)."""

_FROM_CHECKPOINT = """
WITH c AS (
    SELECT version, checkpoint FROM game_checkpoints
    WHERE game_id = %(id)s AND version <= %(version)s ORDER BY version DESC LIMIT 1
)
SELECT (SELECT version FROM c), (SELECT checkpoint FROM c),
       (SELECT coalesce(json_agg(json_build_array(e.type, e.data) ORDER BY e.version), '[]'::json)
        FROM events e WHERE e.game_id = %(id)s AND e.version > coalesce((SELECT version FROM c), 0)
                        AND e.version <= %(version)s)
"""
"""The nearest checkpoint of a game at or below a version and the events after it up to that
version, in one statement (the checkpoint's primary key and the events' (game_id, version) key)."""


class CheckpointStore:
    """The checkpoints of games, on ``pool`` (set by the store that is one: ``EventStore``)."""

    pool: AsyncConnectionPool

    async def from_checkpoint(
        self, game_id: uuid.UUID, version: int
    ) -> tuple[int, dict[str, Any] | None, list[tuple[str, dict[str, Any]]]]:
        """The game's nearest checkpoint at or below ``version`` (its version and body; 0 and None:
        none) and the events after it up to ``version`` as ``(type, data)``."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(_FROM_CHECKPOINT, {"id": game_id, "version": version})
            row = await cursor.fetchone()
        assert row is not None
        return row[0] or 0, row[1], [(kind, data) for kind, data in row[2]]

    async def add_checkpoints(self, game_id: uuid.UUID, checkpoints: list[tuple[int, dict[str, Any]]]) -> None:
        """Store checkpoints of the game (``(version, body)``); one already stored stays as it is
        (the state at a version never changes)."""
        if not checkpoints:
            return
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO game_checkpoints (game_id, version, checkpoint) "
                "SELECT %(id)s, c.version, c.checkpoint FROM json_to_recordset(%(rows)s::json) "
                "AS c(version integer, checkpoint json) ON CONFLICT (game_id, version) DO NOTHING",
                {"id": game_id, "rows": Json([{"version": v, "checkpoint": body} for v, body in checkpoints])},
            )
