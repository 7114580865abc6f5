"""A race on the wire: its view (the deal as far as it may be shown, the entrants' figures), the
lobby of open races and a player's record, as msgspec Structs (camelCase on the wire).
service.races.views is the one place that builds them from a race's rows; service.http.schemas
names them for the HTTP layer and the OpenAPI document, and the controllers and the race stream
encode them as they are."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Union
from uuid import UUID

from msgspec import UNSET, Meta, UnsetType

from ..wire import Body, PlayerRef, RulesetRef, Seed


class RaceSeedDeal(Body, tag_field="source", tag="seed", omit_defaults=True):
    """A race dealt by seed."""

    seed: Annotated[
        Seed, Meta(description="only once the race has finished and every game of it has ended")
    ] | UnsetType = UNSET


class RaceDeckDeal(Body, tag_field="source", tag="deck"):
    """A race dealt from an explicit deck (never echoed)."""


class RacePoolDeal(Body, tag_field="source", tag="pool", omit_defaults=True):
    """A race dealt from the ruleset's verified pool."""

    pool: Annotated[
        int, Meta(ge=1, description="only once the race has finished and every game of it has ended")
    ] | UnsetType = UNSET


class RaceSecretDeal(Body, tag_field="source", tag="secret"):
    """A race created without a deal: a fresh deck derived from the server's secret and proven
    winnable by the solver before the race was created; in no pool, and never named."""


# A race's deal, tagged by ``source``: while the race runs only the source (a seed or pool number
# would give the deck away through the documented shuffle).
RaceDeal = Union[RaceSeedDeal, RaceDeckDeal, RacePoolDeal, RaceSecretDeal]  # noqa: UP007 (see Body)


class RaceEntrant(Body):
    player: PlayerRef
    joined_at: datetime
    game: Annotated[UUID, Meta(description="the entrant's game, dealt at the start")] | None
    status: Annotated[
        Literal["playing", "won", "stalled", "resigned"], Meta(description="the entrant's game's status")
    ] | None
    cards_on_foundations: int
    move_count: int
    finished_at: Annotated[datetime, Meta(description="when the entrant's game ended")] | None
    place: Annotated[
        int,
        Meta(description="live while the race runs; final once it has finished, and then only for a verified log"),
    ] | None
    assisted: Annotated[bool, Meta(description="the entrant asked the solver for a hint")]
    verified: Annotated[
        bool, Meta(description="once the race has finished: whether the stored log replayed through the rules")
    ] | None
    rating_before: Annotated[
        int, Meta(description="a rated race, once finished: the entrant's rating in its ruleset before it; null for "
                  "an entrant it did not rate (no verified place) and in an unrated race")
    ] | None = None
    rating_after: Annotated[int, Meta(description="the same, after the race")] | None = None


class RaceView(Body):
    id: UUID
    creator: PlayerRef
    status: Annotated[
        Literal["open", "running", "finished", "cancelled"],
        Meta(description="cancelled: ended before it started (its creator deleted their account and nobody else had "
             "entered); then cancelledReason says why"),
    ]
    ruleset: RulesetRef
    deal: Annotated[
        RaceDeal,
        Meta(description="the deal source; its seed or pool number only once the race has finished and every game "
             "of it has ended"),
    ]
    max_entrants: int
    time_limit_seconds: int | None
    created_at: datetime
    started_at: datetime | None
    ends_at: Annotated[datetime, Meta(description="the start plus the time limit")] | None
    finished_at: datetime | None
    entrants: Annotated[list[RaceEntrant], Meta(description="by place once started (then in the order they joined)")]
    cancelled_reason: Annotated[
        str, Meta(description="why a race that never started was ended, in words; null otherwise")
    ] | None = None
    rated: Annotated[bool, Meta(description="finishing the race rates its entrants (their ratings)")] = False


class RaceRecord(Body):
    played: Annotated[int, Meta(description="finished races the player was dealt a game in")]
    won: Annotated[int, Meta(description="of those, the races the player placed first in")]


class OpenRace(Body):
    id: UUID
    creator: PlayerRef
    ruleset: RulesetRef
    deal: Annotated[
        RaceDeal, Meta(description="the deal source only ({'source': 'seed'}, ...): never a seed or pool number")
    ]
    max_entrants: int
    entrants: Annotated[int, Meta(description="players in it so far, the creator included")]
    time_limit_seconds: int | None
    created_at: datetime
    rated: Annotated[bool, Meta(description="finishing the race rates its entrants (their ratings)")] = False


class OpenRaces(Body):
    items: Annotated[list[OpenRace], Meta(description="open races, newest first")]
    next: Annotated[
        str, Meta(description="pass as ?cursor= for the next (older) page; null on the last page")
    ] | None
