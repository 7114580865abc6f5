"""Game analysis as the API offers it: ask for one (``request``) and read it (``read``).

Who may ask: the game's player, or any player once the game is public (the reads of the game
decide, ``Games.readable``: a daily game answers only to its player until its date is over, a race
game while its race runs). What may be analysed: a game that has ended and whose hidden cards may
be shown (a daily game after its date, a race game once every game of its race has ended): the
analysis is public and tells what the face-down cards allowed. Otherwise ``409`` with a code of
its own (``game_in_progress``, ``cards_hidden``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..errors import Conflict, NotFound, Unauthorized
from ..games.games import Games
from ..players.tokens import Scope
from ..store.event_store import GameRow
from .queue import DONE, AnalysisQueue, JobRow

JSON = dict[str, Any]


def job_view(row: JobRow) -> JSON:
    """A job as the API shows it: positions and the turning point once it is done."""
    result = row.result if row.status == DONE and row.result is not None else {}
    return {
        "status": row.status,
        "progress": {"done": row.done, "total": row.total},
        "positions": result.get("positions", []),
        "turningPoint": result.get("turningPoint"),
    }


def progress_view(row: JobRow) -> JSON:
    """What a game's live stream sends of its analysis while it runs (``analysis`` messages)."""
    return {"status": row.status, "progress": {"done": row.done, "total": row.total}}


class Analyses:
    def __init__(self, games: Games, queue: AnalysisQueue, wake: Callable[[], None] = lambda: None) -> None:
        self.games = games
        self.queue = queue
        self.wake = wake  # this process's runner: a job is waiting

    async def request(self, game_id: uuid.UUID, token: str | None) -> JSON:
        """Queue the game's analysis (asked again: the same job; a failed one is queued again)."""
        game = await self.games.stored_game(game_id)
        withhold = await self.games.readable(game, token)  # a private game: its player only
        if token is None:
            raise Unauthorized("asking for an analysis needs a player's bearer token")
        await self.games.authenticate(token, Scope.PLAY)
        return job_view(await self._queue(game, withhold))

    async def request_public(self, game_id: uuid.UUID) -> JobRow:
        """``request`` as the public may see the game, with no player asking (``canfield analyse``)."""
        game = await self.games.stored_game(game_id)
        return await self._queue(game, await self.games.readable(game, None))

    async def _queue(self, game: GameRow, withhold: bool) -> JobRow:
        if game.finished_at is None:
            raise Conflict("the game is still being played: it can be analysed once it has ended", "game_in_progress")
        if withhold:
            raise Conflict("the game's face-down cards may not be shown yet (a daily game until its date is over, "
                           "a race game until every game of its race has ended), and an analysis would tell what "
                           "they allow: ask again then", "cards_hidden")
        row = await self.queue.request(game.id, game.version)
        self.wake()
        return row

    async def read(self, game_id: uuid.UUID, token: str | None) -> JSON:
        game = await self.games.stored_game(game_id)
        await self.games.readable(game, token)
        row = await self.queue.get(game_id)
        if row is None:
            raise NotFound(f"game {game_id} has no analysis: ask for one with POST /games/{game_id}/analysis")
        return job_view(row)
