"""A player who deletes their account leaves their races, so that no race waits on them.

- **Open races**: their entry is taken out. A race they created passes to the entrant who joined
  first after them; with nobody left it is cancelled: finished without having started, with
  ``CANCELLED_REASON`` as its ``cancelledReason``, and its stream ends with that view
  (``Races.leave_open``).
- **Running races**: their game, if still playing, ends as resigned, so the game replays to its
  end and the race's places stay verified from the logs. The games feature resigns it
  (``service.games.resigning.resign``); this module asks through a ``Resigner``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable

from .races import Races
from .rows import OPEN, RUNNING

log = logging.getLogger("canfield")

CANCELLED_REASON = "its creator deleted their account before anyone else entered"
"""What a race cancelled this way says (``cancelledReason``)."""

Resigner = Callable[[uuid.UUID], Awaitable[bool]]
"""Ends a game as resigned if it is still playing (by the service: no token); whether it did."""


async def leave_races(player_id: uuid.UUID, races: Races, resign: Resigner) -> list[tuple[uuid.UUID, str]]:
    """Take ``player_id`` out of every open race and resign their games in running ones; what
    happened to each race (``left``, ``handed``, ``cancelled``, ``resigned``)."""
    done: list[tuple[uuid.UUID, str]] = []
    for race_id, status, game_id in await races.entries(player_id):
        if status == OPEN:
            what = await races.leave_open(race_id, player_id, CANCELLED_REASON)
            if what is not None:
                done.append((race_id, what))
        elif status == RUNNING and game_id is not None and await resign(game_id):
            done.append((race_id, "resigned"))
    for race_id, what in done:
        log.info("race %s: %s (a player deleted their account)", race_id, what)
    return done
