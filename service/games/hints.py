"""``GET /games/{id}/hints``: ranked heuristic hints, and with ``solver`` the next move of a
winning line from a solver worker.

A solver hint marks the game assisted (an event: ``UseSolverHint``, played as a move), so only the
game's player may ask for it. It is refused on a deal others play for a place (service.deals.shared_deals),
limited per player and per client address (service.games.solver_limits: 429) and by the worker's
queue (503); a refused or abandoned one records nothing.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, cast

import msgspec

from domain import GameOver, UseSolverHint, hints
from domain.codec import state_to_snapshot

from ..deals.shared_deals import SharedDeals
from ..deals.solver_workers import SolverWorkers
from ..errors import Forbidden, Unauthorized
from ..players.tokens import Scope
from .games import Games
from .moves import Moves
from .solver_limits import SolverLimits
from .wire import Hints as HintsReply
from .wire import HintView, MoveRequest, SolverHint, move_request

JSON = dict[str, Any]
Verdict = Literal["won", "lost", "unknown"]


class Hints:
    def __init__(self, games: Games, moves: Moves, shared: SharedDeals, workers: SolverWorkers,
                 limits: SolverLimits, seconds: float) -> None:
        self.games = games
        self.moves = moves
        self.shared = shared
        self.solver = workers
        self.limits = limits
        self.seconds = seconds  # SOLVER_HINT_MS: how long the solver may think

    async def hints(self, game_id: uuid.UUID, solver: bool = False, token: str | None = None,
                    address: str = "?") -> HintsReply:
        """Ranked heuristic hints; with ``solver`` also the solver's next move (``address``: the
        client's, for its budget)."""
        game, state = await self.games.game_and_state(game_id)
        await self.games.access.readable(game, token)  # a race game: its player only, while the race runs
        ranked = [HintView(move=move_request(h.move), reason=h.reason) for h in hints(state)]
        if not solver:
            return HintsReply(version=state.version, hints=ranked)
        if token is None:
            raise Unauthorized("solver hints mark the game assisted: they need the player's bearer token")
        if await self.games.access.player(token, Scope.PLAY) != game.player_id:
            raise Forbidden("this game belongs to another player")
        if not state.playing:
            raise GameOver(f"the game is over ({state.status.value})")
        await self.shared.refuse_the_solver(game)
        self.limits.take(game.player_id, address)  # per player, whatever the token
        result, move = await self.solver.next_move(state_to_snapshot(state), self.seconds)
        played = await self.moves.play(game_id, token, UseSolverHint())
        shown = None if move is None else msgspec.convert(move, MoveRequest)  # the worker's move, as sent
        told = SolverHint(result=cast(Verdict, result), move=shown)
        return HintsReply(version=played.version, hints=ranked, solver=told)
