"""Every read, and a move, as history grows: ``python -m bench scale``.

One embedded PostgreSQL with two databases: the fixtures alone (the smallest size), and one grown
in steps to each of ``SCALE_GAMES`` games (default ``0,1000000``; add ``SCALE_10M=1`` for a step at
10,000,000; ``BENCH_QUICK=1``: ``0,5000``). At each step a real server process on each database
(as in production) answers ``SCALE_REQUESTS`` requests of each read, one at a time on a
keep-alive connection (default 400), and ``SCALE_REQUESTS`` moves of games dealt through the API,
the two in alternating turns so that both meet the machine's load of the same minutes; it prints
their p50 and p99, the ratio of the p50s, and the plan (EXPLAIN of the statements the service's
own code sends, recorded in-process) of every read that grows, with what in it reads history
whole (a Seq Scan or a Sort over a big table) and what counts over one, if anything.

History is made set-based from the domain's own events (``harness.scale_history``):
``SCALE_TEMPLATES`` games (default 2,000) are played by the rules, and ``INSERT ... SELECT`` copies
their games, event rows and snapshots under new ids and players, ``SCALE_FILL_JOBS`` connections
at once (default 2), with the history tables' indexes and constraints dropped meanwhile and made
again after (``harness.bulk_load``). At N games: N / 10 players, a fifth of the games one bot's, a
leaderboard entry for today per player (about a third ranked) and one per player and day of their
games on the past days' boards, N / 4 finished races of 2 or 3 entrants dealt stored games, N / 500
open races in the lobby; the stats projections recomputed from the games (the streaks are
placeholders). The smallest size holds 4,000 games and 1,000 players, so every page read is as
full as at any size (the bot's games in progress too): a ratio compares histories, not pages.
After each step ``SCALE_REPLAY_SAMPLE`` games (default 200) spread over the history are replayed
through the domain and must end in their stored snapshot and figures. Each step prints its fill
rate and the database's size.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from .harness.env import PROJECT_ROOT, quick

SIZES = [int(size) for size in os.environ.get("SCALE_GAMES", quick("0,1000000", "0,5000")).split(",")]
if os.environ.get("SCALE_10M", "") not in ("", "0"):
    SIZES.append(10_000_000)
REQUESTS = int(os.environ.get("SCALE_REQUESTS", quick("400", "40")))
TEMPLATES = int(os.environ.get("SCALE_TEMPLATES", quick("2000", "100")))
REPLAY_SAMPLE = int(os.environ.get("SCALE_REPLAY_SAMPLE", quick("200", "20")))


def main() -> None:
    sys.path.insert(0, str(PROJECT_ROOT))
    from .harness import scale_history, scale_reads
    from .harness.service_api import embedded_db, migrate

    templates = scale_history.templates(TEMPLATES)
    print(f"scale: {len(templates)} template games played by the rules, {sum(len(t['events']) for t in templates)}"
          f" events; sizes {', '.join(f'{s:,}' for s in SIZES)}; {REQUESTS} requests a read; fill jobs"
          f" {scale_history.FILL_JOBS}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="canfield-scale-bench-") as work:
        cluster = embedded_db.start(Path(work) / "embedded", database="canfield_base")
        try:
            base, grown = cluster.url, embedded_db.start(Path(work) / "embedded", database="canfield_scale").url
            for url in (base, grown):
                migrate(url)
                scale_history.load_templates(url, templates)
            have = dict.fromkeys(scale_history.targets(0), 0)
            _fill(base, dict(have), 0)
            scale_reads.plans(base)
            for size in [s for s in SIZES if scale_history.targets(s) != scale_history.targets(0)] or [0]:
                if size:
                    _fill(grown, have, size)
                urls = [base, grown] if size else [base]
                _report(asyncio.run(scale_reads.measure(urls, Path(work), REQUESTS)), size)
                if size:
                    scale_reads.plans(grown)
        finally:
            cluster.stop()


def _fill(url: str, have: dict[str, int], size: int) -> None:
    """Grow to ``size`` with the indexes off, make them again, check a sample replays, and say so."""
    import psycopg

    from .harness import bulk_load, scale_history

    before = dict(have)
    timings: dict[str, float] = {}
    started = time.monotonic()
    with bulk_load.without_indexes(url, timings):
        target = scale_history.grow(url, have, size, TEMPLATES)
    seconds = time.monotonic() - started
    checked = bulk_load.replay_sample(url, target["games"], REPLAY_SAMPLE)
    with psycopg.connect(url) as conn:
        events, event_bytes, database_bytes, board = conn.execute(
            "SELECT (SELECT count(*) FROM events), pg_total_relation_size('events'),"
            " pg_database_size(current_database()), (SELECT count(*) FROM daily_leaderboard)"
        ).fetchone()
    added = target["games"] - before["games"]
    print(f"\n== {target['games']:,} games: " + ", ".join(f"{name} {count:,}" for name, count in target.items())
          + f", events {events:,}, leaderboard entries {board:,}")
    print(f"  filled {added:,} games in {seconds:.0f} s ({added / seconds:,.0f} games/s; "
          + ", ".join(f"{part} {value:.0f} s" for part, value in timings.items())
          + f"); {checked} games replayed to their stored rows")
    print(f"  database {database_bytes / 2**30:.2f} GiB ({database_bytes / target['games'] / 1024:.1f} KiB a game),"
          f" {event_bytes // max(events, 1)} bytes an event row (heap, indexes, TOAST)")


def _report(timings: list[dict[str, list[float]]], size: int) -> None:
    """p50 / p99 of each read on the fixtures' database and, if ``size``, on the grown one
    (measured in alternating turns), and the ratio of their p50s."""
    columns = ["fixtures", f"{size:,} games"][:len(timings)]
    print(f"  {'read':58s} " + " ".join(f"{name + ' p50 / p99 ms':>26s}" for name in columns) + "    ratio")
    for name in timings[0]:
        figures = [_percentiles(each[name]) for each in timings]
        ratio = f"{figures[-1][0] / figures[0][0]:8.2f}" if size else ""
        print(f"  {name:58s} " + " ".join(f"{p50:16.2f} / {p99:7.2f}" for p50, p99 in figures) + f" {ratio}")


def _percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(len(values) * 0.99))]
