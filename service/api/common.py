"""Header parsing shared by the controllers."""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec
from litestar import Request
from litestar.datastructures import State

from ..errors import BadRequest, Unauthorized
from ..games import Games

_IF_MATCH = re.compile(r'^\s*(?:(?:W/)?"(\d{1,12})"|(\d{1,12}))\s*$')
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


T = TypeVar("T")


def parse_body(data: object, kind: type[T]) -> T:
    """Validate a decoded JSON body strictly (no "12" for 12), with msgspec's message on failure."""
    try:
        return msgspec.convert(data, kind, strict=True)
    except msgspec.ValidationError as error:
        raise BadRequest(str(error)[:500]) from None


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


def if_match(value: str | None) -> int | None:
    """The version in an If-Match header ("7", 7 or W/"7"); '*' or none means any version."""
    if value is None or value.strip() == "*":
        return None
    found = _IF_MATCH.match(value)
    if found is None:
        raise BadRequest('If-Match must be a game version in quotes, like "7" (the ETag of the game)')
    return int(found.group(1) or found.group(2))


def idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    if not _KEY.match(value):
        raise BadRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
    return value


def etag(version: int) -> str:
    return f'"{version}"'
