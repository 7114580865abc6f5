"""Abandoned games: a game nobody has moved for ``ABANDON_AFTER_DAYS`` is ended by the service.

Ending it is a move like any other, never a deletion: the domain decides ``Abandon`` into a
``GameAbandoned`` event (status resigned: the stats count it played and not won, and a streak
ends, as after a resignation), and ``GameRepository.save`` appends it in a unit of work with the
stats projections and the player's ``gameEnded`` event, in one transaction, conditional on the
version the game was found idle at. A move that lands
in between wins, and the game is left alone.

Each server process runs ``abandon_forever``; a round runs only in the process that takes a
PostgreSQL advisory lock (``pg_try_advisory_lock``), and takes ``BATCH`` games per query, so
several processes never end a game twice and never hold many rows at once. The version check on
the append makes a double end impossible even without the lock.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from domain import Abandon, apply

from ..store.event_store import ConcurrencyConflict, EventStore
from .moves import Game, GameRepository, Moves, change_of

log = logging.getLogger("canfield")

BATCH = 50
"""Idle games found (and ended one by one) per query."""
MAX_BATCHES = 20
"""Batches per round at most; the next round goes on where this one stopped."""
LOCK_KEY = 0x43414E46_41424E44 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock one round holds (any process; the others skip their round)."""

_IDLE = """
SELECT id, version, updated_at FROM games
WHERE finished_at IS NULL AND updated_at < %s
ORDER BY updated_at LIMIT %s
"""


class Abandoner:
    """Ends the games idle for ``days`` days (the service's ``clock`` says when now is)."""

    def __init__(self, moves: Moves, clock: Callable[[], datetime], days: int, batch: int = BATCH) -> None:
        self.moves = moves
        self.repository: GameRepository = moves.games
        self.store: EventStore = moves.games.store
        self.clock, self.days, self.batch = clock, days, batch

    async def run_once(self) -> int:
        """One round; how many games it ended (0 when another process holds the round)."""
        async with self.store.pool.connection() as conn:
            locked = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,))).fetchone()
            if locked is None or not locked[0]:
                return 0
            try:
                ended = 0
                for _ in range(MAX_BATCHES):
                    now = self.clock()
                    cursor = await conn.execute(_IDLE, (now - timedelta(days=self.days), self.batch))
                    idle = await cursor.fetchall()
                    results = [await self._end(row[0], row[1], now - row[2]) for row in idle]
                    ended += sum(results)
                    if len(idle) < self.batch or not any(results):
                        break
                return ended
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))

    async def _end(self, game_id: uuid.UUID, idle_at: int, idle_for: timedelta) -> bool:
        """End one game found idle at version ``idle_at``; False when it moved or ended meanwhile."""
        row = await self.store.load_game(game_id)
        if row is None or row.finished_at is not None or row.version != idle_at:
            return False
        game = Game.of(row)
        if not game.state.playing:
            return False
        state, events = apply(game.state, Abandon(max(self.days, idle_for // timedelta(days=1))))
        change = change_of(game, state, events, self.clock())
        try:
            await self.repository.save(change, None)
        except ConcurrencyConflict:
            return False  # a move came first: the game is not idle after all
        await self.moves.settle(change.after)
        return True


async def abandon_forever(abandoner: Abandoner, every_seconds: float) -> None:
    """``run_once`` every ``every_seconds`` until cancelled (the app's lifespan), the first after one wait."""
    while True:
        await asyncio.sleep(every_seconds)
        try:
            ended = await abandoner.run_once()
        except Exception as error:  # the database may be down for a while: the next round tries again
            log.warning("ending abandoned games failed: %r", error)
        else:
            if ended:
                log.info("ended %d game(s) idle for %d days or more", ended, abandoner.days)
