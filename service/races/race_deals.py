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

The proofs take turns in one worker process, and the creations waiting for them are bounded
(``RaceDealQueue``): at most ``RACE_DEAL_QUEUE_MAX`` in this process (one more is ``503
race_deals_busy``) and ``RACE_DEALS_PER_PLAYER`` of one player (one more is ``429
race_deal_pending``), so a burst of ``POST /races`` delays another player's race by a few proofs
at most, not by the whole burst. Each creation has at most one proof waiting at a time, first
come first served, so the players with a creation waiting take turns, candidate by candidate.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

from domain import ALL_RULESETS, Ruleset, shuffled_deck

from ..deals.daily import MAX_CANDIDATES, Prover, line_wins, secret_seed
from ..deals.deal_pools import load_deal_pool
from ..deals.deal_secret import DealSecret
from ..errors import RaceDealPending, RaceDealsBusy, Unavailable

log = logging.getLogger("canfield")

SECRET_SOURCE = "secret"
RETRY_AFTER_SECONDS = 2


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
class SecretDealing:
    """What a race without a named deal needs for its secret one: the service's ``secret``, the
    ``prover`` that proves a candidate winnable (a solver worker of its own), how long a creation
    may wait for it (``wait_seconds``, RACE_DEAL_WAIT_SECONDS) and the ``queue`` it waits in."""

    secret: DealSecret
    prover: Prover
    wait_seconds: float
    queue: RaceDealQueue


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
    return await proven_deal(ruleset, lambda candidate: race_candidate_seed(secret, ruleset.id, race_id, candidate),
                             prover, f"race {race_id}")


async def proven_deal(ruleset: Ruleset, seed_of: Callable[[int], int], prover: Prover, what: str) -> SecretDeal:
    """The first candidate (``seed_of(0)``, ``seed_of(1)``, ...) in no pool file that the solver
    wins, its line re-checked through the rules: the secret deal of ``what`` (a race, a tournament's deal)."""
    for candidate in range(MAX_CANDIDATES):
        seed = seed_of(candidate)
        if seed in published_seeds():
            continue
        proof = await prover(ruleset, seed)
        if proof.result != "won" or proof.line is None:
            continue
        deck = shuffled_deck(seed)
        if not line_wins(ruleset, deck, proof.line):  # a verdict is a proof: never deal an unchecked one
            log.error("%s: the solver's line for candidate %d does not replay to a win", what, candidate)
            continue
        return SecretDeal(deck, candidate, proof.line, proof.states)
    raise Unavailable(f"no winnable deal was found for the {what.split()[0]}: try again", retry_after=5)


class RaceDealQueue:
    """The race creations of this process waiting for their secret deal: at most ``limit`` at
    once, at most ``per_player`` of one player. Not thread-safe, and needs none (one event loop)."""

    def __init__(self, limit: int, per_player: int) -> None:
        self.limit = limit
        self.per_player = per_player
        self.pending: dict[uuid.UUID, int] = {}  # player -> their creations waiting
        self.size = 0

    @contextmanager
    def entry(self, player_id: uuid.UUID) -> Iterator[None]:
        """A place for one of ``player_id``'s creations while its deal is proven, or a refusal:
        ``RaceDealPending`` (429) when the player has ``per_player`` waiting already, else
        ``RaceDealsBusy`` (503) when the queue is full. The place is given back however the
        creation ends (proven, refused, timed out, its client gone)."""
        held = self.pending.get(player_id, 0)
        if held >= self.per_player:
            raise RaceDealPending(
                f"you have {held} race(s) waiting for their secret deal already: wait for "
                f"{'it' if held == 1 else 'them'} to be created, then try again",
                retry_after=RETRY_AFTER_SECONDS,
            )
        if self.size >= self.limit:
            raise RaceDealsBusy(
                f"{self.size} races are waiting for their secret deal to be proven winnable: try again in a moment "
                "(or name a deal)",
                retry_after=RETRY_AFTER_SECONDS,
            )
        self.pending[player_id] = held + 1
        self.size += 1
        try:
            yield
        finally:
            self.size -= 1
            left = self.pending[player_id] - 1
            if left:
                self.pending[player_id] = left
            else:
                del self.pending[player_id]
