"""A game the service resigns for its player: a player who deletes their account leaves their
running races (``service.races.leaving``), and their game there, if still playing, ends as resigned.

The domain decides ``Resign`` into a ``GameResigned`` event, appended like a move (the stats
projections in its transaction, conditional on the version the game was read at; a move landing in
between is read again), so the game replays to its end and the race's places stay verified from
the logs; the race then finishes when its last game has ended, as after any move (``Moves.settle``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

from domain import Resign, apply

from ..errors import Unavailable
from ..store.event_store import ConcurrencyConflict
from .moves import Game, Moves, change_of

TRIES = 5
"""Reads of a game whose resignation met a move in between, at most."""


async def resign(game_id: uuid.UUID, moves: Moves, clock: Callable[[], datetime]) -> bool:
    """End the game as resigned if it is still playing (by the service: no token); whether it did."""
    repository = moves.games
    for _ in range(TRIES):
        row = await repository.store.load_game(game_id)
        if row is None or row.finished_at is not None:
            return False
        game = Game.of(row)
        if not game.state.playing:
            return False
        state, events = apply(game.state, Resign())
        change = change_of(game, state, events, clock())
        try:
            await repository.save(change, None)
        except ConcurrencyConflict:
            continue  # a move came first: read the game again
        await moves.settle(change.after)
        return True
    raise Unavailable("a game of yours in a running race kept changing while your account was being deleted; "
                      "nothing was erased: send the request again", retry_after=1)
