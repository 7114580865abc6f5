"""Conditional GETs and cache headers, by RFC 9110 and RFC 9111, for every read at once.

``ConditionalGets`` wraps the app (inside the rate limiter, so a 304 can give its read back):

* every ``200`` answer to a ``GET`` carries an ``ETag``: the one its handler set (a game's version,
  ``"7"``, or ``"7-hidden"`` for an ended game whose cards stay hidden for now: the view changes when
  they are shown, so its tag does too), else, for a JSON body, a strong tag made from a digest of
  the body (``"h-..."``), which changes exactly when the representation does;
* ``If-None-Match`` is compared weakly (``W/"7"`` matches ``"7"``; ``*`` matches any): a match is
  ``304 Not Modified`` with the ``ETag``, ``Cache-Control`` and ``Vary`` the ``200`` would have had
  and no body;
* ``Cache-Control`` defaults to ``no-cache`` (store, but revalidate: the tag makes that cheap), and
  ``private, no-cache`` when the request carried a bearer token; a handler that knows better sets
  its own (a ruleset version or a settled past state is ``immutable``). ``Vary: Authorization``
  says that the answer may depend on the token (a daily or race game answers only to its player).

Server-Sent Events and other bodies without an ``ETag`` that are not JSON pass through untouched.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

ASGIApp = Any
IMMUTABLE = "public, max-age=31536000, immutable"
"""The ``Cache-Control`` of a representation that never changes (a ruleset version, a settled past state)."""
_JSON = (b"application/json",)
_KEPT = (b"etag", b"cache-control", b"vary", b"ratelimit", b"ratelimit-policy")


def none_match(header: bytes | None, tag: bytes) -> bool:
    """Whether ``If-None-Match`` names ``tag`` under weak comparison (RFC 9110 13.1.2)."""
    if header is None:
        return False
    wanted = _opaque(tag)
    for listed in header.split(b","):
        candidate = listed.strip()
        if candidate == b"*" or _opaque(candidate) == wanted:
            return True
    return False


def _opaque(tag: bytes) -> bytes:
    return tag[2:] if tag.startswith(b"W/") else tag


def digest_tag(body: bytes) -> bytes:
    """A strong tag for a body: 16 bytes of its SHA-256, URL-safe base64."""
    return b'"h-' + base64.urlsafe_b64encode(hashlib.sha256(body).digest()[:16]).rstrip(b"=") + b'"'


class ConditionalGets:
    """``app.asgi_handler = ConditionalGets(app.asgi_handler)``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        asked: bytes | None = None
        private = False
        for name, value in scope["headers"]:
            if name == b"if-none-match":
                asked = value if asked is None else asked + b"," + value
            elif name == b"authorization":
                private = True
        await self.app(scope, receive, _Conditional(send, asked, private))


class _Conditional:
    """``send`` for one GET: the response start is held until its tag is known."""

    __slots__ = ("asked", "body", "held", "passing", "private", "send", "swallow")

    def __init__(self, send: Any, asked: bytes | None, private: bool) -> None:
        self.send = send
        self.asked = asked
        self.private = private
        self.held: dict[str, Any] | None = None
        self.body: list[bytes] = []
        self.passing = False  # this response goes through untouched
        self.swallow = False  # a 304 was sent: the body goes nowhere

    async def __call__(self, message: Any) -> None:
        if self.passing:
            await self.send(message)
            return
        if message["type"] == "http.response.start":
            await self._start(message)
            return
        if message["type"] != "http.response.body":
            await self.send(message)
            return
        if self.swallow:
            return
        if self.held is None:
            await self.send(message)
            return
        self.body.append(message.get("body", b""))
        if not message.get("more_body"):
            await self._finish(b"".join(self.body))

    async def _start(self, message: dict[str, Any]) -> None:
        headers = list(message.get("headers", ()))
        if message["status"] != 200:
            self.passing = True
            await self.send(message)
            return
        names = {name.lower(): value for name, value in headers}
        tag = names.get(b"etag")
        content_type = names.get(b"content-type", b"").split(b";")[0].strip()
        if tag is None and not content_type.startswith(_JSON):
            self.passing = True  # a stream, a page file: not ours to tag
            await self.send(message)
            return
        headers = self._cache_headers(headers, names)
        if tag is not None:
            await self._answer({**message, "headers": headers}, tag)
            return
        self.held = {**message, "headers": headers}

    async def _finish(self, body: bytes) -> None:
        held = self.held
        assert held is not None
        tag = digest_tag(body)
        held["headers"] = [*held["headers"], (b"etag", tag)]
        if none_match(self.asked, tag):
            await self._not_modified(held)
            return
        await self.send(held)
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    async def _answer(self, message: dict[str, Any], tag: bytes) -> None:
        """A response whose handler set its tag: 304 if it is the one asked for, else as it is."""
        if none_match(self.asked, tag):
            self.swallow = True
            await self._not_modified(message)
            return
        self.passing = True
        await self.send(message)

    async def _not_modified(self, message: dict[str, Any]) -> None:
        headers = [(name, value) for name, value in message["headers"] if name.lower() in _KEPT]
        await self.send({"type": "http.response.start", "status": 304, "headers": headers})
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})

    def _cache_headers(self, headers: list[Any], names: dict[bytes, bytes]) -> list[Any]:
        if b"cache-control" not in names:
            headers.append((b"cache-control", b"private, no-cache" if self.private else b"no-cache"))
        vary = names.get(b"vary")
        if vary is None:
            headers.append((b"vary", b"Authorization"))
        elif b"authorization" not in vary.lower():
            headers = [(name, value + b", Authorization" if name.lower() == b"vary" else value)
                       for name, value in headers]
        return headers
