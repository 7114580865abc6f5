"""What the OpenAPI document says beyond what Litestar derives from the types, for validators and
code generators alike.

The document is generated from service.http.schemas; this module adds what Litestar does not:

* ``refine`` (on the finished document, by component name): request bodies
  (``service.http.schemas.RequestBody``) get ``additionalProperties: false`` (msgspec refuses unknown
  fields); a tagged Struct (a move, an event, a deal source) gets its tag as a required ``const``
  with that value as its default (a generated ``Draw()`` needs no arguments); ``REFINEMENTS`` state
  what a Struct's types cannot (the foundations a map by suit). Litestar builds the Structs'
  schemas itself: nothing here imports its private modules.
* ``DealUnionPlugin``: a deal request is one of four (a race's: three) one-field objects, a
  ``oneOf`` component of its own.
* ``TaggedUnionPlugin``: each union of tagged Structs in ``TAGGED_UNIONS`` (moves, events, deal
  sources) becomes one named component, a ``oneOf`` with a ``discriminator`` and its ``mapping``.
  Every generator then emits one class per branch, and the branches cannot overlap: each has its
  own required constant.
* ``complete`` (on the finished document): response headers with their schemas (``ETag``,
  ``Location``, ``Idempotent-Replayed`` as each operation declares them with ``response_headers``;
  ``Retry-After`` on every 429 and 503, ``WWW-Authenticate`` on 401); the bodies that are not JSON
  (``application/x-ndjson``; ``text/event-stream`` as text, and message by message as
  ``StreamMessage``); the other media types of ``ALSO`` (ndjson beside the JSON of ``listEvents``);
  parameters that are never null.
* ``CARD_CODE`` ... ``VERSION_HEADER``: the patterns the controllers and the domain enforce, for
  parameters (``schema_extra`` on their ``Parameter``).

``tests/api/test_schema_fuzz.py`` checks that the server and the document agree in both
directions (whatever the document allows is never refused as malformed, whatever it rules out is
refused); ``tests/clients`` generates clients from it. What no schema can say stays in the
descriptions: a daily date must be within the offered window, a pool number within the pool's
size, an idempotency key must not be reused for another move, a player name needs a visible
character.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import msgspec
from litestar.datastructures import ResponseHeader
from litestar.openapi.spec import (
    Discriminator,
    OpenAPI,
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
)
from litestar.params import KwargDefinition
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from domain import ALL_RULESETS

from .problems import PROBLEM_JSON
from .schemas import (
    CARD_CODE,
    DEAL_REQUESTS,
    RACE_DEAL_REQUESTS,
    AnalysedMove,
    Body,
    DealRequest,
    DealSource,
    EventView,
    Foundations,
    MoveRequest,
    NewGameRequest,
    NewPlayerRequest,
    NewRaceRequest,
    NewTokenRequest,
    RaceDeal,
    RaceDealRequest,
    RequestBody,
    RevertedEvent,
)
from .versions import SERVED

DAILY_DATE = "^(?:today|[0-9]{4}-[0-9]{2}-[0-9]{2})$"
IF_MATCH = '^[ \\t]*(?:\\*|(?:W/)?"[0-9]{1,12}"|[0-9]{1,12})[ \\t]*$'
IDEMPOTENCY_KEY = "^[!-~]{1,255}$"
VERSION_HEADER = "^[ \\t]*[0-9]{1,10}[ \\t]*$"
ETAG = '^"[0-9]+(-hidden)?"$'
NDJSON = "application/x-ndjson"
EVENT_STREAM = "text/event-stream"
RULESET_IDS = sorted({ruleset.id for ruleset in ALL_RULESETS})
SUITS = ["S", "H", "D", "C"]
COMPONENTS = "#/components/schemas/"

TAGGED_UNIONS: dict[str, tuple[Any, str]] = {
    "MoveRequest": (
        MoveRequest,
        (
            "A move, tagged by `type`: draw, recycle, undo, resign, or move (a card and where to). Legal moves, "
            "hints and solver hints list moves in this form: any of them can be sent back as it is."
        ),
    ),
    "AnalysedMove": (
        AnalysedMove,
        (
            "A move of a game as its analysis names it, tagged by `type`: a move of `MoveRequest`, or `abandon`: "
            "the service ended the game after ABANDON_AFTER_DAYS without a move (its `GameAbandoned` event). "
            "No client sends `abandon`."
        ),
    ),
    "EventView": (
        EventView,
        (
            "One event of a game's log, tagged by `type`. While the game is in progress, fields that would reveal "
            "face-down cards are withheld."
        ),
    ),
    "DealSource": (
        DealSource,
        "Where a game's cards came from, tagged by `source`. A daily deal is never named by seed or pool number.",
    ),
    "RevertedEvent": (RevertedEvent, "An event of the move an undo took back, tagged by `type`."),
    "RaceDeal": (
        RaceDeal,
        (
            "A race's deal, tagged by `source`: seed, pool or deck when its creator named one, secret when the race "
            "was created without a deal (a deck nobody knows in advance, proven winnable, never named). A seed or "
            "pool number shows only once the race has finished and every game of it has ended: before, either would "
            "give the deck away through the documented shuffle."
        ),
    ),
}


def header(pattern: str, description: str) -> dict[str, Any]:
    """``schema_extra`` for an optional header: a string matching ``pattern`` (never null)."""
    return {"one_of": None, "type": OpenAPIType.STRING, "pattern": pattern, "description": description}


# ---------------------------------------------------------------- Structs


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
    """A parsed deal request on the wire: exactly one of these one-field objects (service.http.controllers.common)."""
    schema.properties = schema.required = schema.type = schema.additional_properties = None
    schema.one_of = [creator.for_field_definition(FieldDefinition.from_annotation(kind)) for kind in requests.values()]


def _deal(schema: Schema, creator: Any) -> None:
    _one_of(schema, creator, DEAL_REQUESTS)
    schema.description = (
        "Exactly one deal source: {\"seed\": N}, {\"pool\": N}, {\"daily\": \"YYYY-MM-DD\" or \"today\"} "
        "(open-runs only, from today back 366 days), {\"deck\": [52 codes]} (each card once) or "
        "{\"lesson\": id} (classic only, the default for a lesson)."
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
        "Exactly one deal source: {\"seed\": N}, {\"pool\": N} or {\"deck\": [52 codes]}; a race takes no "
        "daily or lesson deal. Leave the deal out for one nobody knows in advance."
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


REFINEMENTS: dict[type[Any], Callable[[Schema, Any], None]] = {
    NewPlayerRequest: _player,
    NewTokenRequest: _token,
    NewGameRequest: _game,
    DealRequest: _deal,
    NewRaceRequest: _race,
    RaceDealRequest: _race_deal,
    DEAL_REQUESTS["deck"]: _deck,
    Foundations: _foundations,
}
ONE_OF: dict[type[Any], dict[str, type[RequestBody]]] = {
    DealRequest: DEAL_REQUESTS, RaceDealRequest: RACE_DEAL_REQUESTS,
}


def component_name(kind: type[Any]) -> str:
    """A Struct's component in the document: its class name, or the name it is published under
    (``__schema_name__``, a request type renamed in Python: service.http.schemas.RequestBody)."""
    pinned = getattr(kind, "__schema_name__", None)
    return pinned if isinstance(pinned, str) else kind.__name__


def _pinned(field_definition: FieldDefinition) -> str | None:
    """The component name a Struct field must be keyed by, if Litestar's own (its class name) would differ."""
    kind = field_definition.type_
    if field_definition.is_union or not isinstance(kind, type) or not issubclass(kind, msgspec.Struct):
        return None
    name = component_name(kind)
    return None if name == kind.__name__ else name


class ComponentNamePlugin(OpenAPISchemaPlugin):
    """A Struct with a ``__schema_name__`` is the component of that name, as before it was renamed.

    Litestar keys a component by the class's ``__qualname__`` and titles it by ``__schema_name__``;
    this plugin hands Litestar's own Struct schema generation the same type keyed by its
    ``schema_component_key`` instead (a public ``KwargDefinition`` field), so the key and the title
    agree, and a generated client keeps its class names."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        name = _pinned(field_definition)
        kwargs = field_definition.kwarg_definition
        keyed = isinstance(kwargs, KwargDefinition) and kwargs.schema_component_key == name
        return name is not None and not keyed

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        name = _pinned(field_definition)
        key = FieldDefinition.from_annotation(
            field_definition.type_, kwarg_definition=KwargDefinition(schema_component_key=name)
        )
        reference: Reference = schema_creator.for_field_definition(key)  # Litestar's Struct schema, under ``name``
        return reference


class DealUnionPlugin(OpenAPISchemaPlugin):
    """A deal request (``DealRequest``, ``RaceDealRequest``) on the wire: one component, a ``oneOf``
    of its one-field objects, referenced by name (never spliced into another ``oneOf``).

    Litestar's own Struct schemas are left as it builds them; ``refine`` edits them in the finished
    document (this plugin and ``TaggedUnionPlugin`` use only the public plugin protocol and the
    schema creator they are handed)."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return not field_definition.is_union and field_definition.type_ in ONE_OF

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        registry = schema_creator.schema_registry
        schema = registry.get_schema_for_field_definition(field_definition)
        kind = field_definition.type_
        schema.title = kind.__name__
        REFINEMENTS[kind](schema, schema_creator)  # _one_of
        reference: Reference = registry.get_reference_for_field_definition(field_definition)
        return reference


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


class TaggedUnionPlugin(OpenAPISchemaPlugin):
    """A union of tagged Structs in ``TAGGED_UNIONS``: one component, a ``oneOf`` of the Structs
    with a ``discriminator`` on their tag field, mapping each tag to its Struct's component."""

    def __init__(self) -> None:
        self._names = {frozenset(get_args(union)): name for name, (union, _) in TAGGED_UNIONS.items()}

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return field_definition.is_union and frozenset(get_args(field_definition.annotation)) in self._names

    # Litestar's protocol says Schema; a Reference is what its own Struct plugin ends up giving too.
    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        name = self._names[frozenset(get_args(field_definition.annotation))]
        union, description = TAGGED_UNIONS[name]
        key = FieldDefinition.from_annotation(union, kwarg_definition=KwargDefinition(schema_component_key=name))
        registry = schema_creator.schema_registry
        reference: Reference | None = registry.get_reference_for_field_definition(key)
        if reference is not None:
            return reference
        schema = registry.get_schema_for_field_definition(key)
        members = get_args(union)
        tags: dict[str, str] = {}  # tag -> the member's component
        tag_fields: set[str] = set()
        for member in members:
            info = msgspec.inspect.type_info(member)
            assert isinstance(info, msgspec.inspect.StructType), f"{name}: {member} is not a Struct"
            assert info.tag_field is not None, f"{name}: {member} has no tag"
            tag_fields.add(info.tag_field)
            tags[str(info.tag)] = COMPONENTS + component_name(member)
        assert len(tag_fields) == 1, f"{name}: every member needs the same tag field"
        schema.title = name
        schema.one_of = [
            schema_creator.for_field_definition(FieldDefinition.from_annotation(member)) for member in members
        ]
        schema.discriminator = Discriminator(property_name=tag_fields.pop(), mapping=tags)
        schema.description = description
        reference = registry.get_reference_for_field_definition(key)
        assert reference is not None
        return reference




# ---------------------------------------------------------------- the whole document


def _header(schema: Schema, description: str, required: bool = True) -> OpenAPIHeader:
    return OpenAPIHeader(schema=schema, description=description, required=required)


HEADERS: dict[str, OpenAPIHeader] = {
    "ETag": _header(
        Schema(type=OpenAPIType.STRING, pattern=ETAG),
        'the game\'s version in quotes, e.g. "7": send it as If-Match; "7-hidden" while an ended game\'s face-down '
        "cards are still withheld (its view changes when they are shown)",
    ),
    "Location": _header(
        Schema(type=OpenAPIType.STRING), "the path of what was created, e.g. /games/{id} or /races/{id}"
    ),
    "Idempotent-Replayed": _header(
        Schema(type=OpenAPIType.STRING, enum=["true"]),
        '"true" when an Idempotency-Key returned the first result again (nothing was created or appended); absent '
        "otherwise",
        required=False,
    ),
    "Retry-After": _header(Schema(type=OpenAPIType.INTEGER, minimum=1), "whole seconds to wait before trying again"),
    "Link": _header(
        Schema(type=OpenAPIType.STRING),
        'only when a limit cut an ndjson export short: <the same path?after=N>; rel="next", the request that '
        "continues after the last line",
        required=False,
    ),
    "WWW-Authenticate": _header(Schema(type=OpenAPIType.STRING), 'Bearer realm="canfield"'),
}
API_VERSION_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
_API_VERSION = _header(
    Schema(type=OpenAPIType.STRING, pattern=API_VERSION_PATTERN),
    "the API version whose shapes this answer has (GET /versions lists them)",
)
_API_VERSION_PARAMETER = Parameter(
    name="Api-Version",
    param_in="header",
    required=False,
    schema=Schema(type=OpenAPIType.STRING, enum=[version.name for version in SERVED.all]),
    description=(
        "the API version whose shapes the request is written in and wants back (a date, YYYY-MM-DD; GET /versions "
        "lists them). Without it, the oldest version served. Set it once on a client, for every request."
    ),
)
_STATUS_HEADERS = {"304": ["ETag"], "401": ["WWW-Authenticate"], "429": ["Retry-After"], "503": ["Retry-After"]}
_IN_PROGRESS = _header(
    Schema(type=OpenAPIType.INTEGER, minimum=1),
    "with request_in_progress: whole seconds to wait before sending the request again",
    required=False,
)

_LINES = Schema(
    type=OpenAPIType.STRING,
    description="one event per line, each a JSON object as in EventView (#/components/schemas/EventView), oldest first",
)
_SHUTDOWN_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["detail"],
    properties={"detail": Schema(type=OpenAPIType.STRING, description="why the stream ends, in words")},
)
_ANALYSIS_DATA = Schema(
    type=OpenAPIType.OBJECT,
    required=["status", "progress"],
    properties={
        "status": Schema(type=OpenAPIType.STRING, enum=["queued", "running", "done", "failed"]),
        "progress": Reference(COMPONENTS + "AnalysisProgress"),
    },
    description="the game's analysis as it progresses: its status and the positions settled so far",
)
_RETRY = Schema(
    type=OpenAPIType.STRING,
    pattern="^[0-9]+$",
    description="with shutdown only: the milliseconds a client (EventSource) waits before it reconnects",
)
_STREAM_MESSAGE = Schema(
    type=OpenAPIType.OBJECT,
    title="StreamMessage",
    description="One Server-Sent Events message of a game's stream: `view` (the game view, first and after each "
    "change), `game-event` (an event as the log shows it), `analysis` (once a finished game's analysis has been "
    "asked for: its status and progress, at each change until it is done or failed), `end` (the final view) or "
    "`shutdown` (the server is stopping: the last message, with `retry` and without `id`); `id` is the game "
    "version (for `analysis`, the final one).",
    required=["event", "data"],
    properties={
        "event": Schema(type=OpenAPIType.STRING, enum=["view", "game-event", "analysis", "end", "shutdown"]),
        "id": Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"),
        "retry": _RETRY,
        "data": Schema(
            type=OpenAPIType.STRING,
            content_media_type="application/json",
            content_schema=Schema(
                any_of=[
                    Reference(COMPONENTS + "GameView"), Reference(COMPONENTS + "EventView"), _ANALYSIS_DATA,
                    _SHUTDOWN_DATA,
                ]
            ),
            description='JSON: a GameView for view and end, an EventView for game-event, {"status", "progress": '
            '{"done", "total"}} for analysis, {"detail"} for shutdown',
        ),
    },
)
_RACE_STREAM_MESSAGE = Schema(
    type=OpenAPIType.OBJECT,
    title="RaceStreamMessage",
    description="One Server-Sent Events message of a race's stream: `race` (the race view, first and after each "
    "change of standings), `end` (the final view) or `shutdown` (the server is stopping: the last message, "
    "with `retry` and without `id`); `id` grows with every change.",
    required=["event", "data"],
    properties={
        "event": Schema(type=OpenAPIType.STRING, enum=["race", "end", "shutdown"]),
        "id": Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"),
        "retry": _RETRY,
        "data": Schema(
            type=OpenAPIType.STRING,
            content_media_type="application/json",
            content_schema=Schema(any_of=[Reference(COMPONENTS + "RaceView"), _SHUTDOWN_DATA]),
            description='JSON: a RaceView for race and end, {"detail"} for shutdown',
        ),
    },
)
MESSAGES = {"StreamMessage": _STREAM_MESSAGE, "RaceStreamMessage": _RACE_STREAM_MESSAGE}


def _event_stream(message: str) -> Schema:
    """Read as a whole (as most generators do) the body is text; read message by message (as OpenAPI
    before 3.2 has an event stream's schema do), each message is a ``message``."""
    return Schema(
        any_of=[
            Schema(
                type=OpenAPIType.STRING,
                description="the stream as text: `event:`, `id:`, `data:` and `retry:` lines, `: keep-alive` comments",
            ),
            Reference(COMPONENTS + message),
        ],
    )


_GAME_LINES = Schema(
    type=OpenAPIType.STRING,
    description='one JSON object per line, oldest game first: {"type": "game", "game": <GameView>, "events": '
    '[<EventView>, ...]} for each game (#/components/schemas/GameView, #/components/schemas/EventView); when max '
    'cut the export short, a last line {"type": "next", "after": <cursor>, "href": <the request that continues>}',
)
# Media types an operation also answers with (by Accept), after its own: a generator that reads one
# media type per status takes the first it knows (openapi-python-client knows JSON and text/*, not
# ndjson, so it reads exportEvents as text).
_ACCOUNT_LINES = Schema(
    type=OpenAPIType.STRING,
    description='one JSON object per line, each with a "type": "player" first, then each "token", each "game" '
    '({"game": <GameView>, "events": [<EventView>, ...]}), each "stats", "race-entry" and "daily-entry" row',
)
ALSO: dict[str, dict[str, Schema]] = {
    "listEvents": {NDJSON: _LINES},
    "exportEvents": {"text/plain": _LINES},
    "exportPlayerGames": {"text/plain": _GAME_LINES},
    "exportMe": {"text/plain": _ACCOUNT_LINES},
}
# The schema of each non-JSON body (Litestar gives them none).
BODIES = {NDJSON: _LINES, EVENT_STREAM: _event_stream("StreamMessage")}
# ... unless the operation's own is given here.
OWN_BODIES = {
    "streamRace": {EVENT_STREAM: _event_stream("RaceStreamMessage")},
    "exportPlayerGames": {NDJSON: _GAME_LINES},
    "exportMe": {NDJSON: _ACCOUNT_LINES},
}


def _not_null(schema: Schema) -> None:
    """A parameter is text in a URL or a header, never JSON's null: an optional one is left out.
    (Litestar documents ``X | None = None`` as nullable; generators then make odd unions of it.)"""
    if isinstance(schema.type, list) and OpenAPIType.NULL in schema.type:
        rest = [kind for kind in schema.type if kind != OpenAPIType.NULL]
        schema.type = rest[0] if len(rest) == 1 else rest
    if schema.enum is not None:
        schema.enum = [value for value in schema.enum if value is not None]
    if schema.one_of is not None:
        rest = [
            branch for branch in schema.one_of if not (isinstance(branch, Schema) and branch.type == OpenAPIType.NULL)
        ]
        if len(rest) == 1 and isinstance(rest[0], Schema):
            schema.one_of = None
            for name, value in vars(rest[0]).items():
                if value is not None and getattr(schema, name) is None:
                    setattr(schema, name, value)
        else:
            schema.one_of = rest


def response_headers(*names: str) -> list[ResponseHeader]:
    """The headers an operation's success response carries, for its decorator (``complete`` adds
    their schemas from ``HEADERS``)."""
    return [ResponseHeader(name=name, documentation_only=True, description=HEADERS[name].description) for name in names]


_IF_NONE_MATCH = Parameter(
    name="If-None-Match",
    param_in="header",
    required=False,
    description='ETags the client holds, e.g. "7" or W/"7" (weak comparison; * for any): 304 if one is current',
    schema=Schema(type=OpenAPIType.STRING),
)
_CACHE_CONTROL = _header(
    Schema(type=OpenAPIType.STRING),
    "no-cache (revalidate with the ETag), private when a token was sent; immutable for what never changes",
)


def _conditional(operation: Operation) -> None:
    """A GET that answers JSON: its 200 carries an ETag and Cache-Control, If-None-Match may name
    the ETag, and a match is a 304 (service.http.caching)."""
    ok = (operation.responses or {}).get("200")
    if not isinstance(ok, OpenAPIResponse) or "application/json" not in (ok.content or {}):
        return
    headers = dict(ok.headers or {})
    headers.setdefault(
        "ETag", _header(Schema(type=OpenAPIType.STRING), "the representation's tag: send it as If-None-Match")
    )
    headers["Cache-Control"] = _CACHE_CONTROL
    ok.headers = headers
    parameters = list(operation.parameters or [])
    if not any(isinstance(p, Parameter) and p.name.lower() == "if-none-match" for p in parameters):
        parameters.append(_IF_NONE_MATCH)
    operation.parameters = parameters
    responses = dict(operation.responses or {})
    responses.setdefault("304", OpenAPIResponse(description="If-None-Match named the current ETag: nothing changed",
                                                headers={"ETag": headers["ETag"]}))
    operation.responses = dict(sorted(responses.items()))


def _refuses_unknown_versions(operation: Operation) -> None:
    """Every operation may answer 400 unsupported_version (an Api-Version not served): its 400
    says so, and one that had no 400 gets it."""
    responses = operation.responses = dict(operation.responses or {})
    found = responses.get("400")
    words = "unsupported_version: an Api-Version that is not served"
    if isinstance(found, OpenAPIResponse):
        found.description = f"{found.description}; {words}"
        return
    responses["400"] = OpenAPIResponse(
        description=f"Invalid request (problem+json, code {words})",
        content={PROBLEM_JSON: OpenAPIMediaType(schema=Reference(ref="#/components/schemas/Problem"))},
    )
    operation.responses = dict(sorted(responses.items()))


def complete(document: OpenAPI) -> None:
    """Give every declared response header its schema (and every 401, 429 and 503 theirs), every
    non-JSON body its schema, and each operation of ``ALSO`` its other media types; the Structs
    as ``refine`` states them."""
    refine(document)
    assert document.components is not None
    assert isinstance(document.components.schemas, dict)
    document.components.schemas.update(MESSAGES)
    document.components.schemas = dict(sorted(document.components.schemas.items()))
    # every operation takes Api-Version and every answer says it (service.http.versions): declared once
    document.components.parameters = {**(document.components.parameters or {}), "Api-Version": _API_VERSION_PARAMETER}
    document.components.headers = {**(document.components.headers or {}), "Api-Version": _API_VERSION}
    for item in (document.paths or {}).values():
        for operation in (item.get, item.post, item.delete):
            if operation is None:
                continue
            for parameter in operation.parameters or []:
                if isinstance(parameter, Parameter) and isinstance(parameter.schema, Schema):
                    _not_null(parameter.schema)
            operation.parameters = [*(operation.parameters or []), Reference(ref="#/components/parameters/Api-Version")]
            _refuses_unknown_versions(operation)
            for status, response in (operation.responses or {}).items():
                if not isinstance(response, OpenAPIResponse):
                    continue
                headers = dict(response.headers or {})
                for name in [*headers, *_STATUS_HEADERS.get(status, [])]:
                    if name in HEADERS:
                        headers[name] = HEADERS[name]
                if status == "409" and "request_in_progress" in (response.description or ""):
                    headers["Retry-After"] = _IN_PROGRESS  # service.http.idempotency
                headers["Api-Version"] = Reference(ref="#/components/headers/Api-Version")  # every answer
                response.headers = headers or None
                bodies = {**BODIES, **OWN_BODIES.get(operation.operation_id or "", {})}
                for media_type, body in (response.content or {}).items():
                    if media_type in bodies:
                        body.schema = bodies[media_type]
                if status == "200" and response.content is not None:
                    for media_type, schema in ALSO.get(operation.operation_id or "", {}).items():
                        response.content[media_type] = OpenAPIMediaType(schema=schema)

    for item in (document.paths or {}).values():
        if item.get is not None:
            _conditional(item.get)  # after the declared headers took their schemas: the game's ETag stays
