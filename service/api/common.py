"""Body and header parsing shared by the controllers."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar
from uuid import UUID

import msgspec
from litestar import Request
from litestar.datastructures import State
from litestar.params import ParameterKwarg

from ..errors import BadRequest, NotFound, Unauthorized
from ..games import Games

_IF_MATCH = re.compile(r'[ \t]*(?:(?:W/)?"([0-9]{1,12})"|([0-9]{1,12}))[ \t]*')  # service.openapi.IF_MATCH
_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # service.openapi.IDEMPOTENCY_KEY


T = TypeVar("T")


def parse_body(data: object, kind: type[T]) -> T:
    """Validate a decoded JSON body strictly (no "12" for 12), with msgspec's message on failure.

    JSON (and JSON Schema's ``integer``) does not tell 5 from 5.0, so a whole number written with a
    fraction or an exponent counts as that integer; 5.5 stays a float and is refused where an
    integer is due.
    """
    try:
        return msgspec.convert(_whole_numbers(data), kind, strict=True)
    except msgspec.ValidationError as error:
        raise BadRequest(str(error)[:500]) from None


def _whole_numbers(value: object, depth: int = 0) -> object:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if depth < 3:  # request bodies are two levels deep; deeper junk is refused as it is
        if isinstance(value, dict):
            return {key: _whole_numbers(item, depth + 1) for key, item in value.items()}
        if isinstance(value, list):
            return [_whole_numbers(item, depth + 1) for item in value]
    return value


MAX_NESTING = 32
"""Request bodies are at most three levels deep; anything past this is refused as nested too deeply."""


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def check_json_body(raw: bytes) -> None:
    """Refuse what a JSON parser would let through but a request must not carry.

    * a name twice in one object (``{"type": "draw", "type": "resign"}``): parsers disagree on which
      one wins (msgspec takes the last), so a proxy or log could read another request than this
      service; RFC 7493 (I-JSON) forbids it;
    * nesting deep enough to exhaust the parser's recursion (a 400, not a 500).

    Malformed JSON is left to the body parser, which says where it breaks. Cheap on the hot path:
    only a body with more ``:`` than object members is parsed a second time to look for the name.
    """
    try:
        data = msgspec.json.decode(raw)
    except RecursionError:
        raise BadRequest("the JSON body is nested too deeply") from None
    except msgspec.DecodeError:
        return
    members = 0
    pending: list[tuple[dict[str, Any] | list[Any], int]] = [(data, 1)] if isinstance(data, dict | list) else []
    while pending:
        item, depth = pending.pop()
        if depth > MAX_NESTING:  # msgspec's own recursion limit differs between Python versions
            raise BadRequest("the JSON body is nested too deeply")
        if isinstance(item, dict):
            members += len(item)
            values: Any = item.values()
        else:
            values = item
        for value in values:
            if isinstance(value, dict | list):
                pending.append((value, depth + 1))
    if raw.count(b":") <= members:
        return  # every ':' separates a member: no name can repeat
    try:
        json.loads(raw, object_pairs_hook=_unique_keys)
    except _DuplicateKey as duplicate:
        raise BadRequest(f"the JSON body names {str(duplicate.args[0])[:40]!r} twice in one object") from None
    except RecursionError:
        raise BadRequest("the JSON body is nested too deeply") from None
    except ValueError:
        return


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_INTEGER = re.compile(r"-?[0-9]+")
_NOT_FOUND = "no such resource: see /schema/openapi.json for the API"
_QUERIES: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # id(handler) -> (query names, integer ones)
_ONCE = frozenset({b"authorization", b"content-type", b"idempotency-key", b"if-match", b"last-event-id"})


def check_parameters(request: Request[Any, Any, Any]) -> None:
    """Refuse the spellings Python's parsers take but the document does not.

    Litestar reads a ``uuid`` path segment with ``UUID()`` and an ``int`` with ``int()``, which also
    take ``urn:uuid:...``, ``{...}`` and 32 bare hex digits, ``1_0`` (10), ``+1``, `` 1 `` and
    non-ASCII digits (``１``). One resource would answer at many URLs, and a cache or proxy would
    read another number than this service. So: a UUID is 8-4-4-4-12 hex digits (any case), an
    integer in the path or the query is ASCII digits with an optional minus, and a query parameter
    is given at most once (which of two would win differs between parsers). Unknown query
    parameters are ignored, as before. The headers this service reads come once each too: with two
    ``Authorization`` lines a proxy could check one token while this service acts on the other.
    """
    seen: set[bytes] = set()
    for name, _ in request.scope["headers"]:
        if name in _ONCE:
            if name in seen:
                raise BadRequest(f"the {name.decode().title()} header is given more than once; give it once")
            seen.add(name)
    template = request.scope.get("path_template") or ""
    if "{" in template:
        names = template.rstrip("/").split("/")
        values = request.scope["path"].rstrip("/").split("/")
        if len(names) == len(values):
            parsed = request.path_params
            for name, value in zip(names, values):
                kind = type(parsed.get(name[1:-1])) if name.startswith("{") else str
                if (kind is UUID and not _UUID.fullmatch(value)) or (kind is int and not _INTEGER.fullmatch(value)):
                    raise NotFound(_NOT_FOUND)
    if not request.scope.get("query_string"):
        return
    declared, integers = _declared_queries(request)
    query = request.query_params
    for name in declared:
        values = query.getall(name, [])
        if len(values) > 1:
            raise BadRequest(f"query parameter {name!r} is given {len(values)} times; give it once")
        if name in integers and values and not _INTEGER.fullmatch(values[0]):
            raise BadRequest(f"query parameter {name!r} must be an integer written in ASCII digits")


def _declared_queries(request: Request[Any, Any, Any]) -> tuple[frozenset[str], frozenset[str]]:
    handler = request.route_handler
    found = _QUERIES.get(id(handler))
    if found is None:
        path = set(request.path_params)
        names, integers = set(), set()
        for name, field in handler.parsed_fn_signature.parameters.items():
            kwarg = field.kwarg_definition
            if isinstance(kwarg, ParameterKwarg) and not kwarg.header and not kwarg.cookie and name not in path:
                key = kwarg.query or name
                names.add(key)
                if field.annotation is int:
                    integers.add(key)
        found = _QUERIES[id(handler)] = (frozenset(names), frozenset(integers))
    return found


def games_of(state: State) -> Games:
    games: Games = state.games
    return games


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
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
    """The version in an If-Match header ("7", 7 or W/"7"); '*' or none means any version."""
    if value is None or value.strip(" \t") == "*":
        return None
    found = _IF_MATCH.fullmatch(value)
    if found is None:
        raise BadRequest('If-Match must be a game version in quotes, like "7" (the ETag of the game)')
    return int(found.group(1) or found.group(2))


def idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        raise BadRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
    return value


def etag(version: int) -> str:
    return f'"{version}"'
