"""What the games and deals features ask of a contest on a shared deal (a race, a tournament).

A race and a tournament each deal their entrants the same secret deck, so their games are private
while they run and the solver stays off their deal until they are over. The games feature (who may
read a game) and the shared-deal rule (service.deals.shared_deals) ask those questions through
this small interface, which ``Races`` and ``Tournaments`` answer, and never reach into their tables.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from ..store.game_records import GameRow

RACE = "race"
"""The deal source of a race's games: ``{"source": "race", "race": <race id>, ...}``."""
TOURNAMENT = "tournament"
"""The deal source of a tournament's games: ``{"source": "tournament", "tournament": <id>, ...}``."""


def contest_id(deal_source: Mapping[str, Any], kind: str) -> uuid.UUID | None:
    """The contest of ``kind`` (``race``, ``tournament``) a game with this deal source was dealt
    for, if any. A contest's deal source names its id under its kind."""
    if deal_source.get("source") != kind:
        return None
    try:
        return uuid.UUID(str(deal_source.get(kind)))
    except ValueError:
        return None


class Contest(Protocol):
    kind: str
    """The deal source of its games (``race``, ``tournament``) and the kind of ``LiveDeal`` it holds."""

    def contest_of(self, deal_source: Mapping[str, Any]) -> uuid.UUID | None:
        """The contest a game with this deal source was dealt for (None: not one of this kind)."""
        ...

    async def over(self, contest_id: uuid.UUID) -> bool:
        """Whether the contest has finished (one due to finish is finished first)."""
        ...

    async def guard(self, game: GameRow, token: str | None) -> bool:
        """Refuse (``Forbidden``) a read of its running game by anyone but its player; then whether
        the game's hidden cards stay hidden even if it has ended."""
        ...
