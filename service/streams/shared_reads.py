"""Reads of games shared by the watches of one process (service.streams.watch).

Every watch of a game is woken by the same notification at the same moment, and most are at the
same version of it: so the first to read a game's events after a version starts the read as a
task of its own, and every other watch that wants the same game after the same version awaits
that task instead of asking the database again. A task outlives a watch that leaves while it
runs; its error (the database went away) reaches every watch that waits for it.
"""

from __future__ import annotations

import asyncio
import uuid
from functools import partial

from psycopg_pool import AsyncConnectionPool

from ..store.game_records import GameRow, StoredEvent
from ..store.many_games import changes

Changes = tuple[dict[uuid.UUID, list[StoredEvent]], dict[uuid.UUID, GameRow]]
PAGE = 500  # events read per game and query while catching up (as a game's stream)


class SharedReads:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.in_flight: dict[tuple[uuid.UUID, int], asyncio.Task[Changes]] = {}

    async def changes(self, positions: dict[uuid.UUID, int]) -> Changes:
        """Each game's events after its position in ``positions`` (a page at most), then its row."""
        tasks: dict[uuid.UUID, asyncio.Task[Changes]] = {}
        mine: dict[uuid.UUID, int] = {}
        for game_id, after in positions.items():
            running = self.in_flight.get((game_id, after))
            if running is None:
                mine[game_id] = after
            else:
                tasks[game_id] = running
        if mine:
            task = asyncio.ensure_future(changes(self.pool, mine, PAGE))
            keys = list(mine.items())
            for key in keys:
                self.in_flight[key] = task
            task.add_done_callback(partial(self._done, keys))
            tasks.update(dict.fromkeys(mine, task))
        results = {task: await asyncio.shield(task) for task in dict.fromkeys(tasks.values())}
        events: dict[uuid.UUID, list[StoredEvent]] = {}
        rows: dict[uuid.UUID, GameRow] = {}
        for game_id, task in tasks.items():
            found_events, found_rows = results[task]
            events[game_id] = found_events.get(game_id, [])
            if game_id in found_rows:
                rows[game_id] = found_rows[game_id]
        return events, rows

    def _done(self, keys: list[tuple[uuid.UUID, int]], task: asyncio.Task[Changes]) -> None:
        for key in keys:
            if self.in_flight.get(key) is task:
                del self.in_flight[key]
        if not task.cancelled():
            task.exception()  # retrieved here too: no warning when every watch waiting for it has gone
