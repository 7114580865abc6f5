"""``DELETE /players/me``: an account closed, and what it takes part in let go of it first.

Other features hold a player in things that outlive a request: a race they entered, a challenge
they made or received. Each such feature gives the closing one ``Leaver``, a function of the
player's id that lets go of them (the races feature: out of open races, their games in running
ones resigned; the challenges feature: their pending challenges cancelled). The composition root
(service.bootstrap) hands the leavers in, so this feature needs none of theirs.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence

from .accounts import Accounts
from .tokens import Scope

Leaver = Callable[[uuid.UUID], Awaitable[None]]


class AccountClosing:
    def __init__(self, accounts: Accounts, leavers: Sequence[Leaver]) -> None:
        self.accounts = accounts
        self.leavers = tuple(leavers)

    async def close(self, token: str | None) -> None:
        """Every leaver lets go of the player behind the token (scope ``account``), in order; then
        the account is erased (``Accounts.delete``)."""
        credentials = await self.accounts.authenticate(token, Scope.ACCOUNT)
        for leave in self.leavers:
            await leave(credentials.player_id)
        await self.accounts.delete(token)
