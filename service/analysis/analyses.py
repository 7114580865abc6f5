"""Game analysis as the API offers it: ask for one (``request``) and read it (``read``).

Who may ask: the game's player, or any player once the game is public (the reads of the game
decide, ``GameAccess.readable``: a daily game answers only to its player until its date is over, a race
game while its race runs). What may be analysed: a game that has ended and whose hidden cards may
be shown (a daily game after its date, a race game once every game of its race has ended): the
analysis is public and tells what the face-down cards allowed. Otherwise ``409`` with a code of
its own (``game_in_progress``, ``cards_hidden``), and ``shared_deal`` for a game whose deck is a
copy of a deal in play (a daily deal whose date is not over, a race not finished): the solver
refuses it however it was dealt (``SharedDeals.refuse_the_solver``).

How many: a player may have ``ANALYSIS_JOBS_PER_PLAYER`` jobs queued or running, and one client
address ``ANALYSIS_JOBS_PER_ADDRESS`` (all its players together); one more new job is ``429
analysis_queue_full`` with ``Retry-After`` and nothing is queued. Asking about a job that is already
there (queued, running or done) is never refused: it queues nothing.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import Any, Literal, cast

import msgspec

from ..deals.shared_deals import SharedDeals
from ..errors import Conflict, NotFound, RateLimited, Unauthorized
from ..games.games import Games
from ..games.wire import MoveRequest
from ..players.tokens import Scope
from ..settings import Settings
from ..store.game_records import GameRow
from .queue import DONE, AnalysisQueue, Caps, JobRow, QueueFull
from .wire import AnalysedMove, AnalysisProgress, AnalysisView, PositionVerdict, TurningPoint

JSON = dict[str, Any]


class AnalysisQueueFull(RateLimited):
    """A new analysis job refused: its player (or address) has as many queued or running as allowed."""

    code = "analysis_queue_full"
    title = "Too many analyses waiting"


JobStatus = Literal["queued", "running", "done", "failed"]
Verdict = Literal["won", "lost", "unknown"]


def job_view(row: JobRow) -> AnalysisView:
    """A job as the API shows it: positions and the turning point once it is done (the stored report,
    ``jobs.report``)."""
    result = row.result if row.status == DONE and row.result is not None else {}
    point = result.get("turningPoint")
    return AnalysisView(
        status=cast(JobStatus, row.status),
        progress=AnalysisProgress(row.done, row.total),
        positions=[
            PositionVerdict(p["version"], cast(Verdict, p["verdict"]), p["movesToWin"])
            for p in result.get("positions", [])
        ],
        turning_point=None if point is None else TurningPoint(
            point["before"], point["after"], msgspec.convert(point["move"], AnalysedMove),
            msgspec.convert(point["winningLineBefore"], list[MoveRequest]),
        ),
        budget_spent=bool(result.get("budgetSpent", False)),
    )


def progress_view(row: JobRow) -> JSON:
    """What a game's live stream sends of its analysis while it runs (``analysis`` messages)."""
    return {"status": row.status, "progress": {"done": row.done, "total": row.total}}


class Analyses:
    def __init__(self, games: Games, shared: SharedDeals, queue: AnalysisQueue, settings: Settings,
                 wake: Callable[[], None] = lambda: None) -> None:
        self.games = games
        self.access = games.access
        self.shared = shared
        self.queue = queue
        self.wake = wake  # this process's runner: a job is waiting
        self.caps = Caps(settings.analysis_jobs_per_player, settings.analysis_jobs_per_address)
        self.retry_after = max(1, math.ceil(settings.analysis_job_seconds))  # a running job ends within it

    async def request(
        self, game_id: uuid.UUID, token: str | None, address: str | None = None
    ) -> AnalysisView:
        """Queue the game's analysis (asked again: the same job; a failed one is queued again) for the
        token's player, asking from ``address``."""
        game = await self.games.stored_game(game_id)
        withhold = await self.access.readable(game, token)  # a private game: its player only
        if token is None:
            raise Unauthorized("asking for an analysis needs a player's bearer token")
        player_id = await self.access.player(token, Scope.PLAY)
        return job_view(await self._queue(game, withhold, (f"player:{player_id}", address)))

    async def request_public(self, game_id: uuid.UUID) -> JobRow:
        """``request`` as the public may see the game, with no player asking (``canfield analyse``)."""
        game = await self.games.stored_game(game_id)
        return await self._queue(game, await self.access.readable(game, None))

    async def _queue(self, game: GameRow, withhold: bool, asker: tuple[str, str | None] | None = None) -> JobRow:
        if game.finished_at is None:
            raise Conflict("the game is still being played: it can be analysed once it has ended", "game_in_progress")
        if withhold:
            raise Conflict("the game's face-down cards may not be shown yet (a daily game until its date is over, "
                           "a race game until every game of its race has ended), and an analysis would tell what "
                           "they allow: ask again then", "cards_hidden")
        await self.shared.refuse_the_solver(game, "analyses are")  # a copy of a deal in play: 409 shared_deal
        row = await self._enqueue(game, asker)
        self.wake()
        return row

    async def _enqueue(self, game: GameRow, asker: tuple[str, str | None] | None) -> JobRow:
        """The game's job, queued for ``asker`` (its requester and address; None: the operator's
        ``canfield analyse``, under no cap) unless their cap is reached: ``AnalysisQueueFull``."""
        if asker is None:
            return await self.queue.request(game.id, game.version)
        requester, address = asker
        try:
            return await self.queue.request(game.id, game.version, requester, address, self.caps)
        except QueueFull as full:
            if full.who == "player":
                detail = (f"you already have {full.limit} analyses queued or running, the most one player may "
                          "have: ask for this one once one of them is done")
            else:
                detail = (f"{full.limit} analyses asked for from your network address are queued or running, the "
                          "most one address may have: ask for this one once one of them is done")
            raise AnalysisQueueFull(detail, self.retry_after) from None

    async def read(self, game_id: uuid.UUID, token: str | None) -> AnalysisView:
        game = await self.games.stored_game(game_id)
        await self.access.readable(game, token)
        row = await self.queue.get(game_id)
        if row is None:
            raise NotFound(f"game {game_id} has no analysis: ask for one with POST /games/{game_id}/analysis")
        return job_view(row)
