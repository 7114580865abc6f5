"""A tournament on the wire: its view with the standings and the list of tournaments, as msgspec
Structs (camelCase on the wire). service.tournaments.views is the one place that builds them from a
tournament's rows; service.http.schemas names them for the HTTP layer and the OpenAPI document, and
the controllers and the tournament stream encode them as they are."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta

from ..wire import Body, PlayerRef, RulesetRef


class TournamentStanding(Body):
    """An entrant's figures: live while the tournament runs, replay-verified once it has finished."""

    player: PlayerRef
    place: Annotated[int, Meta(description="by deals won, then fewer seconds of the won games, then fewer moves; "
                               "null when unplaced (a log that does not replay through the rules)")] | None
    deals_played: Annotated[int, Meta(description="deals dealt to the entrant so far")]
    deals_won: int
    won_seconds: Annotated[float, Meta(description="the seconds of the won games together (deal to winning move)")]
    move_count: Annotated[int, Meta(description="moves over every game dealt (an undo and the move it took back "
                                    "both count)")]
    playing: Annotated[bool, Meta(description="a game of the entrant is in play now")]
    verified: Annotated[bool, Meta(description="once finished: every log of the entrant replayed through the "
                                   "rules; null while live")] | None
    games: Annotated[list[UUID], Meta(description="the entrant's games in deal order, once the tournament has "
                                      "finished (null before: they are private to their player)")] | None


class TournamentSummary(Body):
    """A tournament without its standings, as ``GET /tournaments`` lists it."""

    id: UUID
    creator: PlayerRef
    status: Annotated[
        Literal["preparing", "upcoming", "running", "finished"],
        Meta(description="preparing while its deals are proven winnable, upcoming until startsAt, running until "
             "endsAt or until every entrant has finished every deal, then finished"),
    ]
    ruleset: RulesetRef
    deals: int
    starts_at: datetime
    minutes: int
    ends_at: datetime
    rated: bool
    created_at: datetime
    prepared_at: datetime | None
    finished_at: datetime | None
    entrants: Annotated[int, Meta(description="how many entered")]


class TournamentView(TournamentSummary):
    standings: Annotated[list[TournamentStanding], Meta(description="best first")]


class TournamentList(Body):
    items: Annotated[list[TournamentSummary], Meta(description="the tournaments, newest first")]
    next: Annotated[
        str, Meta(description="the cursor of the next page (pass it as ?cursor=, with the same status); null on "
                  "the last page")
    ] | None
