"""Live streams on the production server (``service.http.server``, in a subprocess) end cleanly when
their clients vanish: the slot comes back without waiting for a keep-alive to fail, nothing is
logged as an error, and the server still stops at once."""

from __future__ import annotations

import signal
import socket
import struct
import time
from pathlib import Path

import httpx

from ..live import ServerProcess
from .conftest import Player

CAP = 3
WAIT = 5.0


def try_raw_stream(port: int, game_id: str, token: str) -> socket.socket | None:
    """A stream on a raw socket, read up to its first message (the view); None if refused (429)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(
        f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
    )
    received = b""
    while b"event: view" not in received:
        if b"\r\n\r\n" in received and received.startswith(b"HTTP/1.1 429"):
            sock.close()
            return None
        chunk = sock.recv(65536)
        assert chunk, f"the stream closed before its first message: {received[:300]!r}"
        received += chunk
    assert received.startswith(b"HTTP/1.1 200"), received[:300]
    return sock


def open_raw_stream(port: int, game_id: str, token: str) -> socket.socket:
    sock = try_raw_stream(port, game_id, token)
    assert sock is not None, "refused: 429"
    return sock


def vanish(sock: socket.socket, how: str) -> None:
    if how == "reset":  # RST: as if the client's machine dropped the connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    elif how == "half-close":
        sock.shutdown(socket.SHUT_WR)
    sock.close()


def test_streams_whose_clients_vanish_end_and_give_their_slots_back(clean_database: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    # the default keep-alive (15 s): the server must notice the disconnect itself, not by a failed write
    server = ServerProcess(clean_database, log, env={"STREAMS_PER_PLAYER": str(CAP)})
    try:
        server.wait_until_up()
        with httpx.Client(base_url=server.url, timeout=10) as client:
            ann = Player(client, "Ann")
            game = ann.new_game(deal={"seed": 5})
            streams = [open_raw_stream(server.port, game["id"], ann.token) for _ in range(CAP)]
            refused = client.get(f"/games/{game['id']}/stream", headers=ann.auth)
            assert refused.status_code == 429, refused.text  # the cap is reached
            for sock, how in zip(streams, ("reset", "half-close", "close"), strict=True):
                vanish(sock, how)

            deadline = time.monotonic() + WAIT  # well before the first keep-alive (15 s)
            reopened: list[socket.socket] = []
            while len(reopened) < CAP:
                sock = try_raw_stream(server.port, game["id"], ann.token)
                if sock is None:
                    assert time.monotonic() < deadline, "the vanished streams still hold their slots"
                    time.sleep(0.05)
                    continue
                reopened.append(sock)
            assert ann.move(game["id"], {"type": "draw"}).status_code == 200
            for sock in reopened:  # the move reaches every new stream
                received = b""
                while b"event: game-event" not in received:
                    chunk = sock.recv(65536)
                    assert chunk, "a new stream closed"
                    received += chunk
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)  # with streams open: they end, the server stops
            assert server.process.wait(timeout=10) in (0, -signal.SIGTERM)
            assert time.monotonic() - started < 10
            for sock in reopened:
                sock.close()
        text = log.read_text(errors="replace")
        for sign in ("Traceback", "ERROR", "Exception in ASGI application"):
            assert sign not in text, text[-3000:]
    finally:
        server.kill()
