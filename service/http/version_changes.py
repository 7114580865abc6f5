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
from typing import Any
from urllib.parse import parse_qs, urlencode

import msgspec

JSON_TYPES = (b"application/json", b"application/problem+json")
_SSE = b"text/event-stream"
_TAG = re.compile(rb'(W/)?"([^"]*)"')


class VersionChange:
    """One change between a version and the one before it; a subclass overrides what it changes."""

    description: str = ""
    operations: tuple[str, ...] = ()
    """``"METHOD /path/{param}"`` of every operation whose requests or replies this change touches."""

    def upgrade_request(self, operation: str, query: dict[str, list[str]], body: Any) -> Any:
        """A request of the older version as the newer version takes it: ``query`` changed in
        place, the (decoded JSON) body returned; ``None`` when there is no body."""
        return body

    def downgrade_reply(self, operation: str, status: int, body: Any) -> Any:
        """A (decoded JSON) reply of the newer version in the older version's shape."""
        return body

    def downgrade_message(self, operation: str, event: str, data: Any) -> Any:
        """A stream message's (decoded JSON) data of the newer version in the older version's shape."""
        return data


def _pattern(operation: str) -> tuple[bytes, re.Pattern[str]]:
    method, _, template = operation.partition(" ")
    path = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template))
    return method.encode("ascii"), re.compile(f"^{path}$")


class Translation:
    """What the requests and replies of one older version go through (see the module's docstring)."""

    def __init__(self, changes: Sequence[VersionChange], etag_suffix: str | None) -> None:
        self.changes = list(changes)  # oldest first
        self.suffix = None if etag_suffix is None else (";" + etag_suffix).encode("ascii")
        self._operations: list[tuple[bytes, re.Pattern[str], str]] = []
        for change in self.changes:
            for operation in change.operations:
                if all(operation != known for _, _, known in self._operations):
                    method, pattern = _pattern(operation)
                    self._operations.append((method, pattern, operation))

    def operation_of(self, method: bytes, path: str) -> str | None:
        """The operation some change touches that a request is, if any."""
        for wanted, pattern, operation in self._operations:
            if wanted == method and pattern.match(path):
                return operation
        return None

    # ---------------------------------------------------------------- ETags

    def tagged(self, value: bytes) -> bytes:
        """An ETag of the code as this version shows it."""
        suffix = self.suffix
        if suffix is None:
            return value
        return _TAG.sub(lambda m: (m.group(1) or b"") + b'"' + m.group(2) + suffix + b'"', value)

    def untagged(self, value: bytes) -> bytes:
        """A request's If-Match or If-None-Match as the code compares it: this version's tags lose
        the version's name; any other tag (another version's) is made one that never matches."""
        if value.strip() == b"*":
            return value

        def one(match: re.Match[bytes]) -> bytes:
            weak, tag = match.group(1) or b"", match.group(2)
            if self.suffix is None:
                return weak + (b'"' + tag + b'"' if b";" not in tag else b'"-"')
            if tag.endswith(self.suffix):
                return weak + b'"' + tag[: -len(self.suffix)] + b'"'
            return weak + b'"-"'

        return _TAG.sub(one, value)

    # ---------------------------------------------------------------- the ASGI side

    async def __call__(self, app: Any, scope: Any, receive: Any, send: Any) -> None:
        if any(name in (b"if-match", b"if-none-match") for name, _ in scope["headers"]):
            scope["headers"] = [
                (name, self.untagged(value)) if name in (b"if-match", b"if-none-match") else (name, value)
                for name, value in scope["headers"]
            ]
        operation = self.operation_of(scope["method"].encode("ascii"), scope["path"])
        if operation is None:
            await app(scope, receive, self._tagging(send))
            return
        changes = [change for change in self.changes if operation in change.operations]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        before = {k: list(v) for k, v in query.items()}
        if scope["method"] in ("POST", "PUT", "PATCH"):
            body = await _whole_body(receive)
            decoded: Any = None
            if body:
                try:
                    decoded = msgspec.json.decode(body)
                except msgspec.DecodeError:
                    decoded = _UNREADABLE  # the app refuses it in its own words
            if decoded is not _UNREADABLE:
                for change in changes:
                    decoded = change.upgrade_request(operation, query, decoded)
                if body or decoded is not None:
                    body = msgspec.json.encode(decoded)
            receive = _replaying(body, receive)
        else:
            for change in changes:
                change.upgrade_request(operation, query, None)
        if query != before:
            scope["query_string"] = urlencode(query, doseq=True).encode("latin-1")
        await app(scope, receive, self._downgrading(operation, changes[::-1], send))

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

    def _downgrading(self, operation: str, changes: list[VersionChange], send: Any) -> Any:
        held: dict[str, Any] = {}
        parts: list[bytes] = []

        async def downgrading(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = self._retagged(message.get("headers", ()))
                kind = _content_type(headers)
                message["headers"] = headers
                held["kind"] = kind
                if kind in JSON_TYPES:
                    held["start"] = message  # sent with the changed body and its length
                    return
                await send(message)
                return
            if message["type"] != "http.response.body" or "kind" not in held:
                await send(message)
                return
            if held["kind"] in JSON_TYPES:
                parts.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                start, body = held["start"], b"".join(parts)
                if body:
                    decoded = msgspec.json.decode(body)
                    for change in changes:
                        decoded = change.downgrade_reply(operation, start["status"], decoded)
                    body = msgspec.json.encode(decoded)
                start["headers"] = [(n, v) for n, v in start["headers"] if n != b"content-length"]
                start["headers"].append((b"content-length", b"%d" % len(body)))
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
            if held["kind"] == _SSE and message.get("body"):
                message = {**message, "body": _stream_downgraded(message["body"], operation, changes)}
            await send(message)

        return downgrading


_UNREADABLE = object()


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
