"""Deals: the deal requests (tagged by source), the pools and the daily deal (where a game's cards came from and
how a pool was made are the deals feature's Structs, service.deals.wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from msgspec import Meta

from ...deals.wire import PoolSummary
from .common import Body, CardCode, DayText, LessonId, RequestBody, RulesetRef, Seed


class SeedDealRequest(RequestBody, tag_field="source", tag="seed"):
    """A deal by seed: the documented shuffle of that seed, the same cards on every server and in every client."""

    seed: Seed


class PoolDealRequest(RequestBody, tag_field="source", tag="pool"):
    """A deal of the ruleset's solver-verified pool."""

    pool: Annotated[int, Meta(ge=1, description="1 .. the pool's size (GET /deals/pool)")]


class DailyDealRequest(RequestBody, tag_field="source", tag="daily"):
    """The shared deal of a UTC date."""

    date: Annotated[
        str, Meta(pattern="^(?:today|[0-9]{4}-[0-9]{2}-[0-9]{2})$", description="'today' or a UTC date YYYY-MM-DD")
    ]


class DeckDealRequest(RequestBody, tag_field="source", tag="deck"):
    """An explicit deck: the 52 cards in deal order (the 13 reserve cards bottom to top, the foundation card, the
    4 tableau cards, then the 34 stock cards in draw order)."""

    # The domain checks the codes, the count and that no card is there twice, with its own words
    # ("deck[51]: AS is already at deck[0]"); service.http.openapi states those rules in the document.
    deck: Annotated[list[str], Meta(description="the 52 card codes in deal order, each card once")]


class LessonDealRequest(RequestBody, tag_field="source", tag="lesson"):
    """A prepared lesson's deck (GET /lessons), played under its ruleset (classic)."""

    lesson: LessonId


class SecretDealRequest(RequestBody, tag_field="source", tag="secret"):
    """A race's fresh deal nobody knows in advance (the same as leaving the deal out)."""


DEAL_REQUESTS: dict[str, type[RequestBody]] = {
    "seed": SeedDealRequest,
    "pool": PoolDealRequest,
    "daily": DailyDealRequest,
    "deck": DeckDealRequest,
    "lesson": LessonDealRequest,
}
"""A game's deal requests by their ``source``."""


# A race's deal: one a game could be dealt by too (not a daily's or a lesson's), or none.
RACE_DEAL_REQUESTS: dict[str, type[RequestBody]] = {
    **{name: DEAL_REQUESTS[name] for name in ("seed", "pool", "deck")}, "secret": SecretDealRequest,
}


class DealRequest(RequestBody):
    """A parsed deal request, as the service layer takes it: at most one field is set.

    On the wire (and in the OpenAPI document) it is one of the objects above, tagged by ``source``
    (service.http.controllers.common parses them; service.http.openapi documents the union under this name).
    """

    seed: Seed | None = None
    deck: list[CardCode] | None = None
    pool: int | None = None
    daily: str | None = None
    lesson: str | None = None


class RaceDealRequest(RequestBody):
    """A parsed race deal request: at most one of seed, pool or deck is set (one of the tagged
    objects of ``RACE_DEAL_REQUESTS`` on the wire; service.http.openapi documents the union)."""

    seed: Seed | None = None
    deck: list[CardCode] | None = None
    pool: int | None = None


class Pools(Body):
    pools: list[PoolSummary]


class PoolDealView(Body):
    pool: int
    ruleset: RulesetRef
    verified: bool
    line_length: int
    plays: Annotated[int, Meta(description="games started on this pool deal")]
    wins: Annotated[int, Meta(description="of those, the games won (assisted or not)")]


class DailyDeal(Body):
    """A date's shared deal. Derived from the date and the server's secret: it is in no pool,
    and nothing here (or anywhere) names its seed; its deck shows only as it is played."""

    date: DayText
    ruleset: Annotated[
        RulesetRef, Meta(description="the ruleset the deal is played under (always open-runs) and the version of it "
                         "the deal's games are dealt under")
    ]
    verified: Annotated[
        bool,
        Meta(description="always true: a daily deal is served only once the solver has won it and its winning line "
             "has replayed to a win through the rules"),
    ]
    line_length: Annotated[int, Meta(description="moves in the solver's winning line (the line is never shown)")]
    verified_at: datetime
    closes_at: Annotated[
        datetime,
        Meta(description="the end of the date (UTC): games dealt from then on are practice, finished games of "
             "this deal show their hidden cards, and the leaderboard's ranks are final"),
    ]
    plays: Annotated[int, Meta(description="games started on this date's daily deal (practice games too)")]
    wins: Annotated[int, Meta(description="of those, the games won (assisted or not)")]
