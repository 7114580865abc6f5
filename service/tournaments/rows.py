"""The tournaments feature's public records: a tournament as stored (``TournamentRow``), its
entrants, their games' figures, its statuses, and what its changes write (``NewTournamentRow``,
``DealtGame``, ``Final``).

Every other feature and the HTTP layer name a tournament by these, never by the tournament
store's module (service.tournaments.tournament_store is the feature's own: an import-linter
contract keeps it so).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from psycopg import AsyncConnection

from ..store.game_records import LogRow, NewEvent

PREPARING, UPCOMING, RUNNING, FINISHED = "preparing", "upcoming", "running", "finished"
STATUSES = (PREPARING, UPCOMING, RUNNING, FINISHED)


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    creator_name: str
    creator_bot: bool
    ruleset: tuple[str, int]
    deal_count: int
    starts_at: datetime
    minutes: int
    ends_at: datetime
    rated: bool
    version: int
    created_at: datetime
    prepared_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class EntrantRow:
    player_id: uuid.UUID
    name: str
    bot: bool
    joined_at: datetime
    standing: dict[str, Any] | None  # frozen at the finish
    place: int | None


@dataclass(frozen=True, slots=True)
class GameFigures:
    """One entrant's game of one deal, as its row shows it now."""

    player_id: uuid.UUID
    number: int
    game_id: uuid.UUID
    status: str
    move_count: int
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewTournamentRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal_count: int
    starts_at: datetime
    minutes: int
    rated: bool
    now: datetime


@dataclass(frozen=True, slots=True)
class DealtGame:
    """The game to deal an entrant for their next deal (``store.insert_game``)."""

    game_id: uuid.UUID
    deal: dict[str, Any]
    status: str
    snapshot: dict[str, Any]
    events: list[NewEvent]


@dataclass(frozen=True, slots=True)
class Final:
    """What the finish writes for one entrant: the frozen tally and the place (None: unplaced)."""

    player_id: uuid.UUID
    standing: dict[str, Any]
    place: int | None


Logs = dict[uuid.UUID, list[tuple[int, list[LogRow]]]]
"""Each entrant's games as (deal number, stored log cut at the end), by player."""


def over(tournament: TournamentRow, now: datetime) -> bool:
    return tournament.finished_at is not None or now >= tournament.ends_at


class TournamentRating(Protocol):
    """What a rated tournament's finish also does, in its transaction (service.ratings.Ratings: its
    verified entrants rated by their places); the tournaments use case calls it on the finish's
    connection."""

    async def rate_tournament(
        self, conn: AsyncConnection[Any], tournament_id: uuid.UUID, ruleset_id: str,
        placed: Sequence[tuple[uuid.UUID, int]], finished_at: datetime,
    ) -> object: ...
