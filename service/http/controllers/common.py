"""Body and header parsing shared by the controllers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

import msgspec
from litestar import Request
from litestar.params import ParameterKwarg

from domain import Command, commands, parse_card

from ...errors import BadRequest, NotFound, Unauthorized
from ...races.races import NewRace
from ..paths import INTEGER, NOT_FOUND, as_sent, malformed, trailing_slash
from ..paths import UUID as UUID_TEXT
from ..schemas import (
    DEAL_REQUESTS,
    RACE_DEAL_REQUESTS,
    DealRequest,
    DrawRequest,
    MoveCardRequest,
    NewGameRequest,
    NewRaceRequest,
    RaceDealRequest,
    RecycleRequest,
    RequestBody,
    ResignRequest,
    RulesetId,
    UndoRequest,
)
from ..wording import RULES, choices, either, explain, quoted_list, shown

_IF_MATCH = re.compile(r'[ \t]*(?:(?:W/)?"([0-9]{1,12})"|([0-9]{1,12}))[ \t]*')  # openapi.patterns.IF_MATCH
_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # openapi.patterns.IDEMPOTENCY_KEY


T = TypeVar("T")
RULESET_IDS = frozenset(ruleset.value for ruleset in RulesetId)
_MOVES: dict[str, type[DrawRequest | RecycleRequest | UndoRequest | ResignRequest | MoveCardRequest]] = {
    "draw": DrawRequest, "recycle": RecycleRequest, "move": MoveCardRequest, "undo": UndoRequest,
    "resign": ResignRequest,
}
# each move's fields on the wire, "type" first (msgspec.structs.fields inspects the class each call)
_TAKES = {
    kind: ["type", *(field.encode_name for field in msgspec.structs.fields(schema))] for kind, schema in _MOVES.items()
}
_COMMANDS: dict[type[RequestBody], Command] = {
    DrawRequest: commands.Draw(), RecycleRequest: commands.Recycle(), UndoRequest: commands.Undo(),
    ResignRequest: commands.Resign(),
}


def parse_body(data: object, kind: type[T], subject: str = "the request body", prefix: str = "") -> T:
    """Validate a decoded JSON body strictly (no "12" for 12); a refusal says why in our words.

    JSON (and JSON Schema's ``integer``) does not tell 5 from 5.0, so a whole number written with a
    fraction or an exponent counts as that integer; 5.5 stays a float and is refused where an
    integer is due.
    """
    try:
        return msgspec.convert(_whole_numbers(data), kind, strict=True)
    except msgspec.ValidationError as error:
        fields = []
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            fields = [field.encode_name for field in msgspec.structs.fields(kind)]
        raise BadRequest(explain(str(error), data, subject, fields, prefix)) from None


def _members(data: object, subject: str, example: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise BadRequest(f"{subject} must be a JSON object such as {example}, not {shown(data)}")
    return data


def parse_move(data: object) -> Command:
    """A move: ``type`` picks its schema (service.http.schemas.MoveRequest), which takes no other field;
    the domain's command is made from the checked Struct (the card code and the target are valid by
    then), so the body is parsed once."""
    move = _members(data, "a move", '{"type": "draw"}')
    if "type" not in move:
        raise BadRequest(f"a move needs 'type': {RULES['type']}")
    kind = move["type"]
    schema = _MOVES.get(kind) if isinstance(kind, str) else None
    if schema is None:
        raise BadRequest(f"'type' must be {RULES['type']}, not {shown(kind)}")
    subject = f"a {kind}"
    takes = _TAKES[kind]
    extra = [name for name in move if name not in takes]
    if extra:
        only = "no fields besides 'type'" if len(takes) == 1 else "only " + quoted_list(takes)
        raise BadRequest(f"{subject} takes {only}, not {quoted_list(str(name) for name in extra)}")
    parsed = parse_body(move, schema, subject)
    if isinstance(parsed, MoveCardRequest):
        return commands.MoveCard(parse_card(parsed.card), parsed.to)
    return _COMMANDS[schema]


def parse_new_game(data: object) -> NewGameRequest:
    """``{"ruleset": ..., "deal": {one source}}``, both optional (null counts as left out)."""
    body = _members(data, "the request body", '{"ruleset": "classic", "deal": {"source": "seed", "seed": 7}}')
    extra = [name for name in body if name not in ("ruleset", "deal")]
    if extra:
        raise BadRequest(f"the request body has no field {quoted_list(str(name) for name in extra)}; "
                         "it takes only 'ruleset' and 'deal'")
    deal = body.get("deal")
    parsed = None if deal is None else parse_deal(deal, DEAL_REQUESTS, DealRequest)
    return NewGameRequest(ruleset=_ruleset(body.get("ruleset")), deal=parsed)


def parse_new_race(data: object) -> NewRace:
    """``{"maxEntrants": N, "ruleset": ..., "deal": {seed, pool or deck}, "timeLimitSeconds": N}``:
    only ``maxEntrants`` is required (null counts as left out for the others). The race to create is
    made from the checked ``NewRaceRequest``, as a move's command is from its Struct."""
    body = _members(data, "the request body", '{"maxEntrants": 2}')
    takes = [field.encode_name for field in msgspec.structs.fields(NewRaceRequest)]
    extra = [name for name in body if name not in takes]
    if extra:
        raise BadRequest(f"the request body has no field {quoted_list(str(name) for name in extra)}; "
                         f"it takes only {quoted_list(takes)}")
    ruleset, deal = _ruleset(body.get("ruleset")), body.get("deal")
    rest = {name: value for name, value in body.items() if name not in ("ruleset", "deal")}
    parsed = parse_body(rest, NewRaceRequest)
    race_deal = None if deal is None else parse_deal(deal, RACE_DEAL_REQUESTS, RaceDealRequest, "a race's deal")
    source = None if race_deal is None else {
        name: value for name, value in msgspec.structs.asdict(race_deal).items() if value is not None
    }
    return NewRace(parsed.max_entrants, ruleset, source, parsed.time_limit_seconds, bool(parsed.rated))


def _ruleset(ruleset: object) -> RulesetId | None:
    if ruleset is not None and not (isinstance(ruleset, str) and ruleset in RULESET_IDS):
        raise BadRequest(f"'ruleset' must be {RULES['ruleset']}, not {shown(ruleset)}")
    return None if ruleset is None else RulesetId(ruleset)


D = TypeVar("D", DealRequest, RaceDealRequest)


def parse_deal(
    data: object,
    requests: dict[str, type[RequestBody]],
    kind: type[D],
    whose: str = "a deal",
) -> D | None:
    """A deal tagged by its ``source``: ``{"source": "seed", "seed": N}``, ``{"source": "pool", "pool": N}``,
    ``{"source": "daily", "date": "..."}``, ``{"source": "deck", "deck": [...]}`` or ``{"source": "lesson",
    "lesson": "..."}`` for a game; seed, pool, deck or secret (None: the same as no deal) for a race."""
    deal = _members(data, "'deal'", '{"source": "seed", "seed": 7}')
    source = deal.get("source")
    if source is None:
        raise BadRequest(f"'deal' needs its 'source': {whose} is an object such as "
                         f"{{\"source\": \"seed\", \"seed\": 7}}, whose source is {either(requests)}")
    if not isinstance(source, str) or source not in requests:
        raise BadRequest(f"'deal.source' must be {either(requests)}, not {shown(source)}")
    parsed = parse_body(deal, requests[source], "'deal'", prefix="deal")
    fields = {field.name: getattr(parsed, field.name) for field in msgspec.structs.fields(parsed)}
    if source == "daily":
        fields = {"daily": fields["date"]}  # the service layer's name
    return kind(**fields) if fields else None


def _whole_numbers(value: object, depth: int = 0) -> object:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if depth < 3:  # request bodies are two levels deep; deeper junk is refused as it is
        if isinstance(value, dict):
            return {key: _whole_numbers(item, depth + 1) for key, item in value.items()}
        if isinstance(value, list):
            return [_whole_numbers(item, depth + 1) for item in value]
    return value


_ONCE = frozenset({b"authorization", b"content-type", b"idempotency-key", b"if-match", b"last-event-id"})


def check_parameters(request: Request[Any, Any, Any]) -> None:
    """Refuse the spellings Python's parsers take but the document does not.

    Litestar reads a ``uuid`` path segment with ``UUID()`` and an ``int`` with ``int()``, which also
    take ``urn:uuid:...``, ``{...}`` and 32 bare hex digits, ``1_0`` (10), ``+1``, `` 1 `` and
    non-ASCII digits (U+FF11, a fullwidth ``1``). One resource would answer at many URLs, and a cache or proxy would
    read another number than this service. So: a UUID is 8-4-4-4-12 hex digits (any case), an
    integer in the path or the query is ASCII digits with an optional minus, and a query parameter
    is given at most once (which of two would win differs between parsers). Unknown query
    parameters are ignored, as before. The headers this service reads come once each too: with two
    ``Authorization`` lines a proxy could check one token while this service acts on the other.
    A trailing slash is refused too (Litestar's router would ignore it).
    """
    slash = trailing_slash(as_sent(request.scope))
    if slash is not None:
        raise NotFound(slash)
    seen: set[bytes] = set()
    for header, _ in request.scope["headers"]:
        if header in _ONCE:
            if header in seen:
                raise BadRequest(f"the {header.decode().title()} header is given more than once; give it once")
            seen.add(header)
    template = request.scope.get("path_template") or ""
    if "{" in template:
        names = template.split("/")
        values = request.scope["path"].split("/")
        if len(names) == len(values):
            parsed = request.path_params
            for name, value in zip(names, values, strict=True):
                kind = type(parsed.get(name[1:-1])) if name.startswith("{") else str
                if (kind is UUID and not UUID_TEXT.fullmatch(value)) or (kind is int and not INTEGER.fullmatch(value)):
                    routes = [route.path for route in request.app.routes]
                    raise NotFound(malformed(request.scope["path"], routes) or NOT_FOUND)
    if not request.scope.get("query_string"):
        return
    declared = _declared_queries(request)
    query = request.query_params
    for name in declared.names:
        values = query.getall(name, [])
        if len(values) > 1:
            raise BadRequest(f"query parameter {name!r} is given {len(values)} times; give it once")
        if name in declared.integers and values and not INTEGER.fullmatch(values[0]):
            raise BadRequest(f"query parameter {name!r} must be an integer written in ASCII digits")
        if values == ["null"] and name in declared.optional:  # Litestar would read it as left out
            allowed = declared.optional[name]
            if allowed:
                raise BadRequest(f"query parameter {name!r} must be one of {', '.join(allowed)}, not 'null' "
                                 "(leave it out for all)")
            raise BadRequest(f"query parameter {name!r} must be a value, not 'null' (leave it out instead)")


@dataclass(frozen=True)
class _Queries:
    """A handler's query parameters: their names, the integers, the optional ones."""

    names: frozenset[str]
    integers: frozenset[str]
    optional: dict[str, list[str]]  # name -> its Literal values (empty for other types)


_QUERIES: dict[int, _Queries] = {}  # by id(handler)


def _declared_queries(request: Request[Any, Any, Any]) -> _Queries:
    handler = request.route_handler
    found = _QUERIES.get(id(handler))
    if found is None:
        path = set(request.path_params)
        names, integers, optional = set(), set(), {}
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if isinstance(kwarg, ParameterKwarg) and not kwarg.header and not kwarg.cookie and name not in path:
                key = kwarg.query or name
                names.add(key)
                if field.annotation is int:
                    integers.add(key)
                if field.is_optional:
                    optional[key] = choices(field.annotation)
        found = _QUERIES[id(handler)] = _Queries(frozenset(names), frozenset(integers), optional)
    return found


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    return None if header is None else token_of(header)


def token_of(header: str) -> str:
    """The token of an ``Authorization: Bearer <token>`` header."""
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 200:
        raise Unauthorized("use 'Authorization: Bearer <token>' with the token from POST /players")
    return token


def optional_bearer(request: Request[Any, Any, Any]) -> str | None:
    """The bearer token of a public read, if one is sent in the right form (a race game answers only
    to its player while the race runs); a malformed header counts as no token, as on any read."""
    try:
        return bearer_token(request)
    except Unauthorized:
        return None


def if_match(value: str | None) -> int | None:
    """The version in an If-Match header ("7" or 7); '*' or none means any version. A weak tag
    (W/"7") never matches: RFC 9110 compares If-Match strongly (``WEAK_IF_MATCH``)."""
    if value is None or value.strip(" \t") == "*":
        return None
    found = _IF_MATCH.fullmatch(value)
    if found is None:
        raise BadRequest('If-Match must be a game version in quotes, like "7" (the ETag of the game)')
    if value.strip(" \t").startswith("W/"):
        return WEAK_IF_MATCH
    return int(found.group(1) or found.group(2))


WEAK_IF_MATCH = -1
"""``if_match`` of a weak tag: a version no game is at, so the move is refused with 412."""


def idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        raise BadRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
    return value


def etag(version: int) -> str:
    return f'"{version}"'
