"""What the wire Structs of every feature share: the base Struct, card codes, ids and references.

Each feature package owns the Structs of its replies (``service/games/wire.py``: a game's view,
its events and a move's reply; ``service/deals/wire.py``: where a game's cards came from;
``service/races/wire.py``, ``service/tournaments/wire.py``, ``service/challenges/wire.py``,
``service/ratings/wire.py``, ``service/stats/wire.py``, ``service/players/wire.py``,
``service/following/wire.py``, ``service/analysis/wire.py``) and the one function that turns its
results into them; ``service/http/schemas`` names them all for the HTTP layer and the OpenAPI
document. This module stands beneath every layer (it imports msgspec and the domain only), so
that any feature may build them; it holds ``RequestBody`` too, the base of the move requests a
game's Structs name.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta, Struct

from domain import MAX_SEED
from domain.lessons import BY_ID as LESSONS

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


class RulesetId(StrEnum):
    """The id of a hosted ruleset (GET /rulesets); each has versions of its own."""

    CLASSIC = "classic"
    DRAW_ONE = "draw-one"
    OPEN_RUNS = "open-runs"


# A new lesson of domain/lessons.py is a new member here too (checked below).
class LessonId(StrEnum):
    """A prepared lesson, by id (GET /lessons lists them)."""

    BASE_RANK = "base-rank"
    WRAPPING = "wrapping"
    RESERVE_REFILL = "reserve-refill"
    DRAW_THREE_STOCK = "draw-three-stock"


assert {lesson.value for lesson in LessonId} == set(LESSONS), (
    "LessonId names every lesson of domain/lessons.py"
)


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


_RULESET_IDS = {ruleset.value: ruleset for ruleset in RulesetId}


def ruleset_ref(ruleset_id: str, version: int) -> RulesetRef:
    """A ruleset version as every view names one (``RulesetId(...)`` costs half a microsecond more:
    every move's reply names its ruleset)."""
    return RulesetRef(_RULESET_IDS[ruleset_id], version)


class PlayerRef(Body):
    """A player as every view names one."""

    id: UUID
    name: Annotated[str, Meta(description="the player's name; a deleted player's is 'deleted player'")]
    bot: Annotated[bool, Meta(description="a bot account (registered with \"bot\": true)")]
