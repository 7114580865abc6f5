"""The load: clients each owning a connection and a game, playing draw/recycle in a timed window.

After ``BENCH_GAME_MOVES`` moves (default 300; 0: never) a client deals itself a new game, so
every level plays games of the same length.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .client import Connection, build_request, call, seed_deal
from .stats import CpuMeter, machine_busy_seconds, percentile

GAME_MOVES = int(os.environ.get("BENCH_GAME_MOVES", "300"))
CANFIELD_STOCK = 34  # 52 - 13 reserve - 1 foundation - 4 tableau: the ceiling's simulated stock
DRAW_COUNT = 3  # open-runs draws three


class _Stock(msgspec.Struct):
    count: int


class _Table(msgspec.Struct):
    stock: _Stock


class _View(msgspec.Struct):
    table: _Table


class _MoveResult(msgspec.Struct):
    game: _View


_decode_move = msgspec.json.Decoder(_MoveResult).decode



@dataclass
class Game:
    """One client's game: its prepared requests and what the server acknowledged."""

    id: str
    draw: bytes
    recycle: bytes
    stock: int
    real: bool  # a game of the service (True) or of the ceiling / stub (stock simulated)
    token: str | None = None  # the service player's bearer token
    acked: int = 0  # 200 responses (moves for the service, rows for the ceiling)
    sample: bytes = b""  # the last 200 body, for the load generator's self-check
    path: str = ""  # a simulated game's endpoint


async def new_service_game(port: int, seed: int) -> Game:
    status, player = await call(port, "POST", "/players", {"name": f"bench {seed}"})
    if status != 201:
        raise RuntimeError(f"POST /players answered {status}: {player}")
    token = player["token"]
    status, view = await call(
        port, "POST", "/games", {"ruleset": "open-runs", "deal": seed_deal(seed)}, token
    )
    if status != 201:
        raise RuntimeError(f"POST /games answered {status}: {view}")
    path = f"/games/{view['id']}/moves"
    return Game(
        id=view["id"],
        draw=build_request("POST", path, port, {"type": "draw"}, token),
        recycle=build_request("POST", path, port, {"type": "recycle"}, token),
        stock=view["table"]["stock"]["count"],
        real=True,
        token=token,
    )


_SEEDS = iter(range(100_000, 10**9))  # seeds of the games dealt during the runs


async def redeal(conn: Connection, game: Game) -> Game | None:
    """The client's next game, dealt on its own connection (None if the service refused)."""
    if not game.real:
        return new_ceiling_game(conn.port, game.path)
    deal = {"ruleset": "open-runs", "deal": seed_deal(next(_SEEDS))}
    status, body = await conn.request(build_request("POST", "/games", conn.port, deal, game.token))
    if status != 201:
        return None
    view = msgspec.json.decode(body)
    path = f"/games/{view['id']}/moves"
    return Game(
        id=view["id"],
        draw=build_request("POST", path, conn.port, {"type": "draw"}, game.token),
        recycle=build_request("POST", path, conn.port, {"type": "recycle"}, game.token),
        stock=view["table"]["stock"]["count"],
        real=True,
        token=game.token,
    )


def new_ceiling_game(port: int, path: str = "/ceiling") -> Game:
    """A simulated game for the ceiling app (``/ceiling``) or the bare endpoint (``/bare``)."""
    game_id = str(uuid.uuid4())
    token = secrets.token_urlsafe(32)  # sent like the service's bearer token, not checked
    return Game(
        id=game_id,
        draw=build_request("POST", path, port, {"game": game_id, "type": "draw"}, token),
        recycle=build_request("POST", path, port, {"game": game_id, "type": "recycle"}, token),
        stock=CANFIELD_STOCK,
        real=False,
        path=path,
    )


async def play_one(conn: Connection, game: Game) -> int:
    """One move: draw while the stock has cards, else recycle. Returns the status."""
    recycle = game.stock == 0
    status, body = await conn.request(game.recycle if recycle else game.draw)
    if status == 200:
        game.acked += 1
        if game.real:
            game.stock = _decode_move(body).game.table.stock.count
            game.sample = body
        else:
            game.stock = CANFIELD_STOCK if recycle else max(0, game.stock - DRAW_COUNT)
    return status


@dataclass
class Window:
    """What the clients saw between ``start`` and ``end`` (perf_counter_ns)."""

    start: int
    end: int
    latencies: list[int] = field(default_factory=list)  # ns, responses completed in the window
    ok: int = 0
    errors: int = 0


async def _client(conn: Connection, games: list[Game], window: Window) -> None:
    """Moves on the last of ``games`` until the window ends; after ``GAME_MOVES`` moves a new
    game is dealt (that request takes its time in the window but is not a move)."""
    perf = time.perf_counter_ns
    while True:
        sent = perf()
        if sent >= window.end:
            return  # never cancelled mid-request: every acknowledged move is counted
        game = games[-1]
        status = await play_one(conn, game)
        done = perf()
        if window.start <= done <= window.end:
            window.latencies.append(done - sent)
            if status == 200:
                window.ok += 1
            else:
                window.errors += 1
        if GAME_MOVES and game.acked >= GAME_MOVES:
            fresh = await redeal(conn, game)
            if fresh is None:
                window.errors += 1
            else:
                games.append(fresh)


async def run_load(
    port: int, games: list[Game], warmup: float, seconds: float, server: CpuMeter | None, db: CpuMeter | None
) -> dict[str, Any]:
    """C clients (one per game, each with its own connection) for warm-up + measured seconds."""
    conns = [Connection(port) for _ in games]
    await asyncio.gather(*(c.open() for c in conns))
    now = time.perf_counter_ns()
    window = Window(start=now + int(warmup * 1e9), end=now + int((warmup + seconds) * 1e9))
    seats = [[g] for g in games]  # each client's games, the current one last
    tasks = [asyncio.create_task(_client(c, seat, window)) for c, seat in zip(conns, seats, strict=True)]
    await asyncio.sleep(max(0.0, (window.start - time.perf_counter_ns()) / 1e9))
    cpu0, wall0, busy0 = time.process_time(), time.perf_counter(), machine_busy_seconds()
    if server:
        server.start()
    if db:
        db.start()
    await asyncio.sleep(max(0.0, (window.end - time.perf_counter_ns()) / 1e9))
    cpu1, wall1, busy1 = time.process_time(), time.perf_counter(), machine_busy_seconds()
    server_cpu = server.stop() if server else None
    db_cpu = db.stop() if db else None
    await asyncio.gather(*tasks)
    for c in conns:
        c.close()
    latencies = sorted(window.latencies)
    wall = wall1 - wall0
    requests = max(1, window.ok + window.errors)
    return {
        "concurrency": len(games),
        "seconds": round(wall, 3),
        "requests": window.ok + window.errors,
        "per_second": window.ok / wall,
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        "errors": window.errors,
        "client_cpu_us_per_request": (cpu1 - cpu0) / requests * 1e6,
        "client_cpu_share": (cpu1 - cpu0) / wall,  # of one core
        "server_cpu_share": None if server_cpu is None else server_cpu / wall,
        "server_cpu_ms_per_request": None if server_cpu is None else server_cpu / requests * 1e3,
        "db_cpu_share": None if db_cpu is None else db_cpu / wall,
        "db_cpu_ms_per_request": None if db_cpu is None else db_cpu / requests * 1e3,
        # everything else the machine did meanwhile (other programs): a noisy neighbour shows here
        "other_cpu_share": max(0.0, busy1 - busy0 - (cpu1 - cpu0) - (server_cpu or 0.0) - (db_cpu or 0.0)) / wall,
        "dealt": [g for seat in seats for g in seat[1:]],  # the games dealt during the run (popped by the caller)
        "current": [seat[-1] for seat in seats],  # each client's game now, to go on with (popped too)
    }
