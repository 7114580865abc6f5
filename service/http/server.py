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
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

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


def enable_nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayHttpToolsProtocol(HttpToolsProtocol):
    # uvicorn's own class overrides asyncio's BaseTransport signature the same way (and ignores it too).
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        enable_nodelay(transport)
        super().connection_made(transport)
