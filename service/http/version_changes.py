"""Version changes: how an older API version is served by code that has the newest shapes.

Each change between one version and the next is a ``VersionChange``: the operations it touches
(``"GET /races/{race_id}"``), how a request written for the older version becomes one of the
newer (``upgrade_request``: its query and its JSON body), and how a reply or a stream message of
the newer version is shown in the older shape (``downgrade_reply``, ``downgrade_message``). A
change is small and tested on its own; it never copies a handler.

A request in version V goes through ``Translation``, made of the changes of every version after V:
its request upgraded through them oldest first, its reply downgraded newest first. Only the
operations some change touches are translated, so every other request (and every request in the
newest version) passes as it is. A translated JSON reply is read whole, changed and sent with its
new length; a stream (``text/event-stream``) is changed message by message as it is sent.

ETags differ between versions of one resource: every version after the first adds its name to
each ETag (``"12"`` is ``"12;2026-12-20"`` in that version), and the ``If-Match`` and
``If-None-Match`` of a request lose it again before the app compares them, so a version's own
tags match and another version's never do. The first version's tags are the code's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlencode

import msgspec

from ..errors import BadRequest, ServiceError
from .json_bodies import check_json_body
from .problems import PROBLEM_JSON, problem_document

JSON_TYPES = (b"application/json", b"application/problem+json")
_SSE = b"text/event-stream"
_LINES = (b"application/x-ndjson", b"text/plain")
PLAIN_BODIES = frozenset({"POST /games/{game_id}/moves"})
"""Operations whose route downgrades its own (200) reply, typed (a ``MoveResult``: each change
replaces what it changed, ``changes.with_moved_view``), before encoding it once
(``scope[DOWNGRADE]``), so that a move of an older version costs no decode and second encode
(service.http.move_route); their request bodies are passed as they are (no change upgrades one),
and any other reply (a refusal) is downgraded here as usual."""
DOWNGRADE = "canfield.downgrade"
SHAPED = "canfield.shaped"
"""Set in the scope by a route of PLAIN_BODIES once its reply is in the older shape."""
_TAG = re.compile(rb'(W/)?"([^"]*)"')
_NEVER = b'"0"'
"""Another version's tag as the code compares it: version 0, which no game is ever at (an
``If-Match`` with it is a 412 ``version_conflict``; an ``If-None-Match`` never matches)."""


class VersionChange:
    """One change between a version and the one before it; a subclass overrides what it changes."""

    description: str = ""
    operations: tuple[str, ...] = ()
    """``"METHOD /path/{param}"`` of every operation whose requests or replies this change touches."""

    def upgrade_request(
        self, operation: str, query: dict[str, list[str]], body: Any, headers: Sequence[tuple[bytes, bytes]]
    ) -> Any:
        """A request of the older version as the newer version takes it: ``query`` changed in
        place, the (decoded JSON) body returned (``None`` when there is none): the same object when
        it is unchanged, else a new one (never changed in place); ``headers`` are the request's, to read."""
        return body

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        """A (decoded JSON) reply of the newer version in the older version's shape: a new body, or
        the one given changed in place (every body given is this request's own, decoded from its
        reply); for ``PLAIN_BODIES``, the route's typed reply, never changed in place."""
        return body

    def downgrade_headers(self, operation: str, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        """A reply's headers of the newer version as the older version gives them, changed in place."""

    @property
    def rewrites_headers(self) -> bool:
        return _overrides(self, "downgrade_headers")

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        """A stream message's (decoded JSON) data of the newer version in the older version's shape:
        a Server-Sent Event's (``event``: its name) or an NDJSON line's (``event``: ``""``)."""
        return data

    def downgrade_schema(self, document: dict[str, Any]) -> None:
        """The OpenAPI document of the newer version made the older version's, in place: the
        request and reply shapes this change changes, as the older version has them."""


def _pattern(operation: str) -> tuple[str, str]:
    method, _, template = operation.partition(" ")
    return method, re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template))


class Translation:
    """What the requests and replies of one older version go through (see the module's docstring)."""

    def __init__(self, changes: Sequence[VersionChange], etag_suffix: str | None) -> None:
        self.changes = list(changes)  # oldest first
        self.suffix = None if etag_suffix is None else (";" + etag_suffix).encode("ascii")
        operations = list(dict.fromkeys(operation for change in self.changes for operation in change.operations))
        self._touched: dict[str, tuple[list[VersionChange], list[VersionChange], Any]] = {}
        for operation in operations:  # each operation's changes that upgrade a request (oldest first), its replies'
            touching = [change for change in self.changes if operation in change.operations]
            upgrading = [change for change in touching if _overrides(change, "upgrade_request")]
            downgrading = touching[::-1]  # newest first
            plain = partial(self.downgraded, operation, downgrading) if operation in PLAIN_BODIES else None
            self._touched[operation] = (upgrading, downgrading, plain)
        by_method: dict[str, list[str]] = {}
        for index, operation in enumerate(operations):
            method, path = _pattern(operation)
            by_method.setdefault(method, []).append(f"(?P<o{index}>{path})")
        self._names = {f"o{index}": operation for index, operation in enumerate(operations)}
        self._patterns = {  # one pattern per method: a request's operation in one match
            method: re.compile("^(?:" + "|".join(paths) + ")$") for method, paths in by_method.items()
        }

    def operation_of(self, method: str, path: str) -> str | None:
        """The operation some change touches that a request is, if any."""
        pattern = self._patterns.get(method)
        found = None if pattern is None else pattern.match(path)
        return None if found is None or found.lastgroup is None else self._names[found.lastgroup]

    # ---------------------------------------------------------------- ETags

    def tagged(self, value: bytes) -> bytes:
        """An ETag of the code as this version shows it."""
        suffix = self.suffix
        if suffix is None:
            return value
        if value.count(b'"') == 2 and value.endswith(b'"'):  # one tag, "12" or W/"12": every ETag the code sets
            return value[:-1] + suffix + b'"'
        return _TAG.sub(lambda m: (m.group(1) or b"") + b'"' + m.group(2) + suffix + b'"', value)

    def untagged(self, value: bytes) -> bytes:
        """A request's If-Match or If-None-Match as the code compares it: this version's tags lose
        the version's name; any other tag (another version's) is made one that never matches."""
        if value.strip() == b"*":
            return value

        def one(match: re.Match[bytes]) -> bytes:
            weak, tag = match.group(1) or b"", match.group(2)
            if self.suffix is None:
                return weak + (b'"' + tag + b'"' if b";" not in tag else _NEVER)
            if tag.endswith(self.suffix):
                return weak + b'"' + tag[: -len(self.suffix)] + b'"'
            return weak + _NEVER

        return _TAG.sub(one, value)

    # ---------------------------------------------------------------- the ASGI side

    async def __call__(self, app: Any, scope: Any, receive: Any, send: Any) -> None:
        headers = scope["headers"]
        for name, _ in headers:
            if name == b"if-match" or name == b"if-none-match":
                scope["headers"] = headers = [
                    (n, self.untagged(v)) if n in (b"if-match", b"if-none-match") else (n, v) for n, v in headers
                ]
                break
        operation = self.operation_of(scope["method"], scope["path"])
        if operation is None:
            await app(scope, receive, self._tagging(send))
            return
        upgrading, downgrading, plain = self._touched[operation]
        if plain is not None and not upgrading:  # a move: the route downgrades its reply (see PLAIN_BODIES)
            scope[DOWNGRADE] = plain
            await app(scope, receive, self._downgrading(operation, downgrading, scope, send))
            return
        query_string = scope.get("query_string", b"")
        query = parse_qs(query_string.decode("latin-1"), keep_blank_values=True) if query_string else {}
        before = {k: list(v) for k, v in query.items()}
        try:
            if plain is not None:  # the route downgrades its own reply (see PLAIN_BODIES)
                for change in upgrading:
                    change.upgrade_request(operation, query, None, headers)
                scope[DOWNGRADE] = plain
            elif scope["method"] in ("POST", "PUT", "PATCH"):
                receive = await self._upgraded_body(operation, upgrading, query, headers, receive)
            else:
                for change in upgrading:
                    change.upgrade_request(operation, query, None, headers)
        except ServiceError as refusal:  # refused in the older version's own words
            await _refuse(refusal, self._tagging(send))
            return
        if query != before:
            scope["query_string"] = urlencode(query, doseq=True).encode("latin-1")
        await app(scope, receive, self._downgrading(operation, downgrading, scope, send))

    async def _upgraded_body(
        self, operation: str, changes: list[VersionChange], query: dict[str, list[str]],
        headers: Sequence[tuple[bytes, bytes]], receive: Any,
    ) -> Any:
        """A ``receive`` giving the request's JSON body as the newer version takes it (the bytes
        as sent when no change changed it: the app refuses a key given twice, say)."""
        body = await _whole_body(receive)
        decoded: Any = None
        if body:
            try:
                decoded = msgspec.json.decode(body)
            except (msgspec.DecodeError, RecursionError):
                return _replaying(body, receive)  # the app refuses it in its own words
        given = decoded
        for change in changes:
            decoded = change.upgrade_request(operation, query, decoded, headers)
        if decoded is not given:
            try:
                check_json_body(body)
            except BadRequest:  # a name twice: re-encoding would keep one unseen, so the app refuses it
                return _replaying(body, receive)
            body = msgspec.json.encode(decoded)
        return _replaying(body, receive)

    @staticmethod
    def downgraded(operation: str, changes: Sequence[VersionChange], status: int, body: Any) -> Any:
        for change in changes:
            body = change.downgrade_reply(operation, status, body)
        return body

    def _tagging(self, send: Any) -> Any:
        if self.suffix is None:
            return send

        async def tagging(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = self._retagged(message.get("headers", ()))
            await send(message)

        return tagging

    def _retagged(self, headers: Any) -> list[tuple[bytes, bytes]]:
        return [(name, self.tagged(value)) if name == b"etag" else (name, value) for name, value in headers]

    def _downgrading(self, operation: str, changes: list[VersionChange], scope: Any, send: Any) -> Any:
        held: dict[str, Any] = {}
        parts: list[bytes] = []

        async def downgrading(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = self._retagged(message.get("headers", ()))
                message["headers"] = headers
                if scope.get(SHAPED):  # a route that downgraded its own reply: passed as it is
                    held["kind"] = b""
                    await send(message)
                    return
                for change in changes:
                    if change.rewrites_headers:
                        change.downgrade_headers(operation, message["status"], headers)
                kind = _content_type(headers)
                held["kind"] = kind
                if held["kind"] in JSON_TYPES:
                    held["start"] = message  # sent with the changed body and its length
                    return
                await send(message)
                return
            if message["type"] != "http.response.body" or "kind" not in held:
                await send(message)
                return
            kind = held["kind"]
            if kind in JSON_TYPES:
                parts.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                start, body = held["start"], b"".join(parts)
                if body:
                    body = msgspec.json.encode(self.downgraded(
                        operation, changes, start["status"], msgspec.json.decode(body)))
                start["headers"] = [(n, v) for n, v in start["headers"] if n != b"content-length"]
                start["headers"].append((b"content-length", b"%d" % len(body)))
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
            if kind == _SSE and message.get("body"):
                message = {**message, "body": _stream_downgraded(message["body"], operation, changes)}
            elif kind in _LINES:
                lines = b"".join([*parts, message.get("body", b"")])
                parts.clear()
                complete, _, rest = lines.rpartition(b"\n")
                if rest:
                    parts.append(rest)  # half a line: sent with the rest of it
                if message.get("more_body", False) and not complete:
                    return
                shown = _lines_downgraded(complete + b"\n", operation, changes) if complete else b""
                if not message.get("more_body", False) and rest:
                    shown += _lines_downgraded(rest, operation, changes)
                    parts.clear()
                message = {**message, "body": shown}
            await send(message)

        return downgrading


async def _refuse(refusal: ServiceError, send: Any) -> None:
    body = msgspec.json.encode(problem_document(refusal.status, refusal.code, refusal.detail))
    await send({"type": "http.response.start", "status": refusal.status, "headers": [
        (b"content-type", PROBLEM_JSON.encode()), (b"content-length", b"%d" % len(body)),
    ]})
    await send({"type": "http.response.body", "body": body})


def _overrides(change: VersionChange, method: str) -> bool:
    return getattr(type(change), method) is not getattr(VersionChange, method)


def _content_type(headers: Sequence[tuple[bytes, bytes]]) -> bytes:
    for name, value in headers:
        if name == b"content-type":
            return value.split(b";")[0].strip().lower()
    return b""


async def _whole_body(receive: Any) -> bytes:
    parts = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _replaying(body: bytes, then: Any) -> Any:
    """A ``receive`` that gives the (changed) body once, then whatever the connection gives (a
    disconnect, in time)."""
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


def _lines_downgraded(chunk: bytes, operation: str, changes: list[VersionChange]) -> bytes:
    """NDJSON lines with each line's JSON in the older shape."""
    out = []
    for line in chunk.split(b"\n"):
        if line.strip():
            try:
                data = msgspec.json.decode(line)
            except msgspec.DecodeError:
                out.append(line)
                continue
            for change in changes:
                data = change.downgrade_message(operation, "", data)
            out.append(msgspec.json.encode(data))
            continue
        out.append(line)
    return b"\n".join(out)


def _stream_downgraded(chunk: bytes, operation: str, changes: list[VersionChange]) -> bytes:
    """Server-sent events (whole messages, as the streams send them) with each message's data
    in the older shape."""
    out = []
    for message in chunk.split(b"\n\n"):
        lines = message.split(b"\n")
        event = next((line[7:].decode() for line in lines if line.startswith(b"event: ")), "message")
        for index, line in enumerate(lines):
            if line.startswith(b"data: "):
                try:
                    data = msgspec.json.decode(line[6:])
                except msgspec.DecodeError:
                    continue  # not JSON: no shape to change
                for change in changes:
                    data = change.downgrade_message(operation, event, data)
                lines[index] = b"data: " + msgspec.json.encode(data)
        out.append(b"\n".join(lines))
    return b"\n\n".join(out)
