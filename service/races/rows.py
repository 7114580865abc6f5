"""The races feature's public records: a race as stored (``RaceRow``, its ``EntrantRow``s), its
statuses, and what its changes write (``NewRaceRow``, ``DealtGame``, ``Result``, ``Ending``).

Every other feature and the HTTP layer name a race by these, never by the race store's module
(service.races.race_store is the feature's own: an import-linter contract keeps it so).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from psycopg import AsyncConnection

from ..store.game_records import NewEvent

OPEN, RUNNING, FINISHED = "open", "running", "finished"
CANCELLED = "cancelled"
"""Shown, never stored: a race cancelled before it started is stored as finished with its
``cancelled_reason`` (a status the previous release knows) and shown as cancelled."""


@dataclass(frozen=True, slots=True)
class EntrantRow:
    player_id: uuid.UUID
    name: str
    seat: int
    joined_at: datetime
    game_id: uuid.UUID | None
    standing: dict[str, Any] | None  # frozen when the race finished
    place: int | None
    game_version: int | None  # the game as it is now (None before the start)
    game_snapshot: dict[str, Any] | None  # with the events after it, the game's state (domain.codec.restore)
    game_finished_at: datetime | None
    game_tail: list[tuple[str, dict[str, Any]]]  # the events after the snapshot (none before the start)
    bot: bool = False  # the player is a bot account
    rating_before: float | None = None  # a rated entrant's rating (mu) before and after the race
    rating_after: float | None = None


@dataclass(frozen=True, slots=True)
class RaceRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal: dict[str, Any]
    deck: list[str]
    max_entrants: int
    time_limit_seconds: int | None
    status: str
    version: int
    created_at: datetime
    started_at: datetime | None
    ends_at: datetime | None
    finished_at: datetime | None
    entrants: tuple[EntrantRow, ...]
    cancelled_reason: str | None = None  # why a cancelled race ended, in words
    rated: bool = False  # finishing it rates its entrants (service.ratings)
    creator_name: str = ""
    creator_bot: bool = False

    @property
    def games_ended(self) -> bool:
        """Every entrant's game has ended (False before the start)."""
        return self.status != OPEN and all(e.game_finished_at is not None for e in self.entrants)


@dataclass(frozen=True, slots=True)
class DealtGame:
    """A game the start deals one entrant: its row and first event (``store.insert_game``)."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    deal: dict[str, Any]
    status: str
    snapshot: dict[str, Any]
    events: list[NewEvent]


@dataclass(frozen=True, slots=True)
class Result:
    """What settling writes for one entrant: the frozen standing and the place (None: unranked)."""

    player_id: uuid.UUID
    standing: dict[str, Any]
    place: int | None


@dataclass(frozen=True, slots=True)
class Ending:
    """When a race finished, and where its entrants' logs are cut (None: they ended before it, whole)."""

    finished_at: datetime
    cutoff: datetime | None


@dataclass(frozen=True, slots=True)
class NewRaceRow:
    """A race to insert, open, with its creator as the first entrant."""

    race_id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal: dict[str, Any]
    deck: list[str]
    max_entrants: int
    time_limit_seconds: int | None
    now: datetime
    proof: dict[str, Any] | None = None  # a secret deal's, kept unshown
    fingerprint: str | None = None  # its deck's (service.deals.live_decks)
    rated: bool = False


class RaceRating(Protocol):
    """What a rated race's finish also does, in its transaction (service.ratings.Ratings: the
    entrants' ratings); the races use case calls it on the finish's connection."""

    async def rate_race(
        self, conn: AsyncConnection[Any], race: RaceRow, results: Sequence[Result], finished_at: datetime
    ) -> object: ...
