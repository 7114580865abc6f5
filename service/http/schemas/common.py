"""What every feature's schemas share: the base Structs, card codes, ids and the problem body."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal
from uuid import UUID

from msgspec import UNSET, Meta, Struct, UnsetType

from domain import MAX_SEED

CARD_CODE = "^[A2-9TJQK][SHDC]$"
Seed = Annotated[int, Meta(ge=0, le=MAX_SEED, description="0 .. 2^53 - 1")]
CardCode = Annotated[
    str, Meta(pattern=CARD_CODE, description="rank (A 2-9 T J Q K) then suit (S H D C), e.g. 'TD'", examples=["TD"])
]
Cards = Annotated[list[CardCode], Meta(description="card codes, bottom to top")]
Target = Literal["foundation", "tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Column = Literal["tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Pile = Literal["stock", "waste", "reserve", "foundation", "tableau-1", "tableau-2", "tableau-3", "tableau-4"]
Version = Annotated[int, Meta(ge=0, description="a game version: the number of events in its stream")]

DayText = Annotated[
    str,
    Meta(
        pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description="a UTC date, YYYY-MM-DD",
        extra_json_schema={"format": "date"},
    ),
]


class RulesetId(StrEnum):
    """The id of a hosted ruleset (GET /rulesets); each has versions of its own."""

    CLASSIC = "classic"
    DRAW_ONE = "draw-one"
    OPEN_RUNS = "open-runs"


class Body(Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=False):
    """Every body. The named unions of the feature modules stay ``typing.Union[...]`` (ruff UP007
    would write ``A | B``): Litestar's OpenAPI generation names a union by ``__qualname__``, which a
    ``types.UnionType`` does not have."""


class RequestBody(Body):
    """A request body: unknown fields are refused, and the OpenAPI document says so and states the
    rules the domain checks (service.http.openapi).

    A request type is named ``...Request`` in Python; one whose OpenAPI component had another name
    before (``NewGame``, ``Draw``, ``MoveCard``) keeps it through ``__schema_name__``, the attribute
    Litestar titles a schema by (service.http.openapi.structs.component_name): generated clients name their
    classes after the components."""


class RulesetRef(Body):
    id: RulesetId
    version: int


class PlayerRef(Body):
    """A player as every view names one."""

    id: UUID
    name: Annotated[str, Meta(description="the player's name; a deleted player's is 'deleted player'")]
    bot: Annotated[bool, Meta(description="a bot account (registered with \"bot\": true)")]


class Problem(Struct, omit_defaults=True):
    """RFC 9457 problem details, with a stable machine-readable ``code``; ``instance`` names the
    request (its ``X-Request-Id``) so that a report of the problem can be found in the logs."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str | None = None  # left out when there is no request id (omit_defaults)
    game: Annotated[
        str | None,
        Meta(description="the game the problem points to, where there is one (daily_already_played: the id of "
             "the player's game of that daily deal); left out otherwise"),
    ] = None


class Health(Body):
    status: str
    database: str


class Liveness(Body):
    status: str


class Readiness(Body):
    status: str
    database: str
    schema: Annotated[str, Meta(description="the migration revision the database is at: the newest this code knows, "
                                            "or a later release's while a rolling deploy replaces this one")]
    streams: str
    replica: Annotated[
        Literal["up", "behind", "down"],
        Meta(description="only with DATABASE_READ_URL: the read replica; 'behind' or 'down' sends its reads to "
                         "the primary, and the process stays ready"),
    ] | UnsetType = UNSET
