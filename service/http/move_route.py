"""``POST /games/{id}/moves`` on a lean path: the hot request without Litestar's per-request layers.

A move is the request this service answers most, and Litestar's layers around it (routing, the
``before_request`` checks, dependency and parameter resolution, the body read and decoded twice,
the response object) cost about as much server CPU as the move's own work. ``MoveRoute`` is an
ASGI wrapper in front of Litestar's handler (and behind the rate limiter, which still sees every
request) that answers a well-formed move itself, with the same code the controller uses
(``service.http.controllers.common``'s parsers, ``Moves.play``, the use case behind
``Games.play``, ``service.http.problems``' exception handlers) and the same response: status,
body bytes (Litestar's JSON encoder) and headers.

Anything else goes to Litestar untouched, which then answers exactly as it always has: another
method or path, a query string, a path written with a trailing slash or percent-escapes, a header
given twice, an ``Origin`` header (CORS stays Litestar's), a body without ``Content-Length`` or
larger than the limit, no JSON content type, and every request whose parsing fails (the body, the
move, the bearer header, ``If-Match``, ``Idempotency-Key``): Litestar gets the body this wrapper
already read and gives the 400, 401 or 415 in its usual words. Only errors of the move itself
(``Games.play``: 401, 403, 404, 409, 412, 422, 503) are answered here, by the app's exception
handlers, as Litestar's exception middleware would. ``GameController.move`` stays the documented
operation (and serves the requests handed over).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from litestar import Litestar
from litestar.serialization import encode_json

from domain import Command

from .controllers.common import check_json_body, etag, idempotency_key, if_match, parse_move, token_of
from .problems import EXCEPTION_HANDLERS

log = logging.getLogger("canfield")

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]
_PATH = re.compile(r"/games/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})/moves")
_READ = frozenset(
    {b"authorization", b"content-type", b"content-length", b"if-match", b"idempotency-key", b"last-event-id"}
)
# _READ: the headers read here, and those Litestar's path refuses twice (service.http.controllers.common._ONCE);
# _ELSEWHERE: headers that send a request to Litestar: a browser's (CORS), a body of unknown length
_ELSEWHERE = frozenset({b"origin", b"transfer-encoding"})
_JSON = b"application/json"


class MoveRoute:
    """``app.asgi_handler = MoveRoute(app.asgi_handler, app, max_body)``."""

    def __init__(self, handler: ASGIApp, app: Litestar, max_body: int) -> None:
        self.handler = handler
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.handler(scope, receive, send)
        path: str = scope["path"]
        found = _PATH.fullmatch(path)
        if found is None or scope.get("query_string") or scope.get("root_path"):
            return await self.handler(scope, receive, send)
        raw_path = scope.get("raw_path")
        if raw_path is not None and raw_path != path.encode():
            return await self.handler(scope, receive, send)
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            if name in _READ:
                if name in headers:
                    return await self.handler(scope, receive, send)
                headers[name] = value
            elif name in _ELSEWHERE:
                return await self.handler(scope, receive, send)
        media_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        length = headers.get(b"content-length", b"")
        if (
            (media_type != _JSON and not media_type.endswith(b"+json"))
            or not length.isdigit()
            or int(length) > self.max_body
        ):
            return await self.handler(scope, receive, send)

        received: list[Any] = []
        body = b""
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                return await self.handler(scope, _replay(received, receive), send)
            body += message.get("body", b"")
            if len(body) > self.max_body:
                return await self.handler(scope, _replay(received, receive), send)
            if not message.get("more_body"):
                break
        try:
            move = _command(body)
            authorization = headers.get(b"authorization")
            token = None if authorization is None else token_of(authorization.decode("latin-1"))
            version = headers.get(b"if-match")
            key = headers.get(b"idempotency-key")
            expected = None if version is None else if_match(version.decode("latin-1"))
            key_text = None if key is None else idempotency_key(key.decode("latin-1"))
        except Exception:  # Litestar's path gives the refusal, in its own order and words
            return await self.handler(scope, _replay(received, receive), send)

        try:
            # the use case itself (``Games.play`` only wraps its reply for the controller)
            played = await self.app.state.games.moves.play(_game_id(found.group(1)), token, move, expected, key_text)
        except Exception as error:
            await self._problem(scope, receive, send, error)
            return None
        content = encode_json(played.body)  # the reply's dict: the same JSON as its MoveResult
        response_headers = [(b"etag", etag(played.version).encode())]
        if played.replayed:
            response_headers.append((b"idempotent-replayed", b"true"))
        response_headers += [(b"content-type", _JSON), (b"content-length", str(len(content)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": response_headers})
        await send({"type": "http.response.body", "body": content, "more_body": False})
        return None

    async def _problem(self, scope: Any, receive: Any, send: Any, error: Exception) -> None:
        """The error as Litestar's exception middleware answers it: the app's handler for the
        nearest class of the error, its response sent as Litestar sends any response."""
        handler = next(EXCEPTION_HANDLERS[kind] for kind in type(error).__mro__ if kind in EXCEPTION_HANDLERS)
        request = self.app.request_class(scope=scope, receive=receive, send=send)
        response = handler(request, error)
        await response.to_asgi_response(app=None, request=request)(scope, receive, send)


_PARSED: dict[bytes, Command] = {}
"""Move bodies already parsed, and their command: parsing is a function of the bytes alone, and
clients send the same few bodies over and over (a draw is always ``{"type":"draw"}``)."""
_PARSED_MAX = 1024
_PARSED_LENGTH = 128  # longer bodies are parsed every time (a move's is under 60 bytes)


def _command(body: bytes) -> Command:
    """The move a body asks for, as the controller parses it (raises as it does)."""
    command = _PARSED.get(body)
    if command is None:
        command = parse_move(check_json_body(body))
        if len(body) <= _PARSED_LENGTH:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[body] = command
    return command


_GAME_IDS: dict[str, uuid.UUID] = {}
"""Game ids of recent move paths, parsed: a client moves one game many times, and ``uuid.UUID``
parses in Python (about 1 us, a few per cent of a move's server CPU)."""
_GAME_IDS_MAX = 4096


def _game_id(text: str) -> uuid.UUID:
    """The game id in a move path (``_PATH`` has checked its form)."""
    game_id = _GAME_IDS.get(text)
    if game_id is None:
        if len(_GAME_IDS) >= _GAME_IDS_MAX:
            _GAME_IDS.clear()
        game_id = _GAME_IDS[text] = uuid.UUID(text)
    return game_id


def _replay(received: list[Any], receive: Any) -> Any:
    """``receive`` for Litestar: the messages this wrapper already took, then the rest."""
    pending = list(received)

    async def replayed() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
