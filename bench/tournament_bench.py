"""A tournament's standings read at 1,000 entrants: ``python -m bench tournament``.

One embedded PostgreSQL with two tournaments of ``TOURNAMENT_ENTRANTS`` entrants (default 1,000;
``BENCH_QUICK=1``: 100) on 12 deals, filled set-based: one running (every entrant dealt all 12
deals, most ended, half of them with their last still in play: the standings are computed live
from the 12,000 game rows at each read) and one finished (the standings frozen at its finish,
each entrant's games listed). ``GET /tournaments/{id}`` of each is read ``TOURNAMENT_REQUESTS``
times (default 200) through a real server process, one at a time on a keep-alive connection;
it prints p50, p99 and the size of the reply.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from .harness.env import PROJECT_ROOT, quick

ENTRANTS = int(os.environ.get("TOURNAMENT_ENTRANTS", quick("1000", "100")))
REQUESTS = int(os.environ.get("TOURNAMENT_REQUESTS", quick("200", "20")))
ROUNDS = 4
DEALS = 12

_FILL = """
INSERT INTO players (id, name, bot, created_at)
SELECT md5('entrant-' || n)::uuid, 'entrant ' || n, n %% 3 = 0, now() FROM generate_series(1, %(entrants)s) n;
INSERT INTO tournaments (id, creator_id, ruleset_id, ruleset_version, deal_count, starts_at, minutes, ends_at, rated,
                         version, created_at, prepared_at, finished_at)
VALUES (md5('live')::uuid, md5('entrant-1')::uuid, 'classic', 1, 12, now() - interval '1 hour', 1440,
        now() + interval '23 hours', false, 1, now() - interval '2 hours', now() - interval '2 hours', NULL),
       (md5('done')::uuid, md5('entrant-1')::uuid, 'classic', 1, 12, now() - interval '1 day', 1380,
        now() - interval '1 hour', true, 1, now() - interval '25 hours', now() - interval '25 hours',
        now() - interval '1 hour');
INSERT INTO tournament_deals (tournament_id, number, deck, fingerprint, proof)
SELECT md5(t)::uuid, k, '[]', md5(t || k), '{}' FROM unnest(ARRAY['live', 'done']) t, generate_series(1, 12) k;
INSERT INTO tournament_entrants (tournament_id, player_id, joined_at, standing, place)
SELECT md5(t)::uuid, md5('entrant-' || n)::uuid, now() - interval '2 hours',
       CASE WHEN t = 'done' THEN jsonb_build_object('dealsPlayed', 12, 'dealsWon', n %% 13, 'wonSeconds', n * 1.5,
            'moveCount', 1000 + n, 'playing', false, 'verified', true) END,
       CASE WHEN t = 'done' THEN n END
FROM unnest(ARRAY['live', 'done']) t, generate_series(1, %(entrants)s) n;
INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, started_at, finished_at,
                   updated_at, move_count)
SELECT md5(t || '-' || n || '-' || k)::uuid, md5('entrant-' || n)::uuid, 'classic', 1,
       jsonb_build_object('source', 'tournament', 'tournament', md5(t)::uuid, 'deal', k),
       CASE WHEN t = 'live' AND k = 12 AND n %% 2 = 0 THEN 'playing'
            WHEN (n + k) %% 3 = 0 THEN 'resigned' ELSE 'won' END,
       100, now() - interval '90 min' + k * interval '5 min',
       CASE WHEN t = 'live' AND k = 12 AND n %% 2 = 0 THEN NULL
            ELSE now() - interval '90 min' + k * interval '5 min' + (n %% 200) * interval '1 second' END,
       now(), 90 + (n + k) %% 60
FROM unnest(ARRAY['live', 'done']) t, generate_series(1, %(entrants)s) n, generate_series(1, 12) k;
INSERT INTO tournament_games (tournament_id, player_id, number, game_id)
SELECT md5(t)::uuid, md5('entrant-' || n)::uuid, k, md5(t || '-' || n || '-' || k)::uuid
FROM unnest(ARRAY['live', 'done']) t, generate_series(1, %(entrants)s) n, generate_series(1, 12) k;
ANALYZE
"""


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness.service_api import embedded_db, migrate

    print(f"tournament: {ENTRANTS:,} entrants on {DEALS} deals; {REQUESTS} reads each; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="canfield-tournament-bench-") as work:
        cluster = embedded_db.start(Path(work) / "embedded", database="canfield_tournament")
        try:
            migrate(cluster.url)
            _fill(cluster.url)
            asyncio.run(_reads(cluster.url, Path(work)))
        finally:
            cluster.stop()


def _fill(url: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        for statement in _FILL.split(";"):
            if statement.strip():
                conn.execute(statement, {"entrants": ENTRANTS})  # type: ignore[arg-type]


async def _reads(url: str, work: Path) -> None:
    import hashlib

    from .harness.client import Connection
    from .harness.processes import start_server, stop_server, wait_healthy
    from .harness.scale_reads import timed_reads

    server = start_server("tournament", "service.http.asgi:app", url, work, {"ABANDON_AFTER_DAYS": "0"}, pin=False)
    try:
        wait_healthy(server, 60)
        await asyncio.sleep(20)  # the server prepares today's daily deal at start: let it pass
        ids = {name: uuid.UUID(hashlib.md5(name.encode()).hexdigest()) for name in ("live", "done")}
        paths = {f"GET /tournaments/{{id}}, running (live standings of {ENTRANTS:,})": f"/tournaments/{ids['live']}",
                 f"GET /tournaments/{{id}}, finished (frozen standings of {ENTRANTS:,})": f"/tournaments/{ids['done']}"}
        conn = Connection(server.port)
        timings: list[dict[str, list[float]]] = [{}]
        await timed_reads([conn], [server.port], [paths], REQUESTS, ROUNDS, timings)
        for name, path in paths.items():
            size = len((await conn.request(_raw(path, server.port)))[1])
            ordered = sorted(timings[0][name])
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
            print(f"  {name}: p50 {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms, reply {size / 1024:.0f} KiB")
        conn.close()
    finally:
        stop_server(server)


def _raw(path: str, port: int) -> bytes:
    from .harness.client import build_request

    return build_request("GET", path, port)
