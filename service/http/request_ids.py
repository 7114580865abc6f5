"""Request ids and the access log: one id per request, in the reply, in every problem, in the log.

``RequestIds`` wraps the whole app (outermost, so a 429 of the rate limiter carries the id too).
It also says every answer's API version and refuses an unknown one (``service.http.versions``),
in the same wrapper of ``send`` rather than a layer of its own:

* the id is the client's ``X-Request-Id`` when it sends a sensible one (1-128 visible ASCII
  characters), else the trace id of a W3C ``traceparent`` header, else a new random one;
* every response carries it as ``X-Request-Id``, and every problem+json as its ``instance``
  (``urn:canfield:request:<id>``), so a client reporting an error can quote it and an operator
  finds the request's log line by it;
* one log line per request on the ``canfield.access`` logger: method, route (the path template,
  never the raw path), status, duration, the client address, the player when a token was
  checked, and the id; never a token or a body. ``JsonFormatter`` writes log records as JSON
  lines (``canfield serve`` installs it; ``LOG_FORMAT=text`` keeps plain lines).

In a server process (``configure_logging``) the access lines do not go through ``logging``: an
``AccessLines`` encodes each line at once and writes the lines finished in one turn of the event
loop together, in one write to standard error. A log record, its handler's lock and a write per
request cost about a tenth of a move's server CPU (``python -m bench cpu``). Anywhere else (the
tests' in-process servers, an embedding program) they are records of ``canfield.access``.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import re
import sys
import time
from typing import Any, BinaryIO

import msgspec

from ..context import PLAYER, REQUEST_ID
from .metrics import RequestMetrics
from .versions import SERVED, Version, Versions

_GIVEN = re.compile(rb"[\x21-\x7e]{1,128}")
_TRACEPARENT = re.compile(rb"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")
access_log = logging.getLogger("canfield.access")


def request_id_of(headers: list[tuple[bytes, bytes]]) -> str:
    """The request's id: the client's X-Request-Id, the trace id of its traceparent, or new."""
    given = trace = None
    for name, value in headers:
        if name == b"x-request-id" and given is None and _GIVEN.fullmatch(value):
            given = value.decode("ascii")
        elif name == b"traceparent" and trace is None:
            found = _TRACEPARENT.fullmatch(value.strip())
            if found is not None and found.group(1) != b"0" * 32:
                trace = found.group(1).decode("ascii")
    return given or trace or os.urandom(16).hex()


class RequestIds:
    """``app.asgi_handler = RequestIds(app.asgi_handler)``, outermost."""

    def __init__(self, app: Any, metrics: RequestMetrics | None = None, versions: Versions = SERVED) -> None:
        self.app = app
        self.metrics = metrics  # the request histogram (service.http.metrics), unless METRICS=off
        self.versions = versions  # the API versions served (service.http.versions)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope["headers"])
        token = REQUEST_ID.set(request_id)
        player = PLAYER.set(None)
        started = time.perf_counter()
        status = 500
        version = self.versions.requested(scope["headers"])  # Api-Version: in this layer, not one more
        if isinstance(version, Version):
            scope["api_version"] = version
            added = [(b"x-request-id", request_id.encode("ascii")), *version.headers]
        else:
            added = [(b"x-request-id", request_id.encode("ascii"))]

        async def tagged(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), *added]
            await send(message)

        try:
            if not isinstance(version, Version):
                await self.versions.refuse(version, tagged)
            elif (translation := self.versions.translation(version)) is not None:
                await translation(self.app, scope, receive, tagged)  # an older version's shapes
            else:
                await self.app(scope, receive, tagged)
        finally:
            seconds = time.perf_counter() - started
            _log(scope, status, seconds, request_id)
            if self.metrics is not None:
                self.metrics.observe(scope, status, seconds)
            REQUEST_ID.reset(token)
            PLAYER.reset(player)


def _log(scope: Any, status: int, seconds: float, request_id: str) -> None:
    client = scope.get("client")
    fields = {
        "request_id": request_id,
        "method": scope.get("method"),
        "route": scope.get("path_template") or "(no route)",
        "status": status,
        "duration_ms": round(seconds * 1000, 3),
        "client": client[0] if client else None,
        "player": PLAYER.get(),
    }
    lines = AccessLines.installed
    if lines is not None:
        lines.write(fields)
    elif access_log.isEnabledFor(logging.INFO):  # a record's fields are plain values, as its line shows them
        player = fields["player"]
        fields["player"] = None if player is None else str(player)
        access_log.info("request", extra={"fields": fields})


class AccessLines:
    """The access log of a server process: each line encoded when its request ends, the lines of
    one turn of the event loop written together at the loop's next turn (or at once, with no
    loop running). The same lines ``JsonFormatter`` (or, with ``text``, the plain format) makes."""

    installed: AccessLines | None = None
    """The server process's, set by ``configure_logging``."""

    def __init__(self, stream: BinaryIO, text: bool = False) -> None:
        self.stream = stream
        self.text = text
        self._lines: list[bytes] = []
        self._second = -1
        self._stamp = ""
        self._encode = msgspec.json.Encoder().encode

    def write(self, fields: dict[str, Any]) -> None:
        self._lines.append(self._line(fields))
        if len(self._lines) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop here: now
                self.flush()

    def flush(self) -> None:
        lines, self._lines = self._lines, []
        if lines:
            self.stream.write(b"".join(lines))
            self.stream.flush()

    def _line(self, fields: dict[str, Any]) -> bytes:
        now = time.time()
        second = int(now)
        if second != self._second:  # the date part, made once a second
            self._second, self._stamp = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        stamp = f"{self._stamp}.{int((now - second) * 1000):03d}"
        if self.text:
            return f"{stamp.replace('T', ' ')} INFO canfield.access request {_text(fields)}\n".encode()
        entry = {"time": stamp + "Z", "level": "info", "logger": "canfield.access", "message": "request", **fields}
        return self._encode(entry) + b"\n"


def _text(fields: dict[str, Any]) -> str:
    return " ".join(f"{name}={value}" for name, value in fields.items() if value is not None)


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object on one line: time, level, logger, message and the
    record's ``fields`` (the access log's), with a traceback as a string when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        request_id = REQUEST_ID.get()
        if request_id is not None and "request_id" not in entry:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(format_name: str) -> None:
    """The service's log lines on standard error: JSON (the default) or plain text."""
    handler = logging.StreamHandler()
    if format_name == "text":
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    else:
        formatter = JsonFormatter()
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
    root = logging.getLogger("canfield")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    stream = getattr(sys.stderr, "buffer", None)  # None: standard error was replaced by text-only one
    AccessLines.installed = None if stream is None else AccessLines(stream, text=format_name == "text")
    if AccessLines.installed is not None:
        atexit.register(AccessLines.installed.flush)
