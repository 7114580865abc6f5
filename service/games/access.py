"""Who may read a game, and whether its face-down cards stay hidden from them.

A daily game answers only to its player until its date is over (its cards would tell anyone else
the day's deck); a race's or a tournament's game only to its player while the contest runs (the
contest answers that itself: service.deals.contests). Everyone else's games are public, their
face-down cards withheld while they are played.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime

from ..deals.contests import Contest
from ..deals.daily import private_until, reveals_hidden_cards
from ..errors import Forbidden, Unauthorized
from ..players.accounts import Accounts
from ..players.tokens import Scope
from ..store.game_records import GameRow


class GameAccess:
    def __init__(self, accounts: Accounts, clock: Callable[[], datetime], contests: Sequence[Contest]) -> None:
        self.accounts = accounts
        self.clock = clock
        self.contests = tuple(contests)

    async def player(self, token: str | None, scope: Scope | None = None) -> uuid.UUID:
        """The player of a live token that has ``scope`` (``Accounts.player_id``)."""
        return await self.accounts.player_id(token, scope)

    async def readable(self, game: GameRow, token: str | None) -> bool:
        """Refuse a read its reader may not make; then whether the game's hidden cards stay hidden
        even if it has ended."""
        now = self.clock()
        day = private_until(game.deal, now)
        if day is not None:
            reason = f"a daily game answers only to its player until its date ({day}, UTC) is over"
            if token is None:
                raise Unauthorized(f"{reason}: send the player's bearer token")
            if await self.player(token, Scope.READ_PRIVATE) != game.player_id:
                raise Forbidden(reason)
        for contest in self.contests:
            if contest.contest_of(game.deal) is not None:
                return await contest.guard(game, token)
        return not reveals_hidden_cards(game.deal, True, now)

    async def owner_withholds(self, game: GameRow) -> bool:
        """Whether the player's own read of their game withholds its face-down cards: a daily deck
        until its date is over, a race's or a tournament's deck until it has finished."""
        for contest in self.contests:
            if contest.contest_of(game.deal) is not None:
                try:
                    if await contest.guard(game, None):
                        return True
                except Forbidden:  # the contest still runs
                    return True
        return not reveals_hidden_cards(game.deal, True, self.clock())
