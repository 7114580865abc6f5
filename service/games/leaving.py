"""A player who deletes their account leaves their races, so that no race waits on them.

- **Open races**: their entry is taken out. A race they created passes to the entrant who joined
  first after them; with nobody left it is cancelled: finished without having started, with
  ``CANCELLED_REASON`` as its ``cancelledReason``, and its stream ends with that view
  (``Races.leave_open``).
- **Running races**: their game, if still playing, ends as resigned: the domain decides
  ``Resign`` into a ``GameResigned`` event, appended like a move (the stats projections in its
  transaction, conditional on the version the game was read at; a move landing in between is
  read again), so the game replays to its end and the race's places stay verified from the logs.
  The race then finishes when its last game has ended, as after any move (``Moves.settle``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime

from domain import Resign, apply

from ..errors import Unavailable
from ..races.races import Races
from ..races.rows import OPEN, RUNNING
from ..store.event_store import ConcurrencyConflict
from .moves import Game, Moves, change_of

log = logging.getLogger("canfield")

CANCELLED_REASON = "its creator deleted their account before anyone else entered"
"""What a race cancelled this way says (``cancelledReason``)."""

TRIES = 5
"""Reads of a game whose resignation met a move in between, at most."""


async def leave_races(
    player_id: uuid.UUID, races: Races, moves: Moves, clock: Callable[[], datetime]
) -> list[tuple[uuid.UUID, str]]:
    """Take ``player_id`` out of every open race and resign their games in running ones; what
    happened to each race (``left``, ``handed``, ``cancelled``, ``resigned``)."""
    done: list[tuple[uuid.UUID, str]] = []
    for race_id, status, game_id in await races.entries(player_id):
        if status == OPEN:
            what = await races.leave_open(race_id, player_id, CANCELLED_REASON)
            if what is not None:
                done.append((race_id, what))
        elif status == RUNNING and game_id is not None and await resign(game_id, moves, clock):
            done.append((race_id, "resigned"))
    for race_id, what in done:
        log.info("race %s: %s (a player deleted their account)", race_id, what)
    return done


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
