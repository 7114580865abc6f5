"""A rated race's rating update and the rating list, small and large: ``python -m bench rating-scale``.

One embedded PostgreSQL with two databases: ``RATING_SMALL`` rated players in ``classic`` (default
1,000) and ``RATING_LARGE`` (default 100,000; ``BENCH_QUICK=1``: 1,000 and 10,000), each with as
many finished rated races waiting to be rated. Filled set-based (``generate_series``): players with
ratings spread like a field's (mu from a normal around 1500, sd 300; sigma 80 to 500).

- **The rating update**: what a rated race's finish adds to its transaction
  (``service.ratings.rating_store.record_race``: the ruleset's lock, the race's sequence, four
  entrants' ratings read, rated and written, their changes), timed to its commit, ``RATING_UPDATES``
  races of four random rated players (default 400), in-process on one connection.
- **The rating list**: ``GET /ratings/classic?limit=50``, its first page and a page a third of the
  way down (a cursor at that player's key), ``RATING_REQUESTS`` times each (default 400) through a
  real server process per database, one at a time on a keep-alive connection, in alternating turns.

It prints p50 and p99 and the ratio of the p50s (large / small), and the plan of the list's
statement on the large database (an index scan of ``player_ratings_list``, no sort).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from .harness.env import PROJECT_ROOT, quick

SMALL = int(os.environ.get("RATING_SMALL", quick("1000", "1000")))
LARGE = int(os.environ.get("RATING_LARGE", quick("100000", "10000")))
UPDATES = int(os.environ.get("RATING_UPDATES", quick("400", "40")))
REQUESTS = int(os.environ.get("RATING_REQUESTS", quick("400", "40")))
ROUNDS = 4

_FILL = """
INSERT INTO players (id, name, bot, created_at)
SELECT md5('rated-' || n)::uuid, 'rated ' || n, n %% 5 = 0, now() FROM generate_series(1, %(players)s) n;
INSERT INTO player_ratings (player_id, ruleset_id, mu, sigma, rating, deviation, races, updated_at)
SELECT id, 'classic', mu, sigma, round(mu), round(sigma), 10, now() FROM (
    SELECT md5('rated-' || n)::uuid AS id,
           1500 + 300 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS mu,
           80 + 420 * random() AS sigma
    FROM generate_series(1, %(players)s) n) r;
INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, status, version, created_at,
                   finished_at, rated)
SELECT md5('race-' || n)::uuid, md5('rated-1')::uuid, 'classic', 1, '{"source": "secret"}', '[]', 4, 'finished', 1,
       now(), now(), true FROM generate_series(1, %(races)s) n;
ANALYZE players; ANALYZE player_ratings; ANALYZE races;
"""
_LIST = ("SELECT r.player_id FROM player_ratings r JOIN players p ON p.id = r.player_id"
         " WHERE r.ruleset_id = 'classic' AND p.name <> 'deleted player' AND (r.rating, r.player_id) < (%s, %s)"
         " ORDER BY r.rating DESC, r.player_id DESC LIMIT 51")


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.service_api import embedded_db, migrate

    print(f"rating-scale: {SMALL:,} and {LARGE:,} rated players; {UPDATES} rating updates, {REQUESTS} list reads "
          f"each; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="canfield-rating-bench-") as work:
        cluster = embedded_db.start(Path(work) / "embedded", database="canfield_small")
        try:
            urls = [cluster.url, embedded_db.start(Path(work) / "embedded", database="canfield_large").url]
            for url, players in zip(urls, (SMALL, LARGE), strict=True):
                migrate(url)
                started = time.perf_counter()
                _fill(url, players)
                print(f"  {players:,} rated players filled in {time.perf_counter() - started:.1f} s")
            updates = [asyncio.run(_updates(url, players)) for url, players in zip(urls, (SMALL, LARGE), strict=True)]
            _report("a rated race's rating update (4 entrants, to its commit)", updates)
            lists = asyncio.run(_lists(urls, Path(work)))
            for name in lists[0]:
                _report(name, [timed[name] for timed in lists])
            _plan(urls[1])
        finally:
            cluster.stop()


def _fill(url: str, players: int) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        for statement in _FILL.split(";"):
            if statement.strip():
                conn.execute(statement, {"players": players, "races": UPDATES + UPDATES // 10})  # type: ignore[arg-type]


def _md5_id(text: str) -> uuid.UUID:
    """The id the fill gives ``text`` (``md5(text)::uuid``)."""
    return uuid.UUID(hashlib.md5(text.encode()).hexdigest())


def _player(n: int) -> uuid.UUID:
    return _md5_id(f"rated-{n}")


async def _updates(url: str, players: int) -> list[float]:
    """``UPDATES`` rated races of four random players rated and committed one after another (after
    a tenth as many to warm up); milliseconds each."""
    import psycopg

    from .harness.service_api import record_race

    rng = random.Random(7)
    timings: list[float] = []
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for n in range(1, UPDATES + UPDATES // 10 + 1):
            race = _md5_id(f"race-{n}")
            entrants = [_player(p) for p in rng.sample(range(1, players + 1), 4)]
            started = time.perf_counter()
            async with conn.transaction():
                await record_race(conn, race, "classic", list(zip(entrants, (1, 2, 3, 4), strict=True)),
                                  datetime.now(UTC))
            if n > UPDATES // 10:
                timings.append((time.perf_counter() - started) * 1000)
    return timings


async def _lists(urls: list[str], work: Path) -> list[dict[str, list[float]]]:
    from service import cursors

    from .harness.client import Connection
    from .harness.processes import start_server, stop_server, wait_healthy
    from .harness.scale_reads import timed_reads

    servers = [start_server(f"ratings-{n}", "service.http.asgi:app", url, work, {"ABANDON_AFTER_DAYS": "0"}, pin=False)
               for n, url in enumerate(urls)]
    try:
        for server in servers:
            wait_healthy(server, 60)
        await asyncio.sleep(20)  # the servers prepare today's daily deal at start: let it pass
        paths = []
        for url, players in zip(urls, (SMALL, LARGE), strict=True):
            rating, player = _key_at(url, players // 3)
            cursor = cursors.encode("ratings", "classic", rating, player)
            paths.append({"the rating list, first page (50)": "/ratings/classic?limit=50",
                          "the rating list, a page a third of the way down":
                              f"/ratings/classic?limit=50&cursor={cursor}"})
        conns = [Connection(server.port) for server in servers]
        timings: list[dict[str, list[float]]] = [{} for _ in urls]
        await timed_reads(conns, [server.port for server in servers], paths, REQUESTS, ROUNDS, timings)
        for conn in conns:
            conn.close()
        return timings
    finally:
        for server in servers:
            stop_server(server)


def _key_at(url: str, offset: int) -> tuple[int, uuid.UUID]:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT rating, player_id FROM player_ratings WHERE ruleset_id = 'classic'"
                           " ORDER BY rating DESC, player_id DESC OFFSET %s LIMIT 1", (offset,)).fetchone()
    assert row is not None
    return int(row[0]), row[1]


def _report(name: str, timings: list[list[float]]) -> None:
    small, large = (_percentiles(t) for t in timings)
    print(f"  {name}: small p50 {small[0]:.2f} ms p99 {small[1]:.2f} ms; large p50 {large[0]:.2f} ms "
          f"p99 {large[1]:.2f} ms; large / small {large[0] / small[0]:.2f}")


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _plan(url: str) -> None:
    import psycopg

    rating, player = _key_at(url, LARGE // 3)
    with psycopg.connect(url) as conn:
        plan = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {_LIST}", (rating, player)).fetchall()
    print("  the list's plan on the large database:")
    for (line,) in plan:
        print(f"    {line}")
