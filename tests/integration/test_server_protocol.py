"""service.server: every accepted connection gets TCP_NODELAY, even from a listening socket
bound the way uvicorn binds it for several workers (``proto == 0``, which asyncio skips)."""

from __future__ import annotations

import asyncio
import socket

from service.server import HTTP_PROTOCOL, NoDelayH11Protocol, enable_nodelay


async def accepted_nodelay(fix: bool) -> int:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, as uvicorn's bind_socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
            if fix:
                enable_nodelay(transport)
            sock = transport.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname())
        result = await asyncio.wait_for(seen, 5)
        writer.close()
        return result
    finally:
        server.close()


async def test_a_connection_accepted_on_a_proto_0_socket_gets_tcp_nodelay() -> None:
    assert await accepted_nodelay(fix=False) == 0, "asyncio set TCP_NODELAY itself: the workaround may be dropped"
    assert await accepted_nodelay(fix=True) != 0


def test_the_protocol_setting_names_uvicorns_h11_protocol_with_the_fix() -> None:
    from uvicorn.importer import import_from_string
    from uvicorn.protocols.http.h11_impl import H11Protocol

    protocol = import_from_string(HTTP_PROTOCOL)
    assert protocol is NoDelayH11Protocol and issubclass(protocol, H11Protocol)
