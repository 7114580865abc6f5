"""A race's secret deal: what a race is dealt when its creator names no deal.

Derivation: candidate ``k`` (0, 1, 2, ...) of a race is the documented shuffle of the seed
``HMAC-SHA256(deal secret, "canfield-race:<ruleset>:<race id>:<k>")`` (first 8 bytes, big-endian,
masked to 53 bits): the daily deals' secret (service.deals.deal_secret) with a message of its
own, so no race deck is a daily deck and no deck can be computed without the secret. The race's
deal is the first candidate the solver wins within the daily deals' budget of positions, once
its line has replayed to a win through the rules, and that is not a seed any pool file lists.
It is proven when the race is created (``POST /races`` waits for it, up to
``Settings.race_deal_wait_seconds``, then 503), so the start deals at once. The race shows the
deal as ``{"source": "secret"}`` only: no seed, no candidate, no line, ever.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from functools import cache
from typing import Any

from domain import ALL_RULESETS, Ruleset, shuffled_deck

from ..deals.daily import MAX_CANDIDATES, Prover, line_wins, secret_seed
from ..deals.deal_pools import load_deal_pool
from ..errors import Unavailable

log = logging.getLogger("canfield")

SECRET_SOURCE = "secret"


def race_candidate_seed(secret: str, ruleset_id: str, race_id: uuid.UUID, candidate: int) -> int:
    """The seed of a race's candidate ``candidate``: unknowable without the secret."""
    return secret_seed(secret, f"canfield-race:{ruleset_id}:{race_id}:{candidate}")


@cache
def published_seeds() -> frozenset[int]:
    """Every seed a pool file names or covers (1 .. seedsTried, and each deal's), of every ruleset."""
    seeds: set[int] = set()
    for ruleset_id in {ruleset.id for ruleset in ALL_RULESETS}:
        pool = load_deal_pool(ruleset_id)
        if pool is not None:
            seeds.update(range(1, pool.seeds_tried + 1))
            seeds.update(item.seed for item in pool.deals)
    return frozenset(seeds)


@dataclass(frozen=True, slots=True)
class SecretDeal:
    """A race's proven deal: the deck, and the proof kept with the race (never shown)."""

    deck: tuple[int, ...]
    candidate: int
    line: str
    solver_states: int

    def proof(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "line": self.line, "lineLength": len(self.line.split()),
                "solverStates": self.solver_states}


async def secret_deal(secret: str, ruleset: Ruleset, race_id: uuid.UUID, prover: Prover) -> SecretDeal:
    """The race's first candidate proven winnable (the line re-checked through the rules)."""
    for candidate in range(MAX_CANDIDATES):
        seed = race_candidate_seed(secret, ruleset.id, race_id, candidate)
        if seed in published_seeds():
            continue
        proof = await prover(ruleset, seed)
        if proof.result != "won" or proof.line is None:
            continue
        deck = shuffled_deck(seed)
        if not line_wins(ruleset, deck, proof.line):  # a verdict is a proof: never deal an unchecked one
            log.error("race %s: the solver's line for candidate %d does not replay to a win", race_id, candidate)
            continue
        return SecretDeal(deck, candidate, proof.line, proof.states)
    raise Unavailable("no winnable deal was found for the race: try again", retry_after=5)
