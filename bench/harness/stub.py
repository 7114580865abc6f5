"""The load generator's own speed: the client against a stub server that answers every request
at once with a canned (real) move response."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from .env import HOST
from .load import new_ceiling_game, run_load
from .processes import free_port

_STUB = r"""
import asyncio, sys
body = open(sys.argv[2], "rb").read()
response = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)) + body

class Stub(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""
    def data_received(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].lower()
            at = head.find(b"content-length:")
            length = int(head[at + 15:].split(b"\r\n")[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length:]
            self.transport.write(response)

async def main():
    server = await asyncio.get_running_loop().create_server(Stub, "127.0.0.1", int(sys.argv[1]))
    await server.serve_forever()

asyncio.run(main())
"""


async def load_generator_speed(sample_body: bytes, work_dir: Path, seconds: float) -> dict[str, Any]:
    """The client against a stub that answers every request with a real move response at once."""
    body_file = work_dir / "sample_move.json"
    body_file.write_bytes(sample_body)
    port = free_port()
    stub = subprocess.Popen([sys.executable, "-c", _STUB, str(port), str(body_file)])
    try:
        for _ in range(100):
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        games = []
        for _ in range(16):
            game = new_ceiling_game(port)
            game.real = True  # decode the (real) move body exactly like a service run
            games.append(game)
        result = await run_load(port, games, 0.5, seconds, None, None)
    finally:
        stub.terminate()
        stub.wait()
    result["body_bytes"] = len(sample_body)
    return result
