"""What every feature's schemas share: the base Structs, card codes, ids (from service.wire, beneath every
layer, so that the features build them too), request bodies and the problem body."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from ...wire import (
    CARD_CODE,
    Body,
    CardCode,
    Cards,
    Column,
    LessonId,
    Pile,
    PlayerRef,
    RequestBody,
    RulesetId,
    RulesetRef,
    Seed,
    Target,
    Version,
)

__all__ = [  # with the shared ones of service.wire: the feature modules here take them from this one
    "CARD_CODE",
    "Body",
    "CardCode",
    "Cards",
    "Column",
    "DayText",
    "Health",
    "LessonId",
    "Liveness",
    "Pile",
    "PlayerRef",
    "Problem",
    "Readiness",
    "RequestBody",
    "RulesetId",
    "RulesetRef",
    "Seed",
    "Target",
    "Version",
]

DayText = Annotated[
    str,
    Meta(
        pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description="a UTC date, YYYY-MM-DD",
        extra_json_schema={"format": "date"},
    ),
]


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
