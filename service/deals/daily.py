"""The daily deal: derived from the UTC date and the server's secret, proven winnable, never named.

Derivation: candidate ``k`` (0, 1, 2, ...) of a date is the documented shuffle of the seed
``HMAC-SHA256(DAILY_SECRET, "canfield-daily:<ruleset>:<YYYY-MM-DD>:<k>")`` (its first 8 bytes,
big-endian, masked to 53 bits). The day's deal is the first candidate the solver wins within a
fixed budget of positions, and only once its winning line has replayed to a win through the
rules engine. No pool deal is involved, so no published file holds its deck or its line, and no
response ever names its seed: only the date does.

The competition of a date runs during that UTC date: a player's game of the deal dealt on that
date is their entry and their only one (a second is refused while the date is on); games dealt
after the date is over are practice.
Until the date is over no response shows a face-down card of a daily game (not even a finished
one's), and each daily game answers only to its own player (``GameAccess`` checks that).
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from functools import lru_cache
from typing import Any

from domain import MAX_SEED, Ruleset, deal, get_ruleset, initial_state, shuffled_deck, verify
from domain.rulesets import DEFAULT_RULESET_ID
from domain.solver import Budget, solve

from ..wire import LessonId
from .deal_pools import decode_line, encode_line
from .wire import (
    DailySource,
    DealSource,
    DeckSource,
    LessonSource,
    PoolSource,
    RaceSource,
    SeedSource,
    TournamentSource,
)

DAILY_RULESET_ID = DEFAULT_RULESET_ID
# The solver's budget per candidate. Positions, not seconds, decide, so every server process
# (fast or slow, busy or idle) reaches the same verdict on the same candidate; the time limit
# only stops a pathological search on an overloaded machine.
PROOF_MAX_STATES = 200_000
PROOF_MAX_SECONDS = 60.0
MAX_CANDIDATES = 64  # about 85 % of open-runs shuffles are won: 64 misses in a row do not happen

JSON = dict[str, Any]


def secret_seed(secret: str, message: str) -> int:
    """The seed ``message`` names under ``secret`` (HMAC-SHA256, its first 8 bytes, big-endian,
    masked to 53 bits): unknowable without the secret. Daily and race deals each have messages of
    their own."""
    digest = hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def candidate_seed(secret: str, ruleset_id: str, day: date, candidate: int) -> int:
    """The seed of candidate ``candidate`` of a date: unknowable without the secret."""
    return secret_seed(secret, f"canfield-daily:{ruleset_id}:{day.isoformat()}:{candidate}")


@dataclass(frozen=True, slots=True)
class Proof:
    """The solver's verdict on one candidate: ``won`` with its line (encoded as in the pools)."""

    result: str  # won, lost or unknown
    line: str | None
    states: int


Prover = Callable[[Ruleset, int], Awaitable[Proof]]
"""Solves one candidate (ruleset, seed); the server's runs ``prove`` in a worker process."""


def prove(ruleset_id: str, ruleset_version: int, seed: int, max_states: int, max_seconds: float) -> Proof:
    """Solve one candidate (CPU-bound: the server runs this in a worker process)."""
    ruleset = get_ruleset(ruleset_id, ruleset_version)
    state = initial_state(deal(ruleset, shuffled_deck(seed), {}))
    deadline = time.perf_counter() + max_seconds
    outcome = solve(state, Budget(max_states=max_states, out_of_time=lambda: time.perf_counter() > deadline))
    won = outcome.result == "won"
    return Proof(outcome.result, encode_line(outcome.moves) if won else None, outcome.states)


def line_wins(ruleset: Ruleset, deck: tuple[int, ...], line: str) -> bool:
    """Whether ``line`` replays to a win from the deal of ``deck`` through the rules engine."""
    try:
        moves = decode_line(line)
    except (ValueError, IndexError):
        return False
    return verify.line_wins(initial_state(deal(ruleset, deck, {})), moves).won


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """A date's deal as stored (``daily_deals``): the same for everyone, on every server."""

    day: date
    ruleset: Ruleset
    candidate: int
    seed: int  # never shown: it would give the deck away
    deck: tuple[int, ...]
    line: str  # the proven winning line, never shown
    line_length: int
    solver_states: int
    verified_at: datetime

    @property
    def closes_at(self) -> datetime:
        return closes_at(self.day)


def closes_at(day: date) -> datetime:
    """When a date's competition ends and its deck may be shown: the next UTC midnight."""
    return datetime.combine(day + timedelta(days=1), clock_time(0), UTC)


def is_over(day: date, now: datetime) -> bool:
    """Whether the UTC date ``day`` has passed at ``now``."""
    return now.astimezone(UTC).date() > day


# ---------------------------------------------------------------- a daily game's deal source


def daily_source(day: date, practice: bool) -> JSON:
    """The deal source of a daily game, as stored and shown (API.md): no seed, no pool number."""
    return {"source": "daily", "daily": day.isoformat(), "practice": practice}


def daily_day_of(source: Mapping[str, Any]) -> date | None:
    """The date of a daily game's deal source, or None for any other source."""
    if source.get("source") != "daily" or not isinstance(source.get("daily"), str):
        return None
    try:
        return date.fromisoformat(source["daily"])
    except ValueError:
        return None


def is_entry(source: Mapping[str, Any]) -> bool:
    """Whether a daily game is its player's entry for that date (their first, dealt on the date)."""
    return daily_day_of(source) is not None and source.get("practice") is False


def public_source(stored: Mapping[str, Any]) -> JSON:
    """A stored deal source as the API shows it. Daily games dealt before daily deals were
    derived from the secret (``{"source": "daily", "date": ..., "pool": n}``) were pool deals
    whose number was already published: they read as the pool deal they are."""
    if _was_a_pool_deal(stored):
        return {"source": "pool", "pool": stored["pool"]}
    return dict(stored)


def _was_a_pool_deal(stored: Mapping[str, Any]) -> bool:
    return stored.get("source") == "daily" and "pool" in stored and "daily" not in stored


def source_view(stored: Mapping[str, Any]) -> DealSource:
    """A stored deal source as the API shows it (``public_source``): never a seed or deck it does
    not name already; a daily's date, stored as ``daily`` (which the previous release reads), is
    shown as ``date``."""
    kind = stored.get("source")
    if kind == "seed":
        return SeedSource(stored["seed"])
    if kind == "pool" or _was_a_pool_deal(stored):
        return PoolSource(stored["pool"])
    if kind == "daily":
        return DailySource(date.fromisoformat(stored["daily"]), stored.get("practice", False))
    if kind == "deck":
        return DeckSource()
    if kind == "lesson":
        return LessonSource(LessonId(stored["lesson"]))
    if kind == "race":
        return RaceSource(_uuid(stored["race"]))
    if kind == "tournament":
        return TournamentSource(_uuid(stored["tournament"]), stored["deal"])
    raise ValueError(f"a deal source of no known kind: {kind!r}")


@lru_cache(maxsize=4096)
def _uuid(text: str) -> uuid.UUID:
    """A race's or tournament's id as stored (text): every move of its games shows it."""
    return uuid.UUID(text)


def reveals_hidden_cards(source: Mapping[str, Any], over: bool, now: datetime) -> bool:
    """Whether a response may show a game's face-down cards (the stock and covered reserve in a
    view, the first event's ``deck``): once the game is over and, for a daily game, once its
    UTC date has passed as well. The one place this is decided."""
    if not over:
        return False
    day = daily_day_of(source)
    return day is None or is_over(day, now)


def private_until(source: Mapping[str, Any], now: datetime) -> date | None:
    """The date until which a game answers only to its player (a daily game whose date is not
    over: any of its cards would tell another player the deck), else None."""
    day = daily_day_of(source)
    return day if day is not None and not is_over(day, now) else None
