"""Many games on many watches: ``python -m bench watch`` (on request).

One server process (as in production, rate limits and stream caps out of the way) on a fresh
database; ``WATCH_GAMES`` games (default 300); for each N of ``WATCH_CONNECTIONS`` (default
1,10,50,200) N connections each ``POST /watch`` all of those games, then ``WATCH_MOVERS`` clients
(default 8) play a draw and its undo, round after round, across every game for ``WATCH_SECONDS``
(default 10). It prints the moves per second made, the ``game-event`` and ``view`` messages per
second delivered to all connections together, the share of expected events that arrived (every
move's event on every connection), and the median and 99th percentile of a move's time to reach
the watches (from the reply to the move to its event on each watch).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from .harness.env import HOST, quick

PROJECT_ROOT = Path(__file__).resolve().parent.parent
GAMES = int(os.environ.get("WATCH_GAMES", "300"))
CONNECTIONS = [int(n) for n in os.environ.get("WATCH_CONNECTIONS", quick("1,10,50,200", "1,5")).split(",")]
MOVERS = int(os.environ.get("WATCH_MOVERS", "8"))
SECONDS = float(os.environ.get("WATCH_SECONDS", quick("10", "2")))
EVENT = b"event: game-event\n"
VIEW = b"event: view\n"


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.database import bench_database
    from .harness.processes import start_server, stop_server, wait_healthy

    with tempfile.TemporaryDirectory(prefix="canfield-watch-bench-") as work, bench_database(Path(work)) as db:
        caps = {"STREAMS_PER_PLAYER": "100000", "STREAMS_PER_ADDRESS": "100000"}
        server = start_server("service", "service.http.asgi:app", db.url, Path(work), caps)
        try:
            wait_healthy(server)
            rows = asyncio.run(_run(server.port))
        finally:
            stop_server(server)
    print(f"watch: {GAMES} games on each of N watch connections, {MOVERS} clients playing draw/undo across them "
          f"for {SECONDS:g} s, one server process ({db.description})")
    print("  N    | moves/s | events/s delivered | views/s delivered | delivered | to the watches p50 / p99")
    for n, moves, events, views, share, p50, p99 in rows:
        print(f"  {n:4d} | {moves:7.0f} | {events:18.0f} | {views:17.0f} | {share:8.1%} | "
              f"{p50 * 1000:6.1f} / {p99 * 1000:6.1f} ms")


class Watcher:
    """One watch connection: counts the messages that arrive, and when each game's events did."""

    def __init__(self) -> None:
        self.events = 0
        self.views = 0
        self.arrived: dict[bytes, float] = {}  # b"<game id>:<version>" -> when its game-event arrived
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def run(self, port: int, body: bytes) -> None:
        from .harness.client import build_request

        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 22)
        writer.write(build_request("POST", "/watch", port, msgspec.json.decode(body)))
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        buffer = b""
        try:
            while True:
                data = await reader.read(1 << 20)
                if not data:
                    return
                now = time.monotonic()
                buffer += data
                *messages, buffer = buffer.split(b"\n\n")
                for message in messages:
                    self._count(message, now)
        finally:
            writer.close()

    def _count(self, message: bytes, now: float) -> None:
        if EVENT in message:
            self.events += 1
            start = message.find(b"id: ") + 4
            self.arrived[message[start : message.index(b"\n", start)]] = now
        elif VIEW in message:
            self.views += 1
        elif b"event: watching" in message:
            self.ready.set()


async def _run(port: int) -> list[tuple[int, float, float, float, float, float, float]]:
    from .harness.client import call, seed_deal

    status, player = await call(port, "POST", "/players", {"name": "Watched"})
    assert status == 201, player
    token = player["token"]
    games = []
    for seed in range(GAMES):
        status, game = await call(port, "POST", "/games", {"ruleset": "classic", "deal": seed_deal(seed)}, token)
        assert status == 201, game
        games.append(game["id"])
    versions = dict.fromkeys(games, 1)
    return [await _round(port, token, games, versions, n) for n in CONNECTIONS]  # one after another


async def _round(port: int, token: str, games: list[str], versions: dict[str, int], n: int
                 ) -> tuple[int, float, float, float, float, float, float]:
    watchers = [Watcher() for _ in range(n)]
    body = msgspec.json.encode({"games": games})
    for watcher in watchers:
        watcher.task = asyncio.create_task(watcher.run(port, body))
    await asyncio.wait_for(asyncio.gather(*(w.ready.wait() for w in watchers)), 60)
    await asyncio.sleep(1.0)  # every first view sent
    for watcher in watchers:
        watcher.events = watcher.views = 0
    made: dict[bytes, float] = {}
    started = time.monotonic()
    await asyncio.gather(*(_mover(port, token, games[i::MOVERS], versions, made, started) for i in range(MOVERS)))
    elapsed = time.monotonic() - started
    await asyncio.sleep(1.0)  # the last moves reach the watches
    for watcher in watchers:
        assert watcher.task is not None
        watcher.task.cancel()
    await asyncio.gather(*(w.task for w in watchers if w.task is not None), return_exceptions=True)
    events = sum(w.events for w in watchers)
    delays = sorted(w.arrived[key] - at for w in watchers for key, at in made.items() if key in w.arrived)
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))] if delays else float("nan")
    return (n, len(made) / elapsed, events / elapsed, sum(w.views for w in watchers) / elapsed,
            events / max(1, len(made) * n), statistics.median(delays) if delays else float("nan"), p99)


async def _mover(port: int, token: str, games: list[str], versions: dict[str, int], made: dict[bytes, float],
                 started: float) -> None:
    """Draw, then undo it, in each of ``games`` in turn, until the time is up: two events a game a turn."""
    from .harness.client import Connection, build_request

    connection = Connection(port)
    draw, undo = {"type": "draw"}, {"type": "undo"}
    try:
        while time.monotonic() - started < SECONDS:
            for game in games:
                for move in (draw, undo):
                    status, _ = await connection.request(build_request("POST", f"/games/{game}/moves", port, move,
                                                                       token))
                    assert status == 200, status
                    versions[game] += 1
                    made[f"{game}:{versions[game]}".encode()] = time.monotonic()
                if time.monotonic() - started >= SECONDS:
                    return
    finally:
        connection.close()
