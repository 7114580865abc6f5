"""The project's Structs as the OpenAPI document states them: ``refine`` edits their components in
the finished document, by component name.

Request bodies (``service.http.schemas.RequestBody``) get ``additionalProperties: false`` (msgspec
refuses unknown fields); a tagged Struct (a move, an event, a deal source) gets its tag as a
required ``const`` with that value as its default (a generated ``Draw()`` needs no arguments);
each property is tidied as generators read it best (``_tidy``); ``REFINEMENTS`` state what a
Struct's types cannot (the foundations a map by suit, a deck's 52 distinct cards). Litestar builds
the Structs' schemas itself: nothing here imports its private modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar.openapi.spec import OpenAPI, OpenAPIFormat, OpenAPIType, Reference, Schema
from litestar.typing import FieldDefinition

from ..schemas import (
    CARD_CODE,
    DEAL_REQUESTS,
    RACE_DEAL_REQUESTS,
    Body,
    DealRequest,
    Foundations,
    NewGameRequest,
    NewPlayerRequest,
    NewRaceRequest,
    NewTokenRequest,
    RaceDealRequest,
    RequestBody,
)
from ..schemas.tournaments import NewTournamentRequest
from ..schemas.watch import UUID_PATTERN, WatchRequest
from .patterns import SUITS


def _player(schema: Schema, _: Any) -> None:
    schema.description = (
        "1-40 characters with at least one visible one and no control or format characters; runs of "
        "white space are folded into one space"
    )


def _token(schema: Schema, _: Any) -> None:
    scopes = (schema.properties or {}).get("scopes")
    if isinstance(scopes, Schema):
        scopes.unique_items = True  # each scope once (msgspec's Meta cannot say it)
    schema.description = "A token for one client (a phone, a bot, the web table): its name, scopes and expiry."


def _game(schema: Schema, _: Any) -> None:
    schema.description = (
        "Both fields may be left out (or null): the ruleset defaults to open-runs, the deal to the ruleset's "
        "default deal (a pool deal for open-runs, a random seed for the others)."
    )


def _one_of(schema: Schema, creator: Any, requests: dict[str, type[RequestBody]]) -> None:
    """A parsed deal request on the wire: one of these objects, tagged by ``source``
    (service.http.controllers.common)."""
    schema.properties = schema.required = schema.type = schema.additional_properties = None
    schema.one_of = [creator.for_field_definition(FieldDefinition.from_annotation(kind)) for kind in requests.values()]


def _deal(schema: Schema, creator: Any) -> None:
    _one_of(schema, creator, DEAL_REQUESTS)
    schema.description = (
        "A deal source, tagged like the game's deal: {\"source\": \"seed\", \"seed\": N}, {\"source\": \"pool\", "
        "\"pool\": N}, {\"source\": \"daily\", \"date\": \"YYYY-MM-DD\" or \"today\"} (open-runs only, from today back "
        "366 days), {\"source\": \"deck\", \"deck\": [52 codes]} (each card once) or {\"source\": \"lesson\", "
        "\"lesson\": id} (classic only, the default for a lesson)."
    )


def _race(schema: Schema, _: Any) -> None:
    schema.description = (
        "maxEntrants is required; the ruleset defaults to open-runs; without a deal the race gets a secret deal: a "
        "deck nobody knows in advance, proven winnable before the race is made, shown as {\"source\": \"secret\"} "
        "(a creator who names a seed, a pool deal or a deck knows the cards)."
    )


def _race_deal(schema: Schema, creator: Any) -> None:
    _one_of(schema, creator, RACE_DEAL_REQUESTS)
    schema.description = (
        "A deal source, tagged like the race's deal: {\"source\": \"seed\", \"seed\": N}, {\"source\": \"pool\", "
        "\"pool\": N}, {\"source\": \"deck\", \"deck\": [52 codes]} or {\"source\": \"secret\"} (one nobody knows in "
        "advance, as when the deal is left out); a race takes no daily or lesson deal."
    )


def _deck(schema: Schema, _: Any) -> None:
    """What the domain checks of an explicit deck (domain.deal.parse_deck)."""
    assert schema.properties is not None
    deck = schema.properties["deck"]
    assert isinstance(deck, Schema)
    assert isinstance(deck.items, Schema)
    deck.items.pattern = CARD_CODE
    deck.min_items = deck.max_items = 52
    deck.unique_items = True


def _tournament(schema: Schema, _: Any) -> None:
    """The bounds of ``deals`` and ``minutes``, documented for clients and generators; the service
    checks them itself, to refuse each with its own code (service.tournaments)."""
    from ...tournaments.tournaments import DEALS, MINUTES

    assert schema.properties is not None
    for name, (low, high) in (("deals", DEALS), ("minutes", MINUTES)):
        field = schema.properties[name]
        assert isinstance(field, Schema)
        field.minimum, field.maximum = low, high


def _foundations(schema: Schema, _: Any) -> None:
    """A map by suit, not four properties: openapi-python-client names a property ``D`` ``d``, the
    variable its parser reads the whole object into, and crashes on every game view."""
    schema.properties = schema.required = None
    schema.type = OpenAPIType.OBJECT
    schema.property_names = Schema(type=OpenAPIType.STRING, enum=SUITS)
    schema.additional_properties = Schema(
        type=OpenAPIType.ARRAY,
        items=Schema(type=OpenAPIType.STRING, pattern=CARD_CODE),
        description="that suit's foundation, bottom to top",
    )
    schema.min_properties = schema.max_properties = len(SUITS)
    schema.description = (
        "The four foundations, one per suit (S, H, D, C: all four are always there), each bottom to top."
    )


def _watch(schema: Schema, _: Any) -> None:
    """``after``: game ids to versions (a map's key and value types are lost on the way)."""
    assert schema.properties is not None
    after = schema.properties["after"]
    assert isinstance(after, Schema)
    after.property_names = Schema(type=OpenAPIType.STRING, pattern=UUID_PATTERN)
    after.additional_properties = Schema(type=OpenAPIType.INTEGER, minimum=0, maximum=2**31 - 1)
    schema.required = None
    schema.description = (
        "At least one game or player id, at most 300 distinct ids in all (an id given twice counts once); "
        "after: a game id -> the version to resume that game after."
    )


REFINEMENTS: dict[type[Any], Callable[[Schema, Any], None]] = {
    NewPlayerRequest: _player,
    NewTokenRequest: _token,
    NewGameRequest: _game,
    DealRequest: _deal,
    NewRaceRequest: _race,
    RaceDealRequest: _race_deal,
    DEAL_REQUESTS["deck"]: _deck,
    Foundations: _foundations,
    WatchRequest: _watch,
    NewTournamentRequest: _tournament,
}
ONE_OF: dict[type[Any], dict[str, type[RequestBody]]] = {
    DealRequest: DEAL_REQUESTS, RaceDealRequest: RACE_DEAL_REQUESTS,
}


def component_name(kind: type[Any]) -> str:
    """A Struct's component in the document: its class name, or the name it is published under
    (``__schema_name__``, a request type renamed in Python: service.http.schemas.RequestBody)."""
    pinned = getattr(kind, "__schema_name__", None)
    return pinned if isinstance(pinned, str) else kind.__name__


def _structs() -> dict[str, type[msgspec.Struct]]:
    """The Structs ``refine`` edits, by component name (``component_name``; the names in
    service.http.schemas are unique): every ``Body`` and every refined Struct."""
    found: dict[str, type[msgspec.Struct]] = {}
    pending: list[type[Any]] = [Body, *REFINEMENTS]
    while pending:
        kind = pending.pop()
        if kind not in ONE_OF:
            found[component_name(kind)] = kind
        pending.extend(kind.__subclasses__())
    return found


def refine(document: OpenAPI) -> None:
    """The project's Structs as the contract states them: closed request bodies, tags as defaulted
    constants, each Struct's docstring as its description, tidy properties (``_tidy``), and
    ``REFINEMENTS``."""
    assert document.components is not None
    assert isinstance(document.components.schemas, dict)
    components = document.components.schemas
    for name, kind in _structs().items():
        schema = components.get(name)
        if schema is None:
            continue
        if issubclass(kind, RequestBody):
            schema.additional_properties = False
        info = msgspec.inspect.type_info(kind)
        assert isinstance(info, msgspec.inspect.StructType)
        for field in info.fields:
            if schema.properties and field.encode_name in schema.properties:
                schema.properties[field.encode_name] = _tidy(schema.properties[field.encode_name], field.type)
        if info.tag_field is not None and schema.properties:
            tag = schema.properties[info.tag_field]
            assert isinstance(tag, Schema)
            tag.default = info.tag
        if kind.__doc__ and schema.description is None:
            schema.description = " ".join(kind.__doc__.split())
        if kind in REFINEMENTS:
            REFINEMENTS[kind](schema, None)


def _format(kind: Any) -> str | None:
    while isinstance(kind, msgspec.inspect.Metadata):
        if kind.extra_json_schema and "format" in kind.extra_json_schema:
            return str(kind.extra_json_schema["format"])
        kind = kind.type
    return None


def _set_fields(schema: Schema) -> list[str]:
    return [name for name, value in vars(schema).items() if value is not None]


def _unwrap(kind: Any) -> Any:
    """The type under msgspec's Meta, and under an optional (X | None, X | UNSET)."""
    while True:
        if isinstance(kind, msgspec.inspect.Metadata):
            kind = kind.type
        elif isinstance(kind, msgspec.inspect.UnionType):
            others = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
            if len(others) != 1:
                return kind
            kind = others[0]
        else:
            return kind


def _tidy(schema: Schema | Reference, kind: Any) -> Schema | Reference:
    """A property as generators read it best: an optional field (``X | UNSET``) is X itself, not a
    one-branch ``oneOf``; a reference with a description is a ``$ref`` beside it, not an ``allOf`` of
    one; an optional ``Literal`` is an enum or null; a list's items keep their pattern (Litestar drops
    it: ``list[CardCode]``)."""
    if isinstance(schema, Schema) and schema.all_of is not None and len(schema.all_of) == 1:
        (only,) = schema.all_of
        if isinstance(only, Reference) and set(_set_fields(schema)) <= {"all_of", "description"}:
            only.description = schema.description  # Litestar rewrites the path of its own Reference
            return only
    if isinstance(schema, Schema) and schema.one_of is not None and len(schema.one_of) == 1:
        (only,) = schema.one_of
        schema.one_of = None
        if isinstance(only, Reference):  # a $ref with its description beside it (OpenAPI 3.1)
            only.description = schema.description
            return only
        for name, value in vars(only).items():
            if value is not None and getattr(schema, name) is None:
                setattr(schema, name, value)
    if isinstance(schema, Schema) and schema.enum is not None and None in schema.enum and isinstance(schema.type, list):
        # Literal[...] | None: an enum or null, as two branches (in one, generators make a class per value).
        values = [value for value in schema.enum if value is not None]
        kinds = [k for k in schema.type if k != OpenAPIType.NULL]
        schema.one_of = [
            Schema(type=kinds[0] if len(kinds) == 1 else kinds, enum=values), Schema(type=OpenAPIType.NULL)
        ]
        schema.enum = schema.type = None
    if isinstance(schema, Schema) and schema.format is None and (written := _format(kind)) is not None:
        schema.format = OpenAPIFormat(written)  # msgspec's Meta(extra_json_schema={"format": ...}); Litestar drops it
    target = _unwrap(kind)
    if isinstance(target, msgspec.inspect.ListType) and isinstance(schema, Schema) and isinstance(schema.items, Schema):
        item = _unwrap(target.item_type)
        if isinstance(item, msgspec.inspect.StrType) and item.pattern and schema.items.pattern is None:
            schema.items.pattern = item.pattern
        schema.items = _tidy(schema.items, target.item_type)
    return schema
