"""A past state of a long game: ``python -m bench states`` (on request).

``GET /games/{id}/states/{v}``'s work, in process (``Games.state_at``, service.games.games) against a fresh database:
one ``STATES_EVENTS``-event game (default 9,800; classic, played at random with runs of undos, some
deeper than the undo window), its state at each of ``STATES_VERSIONS`` (default 9,000 and 9,499:
on a checkpoint, and 499 events past one) read ``STATES_READS`` times each (default 50). It prints
the median time of a read that replays the log from the deal (what every past state below the
game's snapshot did before checkpoints), of the first read from checkpoints (none stored yet: it
folds from the deal and stores them), and of the reads after it (from the nearest checkpoint at
or below the version).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from .harness.env import quick

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVENTS = int(os.environ.get("STATES_EVENTS", quick("9800", "1200")))
VERSIONS = [int(v) for v in os.environ.get("STATES_VERSIONS", quick("9000,9499", "1000,1100")).split(",")]
READS = int(os.environ.get("STATES_READS", quick("50", "5")))


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.database import bench_database

    with tempfile.TemporaryDirectory(prefix="canfield-states-bench-") as work, bench_database(Path(work)) as db:
        figures, first, length = asyncio.run(_run(db.url))
    print(f"states: GET /games/{{id}}/states/{{v}} of a {length}-event game ({db.description}), "
          f"median of {READS} reads, in process; the first read from checkpoints (none stored yet, "
          f"v={VERSIONS[0]}) took {first * 1000:.1f} ms and stored them")
    print("  v      | replay from the deal (before) | from the nearest checkpoint (after)")
    for version, (replayed, after) in figures.items():
        print(f"  {version:6d} | {replayed * 1000:26.2f} ms | {after * 1000:32.2f} ms")


def _long_game(seed: int, length: int) -> list[object]:
    from domain import apply, deal, get_ruleset, initial_state, legal_moves
    from domain.commands import Resign, Undo
    from domain.undo_stack import WINDOW

    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    first = deal(get_ruleset("classic"), tuple(deck), {"source": "seed", "seed": seed})
    state = initial_state(first)
    events: list[object] = [first]
    undos = 0
    while state.version < length and state.status.value == "playing":
        if undos == 0 and state.undo_depth and rng.random() < 0.03:
            undos = rng.choice([1, 3, 20, WINDOW + 5])
        if undos and state.undo_depth:
            command: object = Undo()
            undos -= 1
        else:
            undos = 0
            choices = [m for m in legal_moves(state) if not isinstance(m, (Undo, Resign))]
            if not choices:
                break
            command = rng.choice(choices)
        state, made = apply(state, command, events)  # type: ignore[arg-type]
        events.extend(made)
    return events


async def _run(url: str) -> tuple[dict[int, tuple[float, float]], float, int]:
    from domain import event_data, event_type
    from domain.codec import event_from_data, state_to_snapshot
    from domain.rules import replay
    from service.bootstrap import build_services, close
    from service.clock import utc_now
    from service.settings import Settings
    from service.store.connections import PoolOptions, open_pool
    from service.store.event_store import EventStore, insert_game
    from service.store.game_records import NewEvent, NewGame

    events = _long_game(1, EVENTS)
    pool = open_pool(url, PoolOptions(1, 4, 60_000))
    await pool.open()
    services = build_services(EventStore(pool), Settings(database_url=url))
    try:
        player, _ = await services.accounts.create_player("bench")
        final = replay(events)  # type: ignore[arg-type]
        game_id = uuid.uuid4()
        stored = [NewEvent(n, event_type(e), event_data(e)) for n, e in enumerate(events, start=1)]  # type: ignore[arg-type]
        async with pool.connection() as conn, conn.transaction():
            await insert_game(conn, NewGame(game_id, player.id, (final.ruleset.id, final.ruleset.version),
                                            {"source": "seed", "seed": 1}, final.status.value,
                                            state_to_snapshot(final), stored, utc_now()))

        async def replay_from_deal(version: int) -> None:
            rows = await services.store.read_events_upto(game_id, version)
            replay([event_from_data(row.type, row.data) for row in rows])

        first = await _timed(services.games.state_at(game_id, VERSIONS[0]))
        figures = {}
        for version in VERSIONS:
            replayed = [await _timed(replay_from_deal(version)) for _ in range(READS)]
            after = [await _timed(services.games.state_at(game_id, version)) for _ in range(READS)]
            figures[version] = (statistics.median(replayed), statistics.median(after))
        return figures, first, len(events)
    finally:
        await close(services)
        await pool.close()


async def _timed(work: object) -> float:
    started = time.perf_counter()
    await work  # type: ignore[misc]
    return time.perf_counter() - started
