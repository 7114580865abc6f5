"""``POST /games/{id}/moves``: the one route of a move, as a lean ASGI handler.

A move is the request this service answers most, and Litestar's per-request layers for an HTTP
handler (the ``before_request`` checks, dependency and parameter resolution, the body decoded
twice, the response object) cost about as much server CPU as the move's own work. So this route
is an ASGI route handler: Litestar still routes it (and its CORS and exception middleware and the
rate limiter still see it), and the handler does the rest itself: it reads the headers and the
body once, parses the move with the controllers' parsers, calls the move use case
(``Moves.play``) and sends the reply the use case shaped, encoded once. A refusal is raised as
the service's own error and answered by the app's exception handlers, like any other route's.

A move request written as the API writes it (``POST``, the id in lower case, no ``Origin``
header: nothing for CORS to do) does not even pass Litestar's router: ``MoveDispatch``, in front
of the app, hands it to this same function with the path parameter and template the router would
have set (service.http.framework_adapter), and answers a refusal with the app's same exception
handlers. That saves about a ninth of a move's server instructions (docs/performance.md, "The
move route and Litestar"). Every other request reaches this route through Litestar.

The checks come in the order every other route makes them: the path's spelling, headers given
twice, the media type, the body's size and JSON, the move, then the bearer token, ``If-Match``
and ``Idempotency-Key``. The operation is documented in OpenAPI by ``MOVE_DOCUMENT``
(service.http.controllers.games), which is never served.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from litestar import Litestar, Request, asgi
from litestar.exceptions import ClientException, MethodNotAllowedException
from litestar.serialization import encode_json
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE

from domain import Command

from ..errors import BadRequest, NotFound, UnsupportedMediaType
from .controllers.common import etag, idempotency_key, if_match, parse_move, token_of
from .framework_adapter import as_routed, route_asgi_parameters
from .json_bodies import check_json_body
from .paths import NOT_FOUND, UUID, as_sent, malformed, trailing_slash
from .problems import EXCEPTION_HANDLERS
from .version_changes import DOWNGRADE, SHAPED

MOVE_PATH = "/games/{game_id:uuid}/moves"
_SAMPLE_PATH = "/games/00000000-0000-0000-0000-000000000000/moves"
_ONCE = frozenset({b"authorization", b"content-type", b"idempotency-key", b"if-match", b"last-event-id"})
_JSON = b"application/json"
REPLYING = "canfield.replying"
"""Set in the scope once the move's reply is being sent."""


@asgi(MOVE_PATH, copy_scope=False)
async def make_move(scope: Any, receive: Any, send: Any) -> None:
    """Make one move: parse the request, play the move, send its reply."""
    if scope["method"] == "OPTIONS":  # a CORS preflight never gets here: the CORS layer answers it
        await send({"type": "http.response.start", "status": 204, "headers": [(b"allow", b"OPTIONS, POST")]})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    if scope["method"] != "POST":
        raise MethodNotAllowedException(headers={"Allow": "OPTIONS, POST"})
    _check_path(scope)
    headers = _headers(scope)
    body = await _body(scope, receive, headers)
    move = _command(body)
    authorization = headers.get(b"authorization")
    token = None if authorization is None else token_of(authorization.decode("latin-1"))
    version = headers.get(b"if-match")
    key = headers.get(b"idempotency-key")
    expected = None if version is None else if_match(version.decode("latin-1"))
    key_text = None if key is None else idempotency_key(key.decode("latin-1"))
    game_id: uuid.UUID = scope["path_params"]["game_id"]
    played = await scope["app"].state.services.moves.play(game_id, token, move, expected, key_text)
    reply = played.reply
    downgrade = scope.get(DOWNGRADE)
    if downgrade is not None:  # a request of an older API version (service.http.version_changes)
        reply = downgrade(200, reply)
        scope[SHAPED] = True
    content = encode_json(reply)
    reply_headers = [(b"etag", etag(played.version).encode())]
    if played.replayed:
        reply_headers.append((b"idempotent-replayed", b"true"))
    reply_headers += [(b"content-type", _JSON), (b"content-length", str(len(content)).encode())]
    scope[REPLYING] = True  # from here on, an error is the connection's, not the move's (MoveDispatch)
    await send({"type": "http.response.start", "status": 200, "headers": reply_headers})
    await send({"type": "http.response.body", "body": content, "more_body": False})


def _check_path(scope: Any) -> None:
    """The path as written: no trailing slash or empty segment, the id as 8-4-4-4-12 hex digits
    (the router also takes other spellings of a UUID)."""
    slash = trailing_slash(as_sent(scope))
    if slash is not None:
        raise NotFound(slash)
    path: str = scope["path"]
    if not UUID.fullmatch(path.split("/")[2]):
        raise NotFound(malformed(path, [route.path for route in scope["app"].routes]) or NOT_FOUND)


def _headers(scope: Any) -> dict[bytes, bytes]:
    """The headers this route reads, each given at most once."""
    found: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        if name in _ONCE:
            if name in found:
                raise BadRequest(f"the {name.decode().title()} header is given more than once; give it once")
            found[name] = value
    media_type = found.get(b"content-type", b"").split(b";")[0].strip().lower()
    if media_type != _JSON and not media_type.endswith(b"+json"):
        raise UnsupportedMediaType("send the body as JSON with 'Content-Type: application/json'")
    return found


async def _body(scope: Any, receive: Any, headers: dict[bytes, bytes]) -> bytes:
    """The whole body, refused once it is larger than the service accepts."""
    limit: int = scope["app"].state.max_body_bytes
    length = headers.get(b"content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise ClientException(status_code=HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientException("the client went away before the body was complete")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ClientException(status_code=HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


_PARSED: dict[bytes, Command] = {}
"""Move bodies already parsed, and their command: parsing is a function of the bytes alone, and
clients send the same few bodies over and over (a draw is always ``{"type":"draw"}``)."""
_PARSED_MAX = 1024
_PARSED_LENGTH = 128  # longer bodies are parsed every time (a move's is under 60 bytes)


def _command(body: bytes) -> Command:
    """The move a body asks for (raises ``BadRequest`` in the controllers' words)."""
    command = _PARSED.get(body)
    if command is None:
        command = parse_move(check_json_body(body))
        if len(body) <= _PARSED_LENGTH:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[body] = command
    return command


def route_moves(app: Litestar) -> None:
    """Let the router hand the move route its path parameter whatever the request's method
    (tests/api/test_move_route.py sends several): Litestar files an ASGI route's parameters where
    it does not look them up (service.http.framework_adapter)."""
    route_asgi_parameters(app, _SAMPLE_PATH)


_DIRECT = re.compile(rb"/games/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/moves")
TEMPLATE = "/games/{game_id}/moves"
"""The move route's path as Litestar's router names it in the scope (``path_template``)."""


class MoveDispatch:
    """``app.asgi_handler = MoveDispatch(app.asgi_handler)``: a move's request straight to
    ``make_move`` (the module's docstring says which and why); everything else to ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.route = make_move.fn

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            found = _DIRECT.fullmatch(scope.get("raw_path") or b"")
            if found is not None and _no_origin(scope["headers"]):
                as_routed(scope, {"game_id": _game_id(found.group(1))}, TEMPLATE)
                await self._move(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _move(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.route(scope, receive, send)
        except Exception as error:  # answered as the router's exception layer would
            if scope.get(REPLYING):
                raise
            request: Request[Any, Any, Any] = Request(scope, receive, send)
            response = _handler_of(error)(request, error)
            await response.to_asgi_response(app=None, request=request)(scope, receive, send)


_IDS: dict[bytes, uuid.UUID] = {}
"""Game ids already parsed from move paths: a client moves on the same game over and over."""


def _game_id(text: bytes) -> uuid.UUID:
    found = _IDS.get(text)
    if found is None:
        if len(_IDS) >= 4096:
            _IDS.clear()
        found = _IDS[text] = uuid.UUID(text.decode("ascii"))
    return found


def _no_origin(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, _ in headers:  # noqa: SIM110 (a plain loop: all() over a generator costs a call per header)
        if name == b"origin":
            return False
    return True


def _handler_of(error: Exception) -> Any:
    """The app's exception handler for ``error``: the one of its nearest class."""
    for kind in type(error).__mro__:
        handler = EXCEPTION_HANDLERS.get(kind)
        if handler is not None:
            return handler
    raise error
