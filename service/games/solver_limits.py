"""How often a player may ask the solver for a hint: token buckets per player and per address.

A solver hint costs up to ``SOLVER_HINT_MS`` of a worker process's CPU, far more than any other
request, so it has budgets of its own besides the write budget of ``service.http.limits``:
``SOLVER_HINTS_PER_MINUTE`` (burst ``SOLVER_HINT_BURST``) per player, across all their tokens,
and ``SOLVER_HINTS_PER_MINUTE_PER_ADDRESS`` (burst ``SOLVER_HINT_ADDRESS_BURST``) per client
address, so neither a player with many tokens nor many players behind one address can take the
worker for themselves. Only a hint that would run the solver counts (after the token, the game's
owner and the shared-deal rule are checked); a refused one is ``429 rate_limited`` with
``Retry-After`` and records nothing. Per process, like the other budgets.
"""

from __future__ import annotations

import math
import uuid

from ..errors import RateLimited
from ..metrics import REFUSED_SOLVER_HINTS
from ..rate import TokenBuckets, buckets
from ..settings import Settings


class SolverLimits:
    def __init__(self, settings: Settings) -> None:
        self.per_player: TokenBuckets | None = buckets(settings.solver_hints_per_minute / 60,
                                                       settings.solver_hint_burst)
        self.per_address: TokenBuckets | None = buckets(settings.solver_hints_per_minute_per_address / 60,
                                                        settings.solver_hint_address_burst)

    def take(self, player_id: uuid.UUID, address: str) -> None:
        """Spend one hint of the player's and the address's budgets, or raise ``RateLimited`` (spending none)."""
        charged = ((self.per_player, player_id), (self.per_address, address))
        wait = max((budget.wait(key) for budget, key in charged if budget is not None), default=0.0)
        if wait > 0:
            REFUSED_SOLVER_HINTS.inc()
            raise RateLimited(f"too many solver hints: try again in {max(1, math.ceil(wait))} s",
                              retry_after=math.ceil(wait))
        for budget, key in charged:
            if budget is not None:
                budget.take(key)
