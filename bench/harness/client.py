"""A minimal asyncio HTTP/1.1 keep-alive client: requests built once as raw bytes, no httpx."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

import msgspec

from .env import HOST

API_VERSION = os.environ.get("BENCH_API_VERSION", "").strip()
"""``BENCH_API_VERSION=<date>``: every request names that API version (default: none, so the
oldest served, as a client that sends none gets)."""


def seed_deal(seed: int) -> dict[str, Any]:
    """A deal by seed as the version the requests name writes it (tagged from 2026-12-05 on)."""
    return {"source": "seed", "seed": seed} if API_VERSION > "2026-12-04" else {"seed": seed}


def build_request(method: str, path: str, port: int, body: Any = None, token: str | None = None,
                  headers: dict[str, str] | None = None) -> bytes:
    """The complete request bytes (built once, written as is for every repetition)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    if API_VERSION:
        lines.append(f"Api-Version: {API_VERSION}")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    payload = b""
    if body is not None:
        payload = msgspec.json.encode(body)
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(payload)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


class Connection:
    """One keep-alive connection; ``request`` writes raw bytes and reads one response."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port, limit=1 << 20)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """(status, body); a broken connection is reopened on the next call and reported as status 0."""
        if self.writer is None:
            await self.open()
        reader, writer = self.reader, self.writer
        assert reader is not None
        assert writer is not None
        try:
            writer.write(raw)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            lower = head.lower()
            start = lower.find(b"\r\ncontent-length:")
            if start >= 0:
                end = lower.index(b"\r\n", start + 2)
                body = await reader.readexactly(int(lower[start + 17 : end]))
            elif b"\r\ntransfer-encoding: chunked" in lower:
                body = await self._chunked(reader)
            else:
                body = b""
            if b"\r\nconnection: close" in lower:
                self.close()
            return status, body
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            self.close()
            return 0, b""

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)


async def call(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """One request on a fresh connection, the body decoded (setup only, not measured)."""
    conn = Connection(port)
    try:
        status, raw = await conn.request(build_request(method, path, port, body, token))
    finally:
        conn.close()
    return status, msgspec.json.decode(raw) if raw else None
