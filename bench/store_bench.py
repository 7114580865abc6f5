"""What a batch of moves costs PostgreSQL: ``python -m bench store`` (on request).

The event store's own batch statement (``event_store._APPEND_MANY`` with ``batch_params``, so the
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

import os
import statistics
import sys
import tempfile
import time
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
    from .harness.service_api import embedded_db, use_msgspec_for_json
    from .harness.stored_games import played_games

    use_msgspec_for_json()
    games = played_games(GAMES, MOVES)
    results: dict[int, list[tuple[float, float, float]]] = {size: [] for size in BATCHES}
    with tempfile.TemporaryDirectory(prefix="canfield-store-bench-") as work:
        database = embedded_db.start(Path(work) / "embedded", database=None)
        try:
            for _ in range(ROUNDS):
                for size in BATCHES:
                    results[size].append(_run(database.admin_url, games, size))
        finally:
            database.stop()
    print(f"store: {GAMES} games x {MOVES} moves (draw/recycle) among {OTHER_GAMES} other games, {ROUNDS} rounds; "
          "per move, median of the rounds:")
    for size, rounds in results.items():
        cpu, wal, wall = (statistics.median(r[i] for r in rounds) for i in range(3))
        every = " ".join(f"{r[0]:.1f}" for r in rounds)
        print(f"  {size:3d} moves a statement: PostgreSQL CPU {cpu:6.1f} us  WAL {wal:6.0f} bytes  "
              f"wall {wall:6.1f} us  (CPU per round: {every})")


def _write(conn: Any, games: list[tuple[Any, list[Any]]], size: int) -> tuple[int, float]:
    """Every game's moves by the store's batch statement, ``size`` a statement: (moves, wall seconds)."""
    from .harness.service_api import event_store

    moves, wall = 0, 0.0
    for number in range(len(games[0][1])):  # every game's move ``number``, ``size`` games a statement
        for first in range(0, len(games), size):
            batch = [moves_of[number] for _, moves_of in games[first : first + size]]
            started = time.perf_counter()
            rows = conn.execute(event_store._APPEND_MANY, event_store.batch_params(batch))
            written = rows.fetchall()
            wall += time.perf_counter() - started
            if len(written) != len(batch):
                raise SystemExit(f"store bench: {len(batch) - len(written)} moves were not written")
            moves += len(batch)
    return moves, wall


def _run(admin_url: str, games: list[tuple[Any, list[Any]]], size: int) -> tuple[float, float, float]:
    """One round of one batch size on a fresh database: per move, backend CPU (us), WAL (bytes), wall (us)."""
    import psycopg

    from .harness.backend_meter import BackendMeter
    from .harness.database import fresh_database
    from .harness.service_api import migrate
    from .harness.stored_games import fill

    with fresh_database(admin_url, "canfield_store_bench") as (_, url):
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            fill(conn, url, games, OTHER_GAMES)
            meter = BackendMeter(conn)
            meter.start()
            moves, wall = _write(conn, games, size)
            cpu, wal = meter.stop()
    return cpu / moves * 1e6, wal / moves, wall / moves * 1e6


if __name__ == "__main__":
    main()
