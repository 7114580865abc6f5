"""How the service is served: uvicorn with httptools (its C HTTP/1.1 parser) on the uvloop event
loop, TCP_NODELAY on every connection. ``canfield serve``, the tests and the benchmarks all take
their server options from here, so they run what production runs.

Why this server (docs/scaling.md has the figures): for the move-shaped request (a POST with a
small JSON body) uvicorn with httptools and uvloop costs about 80 us of server CPU per request,
as little as granian and half of uvicorn with h11 (170 us), while keeping uvicorn's lifespan,
graceful shutdown, streaming and ``FORWARDED_ALLOW_IPS`` behaviour, which the tests pin.

TCP_NODELAY: asyncio turns Nagle's algorithm off for accepted TCP connections only when the
listening socket says ``proto == IPPROTO_TCP``. uvicorn binds the socket itself when it runs
several worker processes, and that socket says ``proto == 0`` (uvicorn issue #3149), so with
``WORKERS=2`` on asyncio every response after the first on a keep-alive connection waited for the
client's delayed ACK: about 44 ms per request on Linux. uvloop sets the option on every TCP
connection; the protocol below sets it too, so the service is safe whatever loop runs it (uvloop
does not exist on Windows).

One write per response: uvicorn writes a response's head and its body separately, two system
calls and two packets; ``HeadWithBody`` sends them as one (``python -m bench cpu`` with
``CPU_STRACE=1``: 2.0 -> 1.0 writes per request).

Stopping (``run``): on SIGTERM or SIGINT the server stops accepting connections, lets every request
in flight finish (moves, and the group-commit batches they wait on) for up to
``SHUTDOWN_TIMEOUT_SECONDS``, ends open streams with a ``shutdown`` message (the stream hub chains
the signal, service.streams.hub), then runs the app's shutdown and exits. With several workers
uvicorn's parent process keeps its copy of the listening socket open while the workers drain, so
new connections would wait in the backlog and then be reset; ``Draining`` closes it first, and a
new connection is refused at once.

Request heads have limits (``HEAD_BYTES_MAX``, ``HEADERS_MAX``): httptools has none of its own and
gathers a header's name and value in memory however long they grow, so the protocol counts the
bytes of a request's head as they arrive and hands the parser no more than 16 KiB of one: a head
that has not ended by then, or that holds more than 100 headers, is answered ``431`` as
problem+json and the connection closed, the rest never kept.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import os
import shutil
import socket
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.supervisors.multiprocess import Multiprocess

from ..context import REQUEST_ID

HTTP_PROTOCOL = "service.http.server:NoDelayHttpToolsProtocol"
"""For uvicorn's ``http`` setting (``--http`` on its command line)."""

LOOP = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
"""For uvicorn's ``loop`` setting: never "auto", which would fall back to asyncio silently."""


def uvicorn_options() -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config``."""
    return {"http": HTTP_PROTOCOL, "loop": LOOP}


def uvicorn_arguments() -> list[str]:
    """The same options for uvicorn's command line (``python -m uvicorn ...``)."""
    return ["--http", HTTP_PROTOCOL, "--loop", LOOP]


def run(app: str, *, host: str, port: int, workers: int, shutdown_seconds: int) -> bool:
    """Serve the ASGI app ``app`` (an import string) until SIGINT or SIGTERM, as ``uvicorn.run``
    would, then drain (the module's docstring); whether the server started."""
    config = uvicorn.Config(
        app, host=host, port=port, workers=workers, access_log=False, timeout_graceful_shutdown=shutdown_seconds,
        **uvicorn_options(),
    )
    if workers > 1:
        Draining(config, sockets=[config.bind_socket()]).run()
        return True
    server = uvicorn.Server(config)
    server.run()
    return server.started


class Draining(Multiprocess):
    """uvicorn's worker supervisor, which closes its own copy of the listening socket before it
    tells the workers to stop: once they have closed theirs, nothing listens, and a new connection
    is refused rather than left in the backlog."""

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()
@contextmanager
def metrics_directory() -> Iterator[str]:
    """A fresh, empty ``PROMETHEUS_MULTIPROC_DIR`` for the server processes started inside (they
    inherit the environment, and prometheus-client picks multiprocess mode when it is first
    imported), removed afterwards: each server process writes its metrics to files there and a
    scrape of any of them adds them up (``service.http.metrics``). Values of an earlier run never
    leak into a new one. Enter it before anything imports prometheus-client."""
    previous = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    directory = tempfile.mkdtemp(prefix="canfield-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    try:
        yield directory
    finally:
        if previous is None:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        else:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = previous
        shutil.rmtree(directory, ignore_errors=True)


def enable_nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class HeadWithBody:
    """A connection's transport that sends a response's head together with the start of its body.

    uvicorn writes the status line and headers, then the body, as two writes: two system calls and,
    with TCP_NODELAY, two packets for every small response (about a tenth of a move's server CPU).
    Here a write that is a response head (``HTTP/1.1 ...`` up to its blank line) is held until the
    next write, which carries both, or until the event loop's next turn, or a close: nothing is
    reordered and nothing waits longer than the current callback. Everything else is the transport's.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data[:9] == b"HTTP/1.1 " and data[-4:] == b"\r\n\r\n" and data[9:10] != b"1":  # not 100 Continue
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def writelines(self, lines: Any) -> None:
        self.flush()
        self._transport.writelines(lines)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


REQUEST_SECONDS = float(os.environ.get("REQUEST_TIMEOUT_SECONDS") or 30.0)
"""How long a client has to send a request whole (its head and its body), from its first byte, and
a new connection to start one. uvicorn closes a keep-alive connection that stays idle between
requests (``timeout_keep_alive``, 5 s), but not one that never sends anything or sends a request
a byte at a time: without this, such connections stay open for good. ``REQUEST_TIMEOUT_SECONDS``
sets it (docs/configuration.md)."""


HEAD_BYTES_MAX = 16 * 1024
"""The most bytes a request's head (its request line and headers) may take."""

HEADERS_MAX = 100
"""The most header lines a request may send."""


LINGER_SECONDS = 2.0
"""How long a connection whose head was refused still takes (and drops) what the client sends."""


class _HeadRefused(Exception):
    """Raised in a parser callback to stop httptools once the head is over a limit."""


class NoDelayHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with TCP_NODELAY, one write per response, a deadline for each
    request to arrive whole (``REQUEST_SECONDS``) and limits on a request's head (``HEAD_BYTES_MAX``,
    ``HEADERS_MAX``)."""

    request_seconds = REQUEST_SECONDS
    _deadline: asyncio.TimerHandle | None = None
    _begun: float | None = None  # when the request being received began (None: none is)
    _in_head = True  # the bytes arriving belong to a request's head (or to the gap before one)
    _head_bytes = 0  # how many of them have been handed to the parser
    _refused = False  # a 431 was sent: the connection is closing, nothing more is read

    # uvicorn's own class overrides asyncio's BaseTransport signature the same way (and ignores it too).
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        enable_nodelay(transport)
        super().connection_made(HeadWithBody(transport, self.loop))  # type: ignore[arg-type]
        self._arm(self.request_seconds)  # to start a request

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._cancel()
        self._begun = self.loop.time()

    def on_message_complete(self) -> None:
        self._begun = None
        self._cancel()
        self._in_head, self._head_bytes = True, 0  # the next request's head
        super().on_message_complete()

    def on_headers_complete(self) -> None:
        # Counted once the head is whole, not header by header (a call less per header of every
        # request): the head's 16 KiB already bound how many headers can be held meanwhile.
        if len(self.headers) > HEADERS_MAX:
            self._refuse_head(f"a request may send at most {HEADERS_MAX} header lines; this one sent more")
            raise _HeadRefused
        self._in_head = False
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # else the parser stopped because the head was refused (_HeadRefused)
            super().send_400_response(msg)

    def data_received(self, data: bytes) -> None:
        """The parser is handed at most ``HEAD_BYTES_MAX`` bytes of a request's head: a head not
        over by then is refused (431) and nothing more is read. A request that arrives whole in one
        read (nearly all) needs no timer; one still arriving when the read is done gets one, for
        what is left of its time."""
        if self._refused:
            return
        if self._in_head:
            room = HEAD_BYTES_MAX - self._head_bytes
            if len(data) > room:
                self._head_bytes = HEAD_BYTES_MAX
                self._receive(data[:room])
                if self._in_head and not self._refused and not self.transport.is_closing():
                    self._refuse_head(f"a request's line and headers may take at most {HEAD_BYTES_MAX // 1024} KiB; "
                                      "this one's are larger")
                if not self._refused and not self.transport.is_closing():
                    self.data_received(data[room:])  # a body, or the head of the next request
                return
            self._head_bytes += len(data)
        self._receive(data)

    def _receive(self, data: bytes) -> None:
        super().data_received(data)
        begun = self._begun
        if begun is not None and self._deadline is None and not self.transport.is_closing():
            self._arm(begun + self.request_seconds - self.loop.time())

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        cycle.send_500_response = functools.partial(_unavailable_if_cancelled, cycle, cycle.send_500_response)
        super()._start_asgi_task(cycle, app)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _arm(self, seconds: float) -> None:
        self._cancel()
        self._deadline = self.loop.call_later(max(seconds, 0.0), self._too_slow)

    def _refuse_head(self, detail: str) -> None:
        """Answer ``431 headers_too_large`` (problem+json) and close the connection."""
        self._refused = True
        self._cancel()
        request_id = os.urandom(16).hex()
        token = REQUEST_ID.set(request_id)
        try:
            from .problems import problem_document

            body = msgspec.json.encode(problem_document(431, "headers_too_large", detail,
                                                        "Request header fields too large"))
        finally:
            REQUEST_ID.reset(token)
        head = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/problem+json\r\n"
                b"content-length: %d\r\nconnection: close\r\nx-request-id: %s\r\n\r\n"
                % (len(body), request_id.encode("ascii")))
        self.transport.write(head + body)
        # Lingering close: stop sending, drop whatever the client still sends, close soon after. Closing
        # at once, with its bytes unread, would reset the connection, and a reset can destroy the 431
        # before the client reads it.
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()

    def _too_slow(self) -> None:
        """The request did not arrive whole in time: the connection is closed (an application
        still waiting for the body hears that the client went away)."""
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


async def _unavailable_if_cancelled(cycle: Any, answer_500: Callable[[], Awaitable[None]]) -> None:
    """What uvicorn answers a request whose app raised before it started a response. When that
    was the cancellation of a request still running at the end of a shutdown
    (``SHUTDOWN_TIMEOUT_SECONDS``), the answer is ``503 unavailable`` as problem+json, with
    ``Retry-After`` and the request's id, rather than uvicorn's plain-text 500: the server is
    going away, not broken."""
    task = asyncio.current_task()
    if task is None or not task.cancelling():
        await answer_500()
        return
    from .problems import problem_document
    from .request_ids import request_id_of

    request_id = request_id_of(cycle.scope["headers"])
    token = REQUEST_ID.set(request_id)
    try:
        body = msgspec.json.encode(problem_document(
            503, "unavailable", "the server is shutting down and stopped this request; send it again"
        ))
    finally:
        REQUEST_ID.reset(token)
    headers = [(b"content-type", b"application/problem+json"), (b"content-length", b"%d" % len(body)),
               (b"retry-after", b"1"), (b"connection", b"close"), (b"x-request-id", request_id.encode("ascii"))]
    await cycle.send({"type": "http.response.start", "status": 503, "headers": headers})
    await cycle.send({"type": "http.response.body", "body": body})
