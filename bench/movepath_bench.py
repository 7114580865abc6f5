"""A move's own Python work, without the HTTP server and the database: ``python -m bench movepath``.

On request (not part of ``make bench``'s default list). It drives the real lean route
(``service.http.move_route.make_move``) and the real move use case (``Moves.play``, built by ``service.bootstrap``) on
the in-memory store of the unit tests (``tests/unit/fake_store.py``), whose ``append_many`` also
builds and encodes the batch and its ids as ``EventStore.append_many`` does: ``MOVEPATH_CLIENTS`` games
(default 16) played at once, draw/recycle, ``MOVEPATH_MOVES`` moves each per round (default 300),
``MOVEPATH_ROUNDS`` rounds (default 5). It prints the process's CPU time per move of every round.

Where docs/performance.md's instruction counts per move come from: run it under callgrind twice with two
move counts and divide the difference by the moves between them, which no load on the machine
changes::

    MOVEPATH_ROUNDS=1 MOVEPATH_MOVES=30 valgrind --tool=callgrind python -m bench movepath
    MOVEPATH_ROUNDS=1 MOVEPATH_MOVES=90 valgrind --tool=callgrind python -m bench movepath
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from .harness.env import quick

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLIENTS = int(os.environ.get("MOVEPATH_CLIENTS", "16"))
MOVES = int(os.environ.get("MOVEPATH_MOVES", quick("300", "30")))
ROUNDS = int(os.environ.get("MOVEPATH_ROUNDS", quick("5", "1")))
STOCK_DRAWS = 12  # an open-runs stock of 34 cards: 12 draws of three, then a recycle


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    asyncio.run(_run())


def _route_and_games() -> tuple[Any, list[tuple[uuid.UUID, str]]]:
    """The lean move route over the real use case on the in-memory store, and its games."""
    from .harness.service_api import Settings, build_services, event_store, fake_store, make_move

    class Store(fake_store()):  # type: ignore[misc]
        pool = None
        reads = None  # the stats' reads: no move makes one

        async def append_many(self, moves: list[Any]) -> set[uuid.UUID]:
            msgspec.json.encode(event_store.batch_params(moves)["batch"].obj)
            written: set[uuid.UUID] = await super().append_many(moves)
            return written

    class App:
        state: Any

    store = Store()
    app = App()
    app.state = App()
    app.state.services = build_services(store, Settings.from_env())
    app.state.max_body_bytes = 65536

    async def route(scope: Any, receive: Any, send: Any) -> None:
        """What Litestar's router hands the move route: the app and the parsed game id."""
        scope["app"] = app
        scope["path_params"] = {"game_id": uuid.UUID(scope["path"].split("/")[2])}
        await make_move.fn(scope, receive, send)
    games = []
    for index in range(CLIENTS):
        token = f"movepath-{index:02d}-" + "t" * 32
        games.append((store.add_game(store.add_player(token), seed=index + 1, ruleset="open-runs"), token))
    return route, games


async def _run() -> None:
    route, games = _route_and_games()
    sent: list[Any] = []
    played: dict[uuid.UUID, int] = {}

    async def move(game_id: uuid.UUID, token: str) -> None:
        count = played.get(game_id, 0)
        played[game_id] = count + 1
        body = b'{"type":"recycle"}' if count % (STOCK_DRAWS + 1) == STOCK_DRAWS else b'{"type":"draw"}'
        path = f"/games/{game_id}/moves"
        scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
                 "root_path": "", "headers": [(b"host", b"bench"), (b"authorization", b"Bearer " + token.encode()),
                                               (b"content-type", b"application/json"),
                                               (b"content-length", str(len(body)).encode())]}
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> Any:
            return messages.pop(0)

        async def send(message: Any) -> None:
            sent.append(message)

        await route(scope, receive, send)

    async def client(game_id: uuid.UUID, token: str) -> None:
        for _ in range(MOVES):
            await move(game_id, token)

    await asyncio.gather(*(move(g, t) for g, t in games))  # warm-up: every game loaded and cached
    per_move = []
    for _ in range(ROUNDS):
        sent.clear()
        started = time.process_time()
        await asyncio.gather(*(client(g, t) for g, t in games))
        per_move.append((time.process_time() - started) / (CLIENTS * MOVES) * 1e6)
        statuses = {m["status"] for m in sent if m["type"] == "http.response.start"}
        if statuses != {200}:
            raise SystemExit(f"movepath: a move was refused ({statuses})")
    rounds = " ".join(f"{value:.1f}" for value in per_move)
    print(f"movepath: {CLIENTS} games x {MOVES} moves, {ROUNDS} rounds: CPU per move {rounds} us "
          f"(median {statistics.median(per_move):.1f} us)")
