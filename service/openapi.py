"""What the OpenAPI document says about requests beyond what Litestar derives from the types.

The request Structs (service.schemas) stay loose on purpose: card codes, piles, deals and dates
are checked by the domain and service.deals, with their own messages ("'77' is not a card code:
..."). Left at that, the document would call requests valid that the server refuses with a 400
(a made-up card code, a draw with a card, two deal sources, an unknown field), and schema-driven
clients and fuzzers could not tell valid from invalid input. So the document states those rules
here, and ``tests/api/test_schema_fuzz.py`` checks that the server and the document agree in both
directions: whatever the document allows is never refused as malformed, whatever it rules out is
refused.

What no schema can say stays in the descriptions: a daily date must be within the offered
window, a pool number within the pool's size, a ruleset must have a pool, an idempotency key
must not be reused for another move, a player name needs a visible character.

* ``RequestSchemaPlugin``: request bodies (``service.schemas.RequestBody``) get
  ``additionalProperties: false`` (msgspec refuses unknown fields) and the refinements below;
* ``CARD_CODE`` ... ``VERSION_HEADER``: the patterns the controllers and the domain enforce,
  for parameters (``schema_extra`` on their ``Parameter``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin  # Litestar's own, for msgspec Structs
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.typing import FieldDefinition

from domain import ALL_RULESETS, MAX_SEED
from domain.piles import TARGETS

from domain.lessons import BY_ID as LESSONS

from .schemas import DealRequest, MoveRequest, NewGame, NewPlayer, NewRace, RaceDealRequest, RequestBody

CARD_CODE = "^[A2-9TJQK][SHDC]$"
DAILY_DATE = "^(?:today|[0-9]{4}-[0-9]{2}-[0-9]{2})$"
IF_MATCH = '^[ \\t]*(?:\\*|(?:W/)?"[0-9]{1,12}"|[0-9]{1,12})[ \\t]*$'
IDEMPOTENCY_KEY = "^[!-~]{1,255}$"
VERSION_HEADER = "^[ \\t]*[0-9]{1,10}[ \\t]*$"
RULESET_IDS = sorted({ruleset.id for ruleset in ALL_RULESETS})
SIMPLE_MOVES = ["draw", "recycle", "undo", "resign"]

NULL = Schema(type=OpenAPIType.NULL)


def _nullable(schema: Schema, description: str | None = None) -> Schema:
    return Schema(one_of=[schema, NULL], description=description)


def header(pattern: str, description: str) -> dict[str, Any]:
    """``schema_extra`` for an optional header: a string matching ``pattern`` (never null)."""
    return {"one_of": None, "type": OpenAPIType.STRING, "pattern": pattern, "description": description}


def _player(schema: Schema) -> None:
    schema.description = (
        "1-40 characters with at least one visible one and no control or format characters; runs of "
        "white space are folded into one space"
    )


def _game(schema: Schema) -> None:
    assert schema.properties is not None
    schema.properties["ruleset"] = _nullable(
        Schema(type=OpenAPIType.STRING, enum=RULESET_IDS), "a ruleset id; open-runs when left out or null"
    )


def _deal_sources() -> dict[str, Schema]:
    return {
        "seed": Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=MAX_SEED, description="0 .. 2^53 - 1"),
        "deck": Schema(
            type=OpenAPIType.ARRAY,
            items=Schema(type=OpenAPIType.STRING, pattern=CARD_CODE),
            min_items=52,
            max_items=52,
            unique_items=True,
            description="the 52 card codes in deal order (see API.md)",
        ),
        "pool": Schema(
            type=OpenAPIType.INTEGER, minimum=1, description="a deal of the ruleset's verified pool: 1 .. the pool's size"
        ),
        "daily": Schema(
            type=OpenAPIType.STRING,
            pattern=DAILY_DATE,
            description="'today' or a UTC date YYYY-MM-DD from today back to 366 days ago (open-runs only)",
        ),
        "lesson": Schema(  # races branch
            type=OpenAPIType.STRING, enum=list(LESSONS), description="a prepared lesson (GET /lessons; classic only)"
        ),
    }


def _deal(schema: Schema) -> None:
    _one_source(schema, _deal_sources())
    schema.description = (
        "At most one of seed, deck, pool, daily or lesson (null counts as left out); none: the ruleset's default "
        "deal (a pool deal for open-runs, a random seed for the others)."
    )


def _race_deal(schema: Schema) -> None:
    sources = _deal_sources()
    _one_source(schema, {name: sources[name] for name in ("seed", "deck", "pool")})
    schema.description = (
        "At most one of seed, deck or pool (null counts as left out); none: the ruleset's default deal, which "
        "nobody knows in advance (a pool deal for open-runs, a random seed for the others)."
    )


def _one_source(schema: Schema, sources: dict[str, Schema]) -> None:
    schema.properties = {name: _nullable(source, source.description) for name, source in sources.items()}
    # At most one source that is not null: one branch per source, and one for none (the ruleset's default).
    schema.one_of = [
        Schema(properties={name: NULL for name in sources}),
        *(
            Schema(
                required=[chosen],
                properties={name: (sources[name] if name == chosen else NULL) for name in sources},
            )
            for chosen in sources
        ),
    ]


def _move(schema: Schema) -> None:
    card = Schema(type=OpenAPIType.STRING, pattern=CARD_CODE, description="rank then suit, e.g. 'TD'")
    to = Schema(type=OpenAPIType.STRING, enum=list(TARGETS), description="'foundation' or 'tableau-1' .. 'tableau-4'")
    schema.properties = {
        "type": Schema(type=OpenAPIType.STRING, enum=[*SIMPLE_MOVES[:2], "move", *SIMPLE_MOVES[2:]]),
        "card": _nullable(card, "the card to move (type move only)"),
        "to": _nullable(to, "where to move it (type move only)"),
    }
    schema.one_of = [
        Schema(properties={"type": Schema(enum=SIMPLE_MOVES), "card": NULL, "to": NULL}),
        Schema(required=["card", "to"], properties={"type": Schema(const="move"), "card": card, "to": to}),
    ]


REFINEMENTS: dict[type[RequestBody], Callable[[Schema], None]] = {
    NewPlayer: _player,
    NewGame: _game,
    DealRequest: _deal,
    MoveRequest: _move,
    NewRace: _game,
    RaceDealRequest: _race_deal,
}


class RequestSchemaPlugin(StructSchemaPlugin):
    """Request bodies: closed to unknown fields, with the rules of ``REFINEMENTS``."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return super().is_plugin_supported_field(field_definition) and field_definition.is_subclass_of(RequestBody)

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        schema.additional_properties = False
        refine = REFINEMENTS.get(field_definition.type_)
        if refine is not None:
            refine(schema)
        return schema
