"""service.http.server: every accepted connection gets TCP_NODELAY, also with several worker processes
(uvicorn binds their shared listening socket with ``proto == 0``, which asyncio skips); checked on
the sockets of a real `canfield serve --workers 2`, and on a socket bound the way uvicorn binds it."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import socket
import sys
import time
from pathlib import Path

import psutil
import pytest

from service.http.server import HTTP_PROTOCOL, LOOP, NoDelayHttpToolsProtocol, enable_nodelay, uvicorn_options
from tests.integration.test_cli import Served, _env
from tests.live import free_port


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


def test_the_server_options_name_httptools_with_the_fix_and_never_auto() -> None:
    from uvicorn.importer import import_from_string
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    protocol = import_from_string(HTTP_PROTOCOL)
    assert protocol is NoDelayHttpToolsProtocol
    assert issubclass(protocol, HttpToolsProtocol)
    assert uvicorn_options() == {"http": HTTP_PROTOCOL, "loop": LOOP}
    if sys.platform != "win32":
        assert LOOP == "uvloop"  # a dependency wherever it exists; "auto" would fall back silently


_SYS_PIDFD_GETFD = 438  # Linux 5.6+, the same number on every architecture


def server_socket_nodelay(pid: int, fd: int) -> int:
    """TCP_NODELAY of file descriptor ``fd`` of process ``pid`` (a copy of it via pidfd_getfd)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
        if copy < 0:
            errno = ctypes.get_errno()
            pytest.skip(f"SKIPPED LOUDLY: cannot copy another process's socket (pidfd_getfd: {os.strerror(errno)}); "
                        "TCP_NODELAY of the real server is not checked on this machine")
    finally:
        os.close(pidfd)
    with socket.socket(fileno=copy) as sock:  # closing the copy leaves the server's connection open
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                    reason="SKIPPED LOUDLY: reading a server's socket options needs Linux's pidfd_getfd")
def test_every_connection_to_a_multi_worker_server_has_tcp_nodelay(tmp_path: Path, clean_database: str) -> None:
    """`canfield serve --workers 2`, as production runs it: each accepted connection, whichever
    worker took it, has Nagle's algorithm off (else ~44 ms per keep-alive request)."""
    port = free_port()
    served = Served(tmp_path, _env(DATABASE_URL=clean_database, PORT=str(port), WORKERS="2"), port)
    clients: list[socket.socket] = []
    workers: list[psutil.Process] = []
    try:
        assert served.wait_until_up("/health").status_code == 200
        deadline = time.monotonic() + 30
        while len(workers := _workers(served.process.pid)) < 2:
            assert time.monotonic() < deadline, "two workers did not start"
            time.sleep(0.1)
        for _ in range(12):  # the kernel hands connections to whichever worker accepts first
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
            clients.append(client)
            client.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
            assert client.recv(65536).startswith(b"HTTP/1.1 200"), "no answer"  # the connection stays open
        local_ports = {client.getsockname()[1] for client in clients}
        checked: dict[int, int] = {}  # worker pid -> connections checked
        for worker in workers:
            for connection in worker.net_connections(kind="tcp"):
                if connection.laddr and connection.laddr.port == port and connection.raddr \
                        and connection.raddr.port in local_ports:
                    assert server_socket_nodelay(worker.pid, connection.fd) != 0, f"worker {worker.pid}: Nagle is on"
                    checked[worker.pid] = checked.get(worker.pid, 0) + 1
        assert sum(checked.values()) == len(clients), f"found {checked} of {len(clients)} connections"
        assert served.stop(signal.SIGINT) == 0, served.output()
    finally:
        for client in clients:
            client.close()
        for worker in workers:  # killing `canfield serve` alone would leave its workers serving
            if worker.is_running():
                worker.kill()
        served.kill()


def _workers(pid: int) -> list[psutil.Process]:
    """uvicorn's worker processes under ``pid`` (started by multiprocessing's spawn)."""
    return [
        child for child in psutil.Process(pid).children(recursive=True) if "spawn_main" in " ".join(child.cmdline())
    ]
