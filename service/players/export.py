"""``GET /players/me/export``: everything stored about an account, one JSON line each.

The player, their tokens (never a secret or hash), every game of theirs with its whole log as
they may see it (the games feature writes those lines: ``GameLines``), then the rows other
features keep of them (``PlayerStore.personal_rows``: ratings, webhooks, challenges...).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from .accounts import Accounts
from .tokens import Scope

JSON = dict[str, Any]
GameLines = Callable[[uuid.UUID], AsyncIterator[JSON]]


class AccountExport:
    def __init__(self, accounts: Accounts, game_lines: GameLines) -> None:
        self.accounts = accounts
        self.game_lines = game_lines

    async def export(self, token: str | None) -> AsyncIterator[JSON]:
        """The export of the player behind the token (scope ``account``), line by line."""
        credentials = await self.accounts.authenticate(token, Scope.ACCOUNT)
        return self._lines(credentials.player_id)

    async def _lines(self, player_id: uuid.UUID) -> AsyncIterator[JSON]:
        players = self.accounts.store
        player = await players.get_player(player_id)
        if player is None:
            return
        yield {"type": "player", "id": player.id, "name": player.name, "createdAt": player.created_at,
               "bot": player.bot, "acceptChallengesFrom": player.accept_challenges}
        for token in await players.every_token(player_id):
            yield {"type": "token", **token}
        async for line in self.game_lines(player_id):
            yield line
        for kind, row in await players.personal_rows(player_id):
            yield {"type": kind, **row}
