"""The HTTP protocol the service is served with: uvicorn's h11 protocol with TCP_NODELAY set on
every connection.

asyncio turns Nagle's algorithm off for accepted TCP connections only when the listening socket
says ``proto == IPPROTO_TCP``. uvicorn binds the socket itself when it runs several worker
processes, and that socket says ``proto == 0`` (uvicorn issue #3149), so with ``WORKERS=2`` every
response after the first on a keep-alive connection waited for the client's delayed ACK: about
44 ms per request on Linux. Setting the option on each connection fixes that whatever bound the
socket; with one worker it was already set, and setting it again changes nothing.
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

HTTP_PROTOCOL = "service.server:NoDelayH11Protocol"
"""For uvicorn's ``http`` setting (``--http`` on its command line)."""


def enable_nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        enable_nodelay(transport)
        super().connection_made(transport)
