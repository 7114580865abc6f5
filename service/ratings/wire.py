"""Ratings on the wire: a player's ratings, their history in a ruleset and a ruleset's rating list,
as msgspec Structs (camelCase on the wire). service.ratings.ratings builds them from the rating
rows; service.http.schemas names them for the HTTP layer and the OpenAPI document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from uuid import UUID

from msgspec import Meta

from ..wire import Body, PlayerRef, RulesetId

NEXT = Annotated[str, Meta(description="the cursor of the next page (pass it as ?cursor=); null on the last page")]


class RatingView(Body):
    ruleset: RulesetId
    rating: Annotated[int, Meta(description="the rating (a new player's is 1500)")]
    deviation: Annotated[int, Meta(description="how uncertain it is (a new player's is 500)")]
    provisional: Annotated[bool, Meta(description="the deviation is still above 400: too few races to trust it")]
    races: Annotated[int, Meta(description="rated races it comes from")]


class PlayerRatings(Body):
    ratings: Annotated[list[RatingView], Meta(description="one per ruleset the player was rated in, by ruleset")]


class RatingPoint(Body):
    race: Annotated[UUID, Meta(description="the rated race (a tournament's id when tournament is true)")]
    rated_at: Annotated[datetime, Meta(description="when the race finished")]
    place: Annotated[int, Meta(description="the player's verified place")]
    entrants: Annotated[int, Meta(description="the entrants the race rated (those with a verified place)")]
    rating_before: int
    rating_after: int
    deviation_after: int
    tournament: Annotated[bool, Meta(description="the point is a rated tournament's (GET /tournaments/{id}), "
                                     "its place from the final standings")] = False


class RatingHistory(Body):
    items: Annotated[list[RatingPoint], Meta(description="one point per rated race, newest first")]
    next: NEXT | None


class RatingListEntry(Body):
    player: PlayerRef
    rating: int
    deviation: int
    provisional: bool
    races: int


class RatingList(Body):
    items: Annotated[list[RatingListEntry], Meta(description="the rated players, best first")]
    next: NEXT | None
