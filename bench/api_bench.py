"""HTTP API speed: moves per second and move latency of the real service against a ceiling.

``python -m bench api`` (part of ``make bench``). What it does:

1. A database: ``BENCH_DATABASE_URL`` (a server where the role may CREATE DATABASE) or else the
   embedded PostgreSQL in a temp dir (stopped and deleted at the end). A fresh database
   ``canfield_bench_<hex>`` is created, migrated, and dropped at the end.
2. The service, as in production (``service.http.server``: uvicorn with httptools on uvloop), one
   process (``BENCH_WORKERS``). With one process and 2+ CPUs each server under test runs on the
   first CPU alone and PostgreSQL and the load generator on the others (``BENCH_PIN``, default 1).
3. The ceiling: ``bench/ceiling_app.py``, a bare Litestar app doing one INSERT per request
   through a pool opened like the service's, and the bare endpoint: ``bench/bare_app.py``,
   Litestar answering ``{"ok": true}`` with no work (the HTTP stack alone), both served the same way.
4. A load generator: a minimal asyncio HTTP/1.1 keep-alive client (raw bytes, no httpx). Each of
   C clients owns one connection and one game of open-runs and plays ``draw`` until the stock is
   empty, then ``recycle``, over and over. The ceiling and the bare endpoint get the same requests.
   C = 1, 16, 64, each for ``BENCH_SECONDS`` (default 10) after ``BENCH_WARMUP`` seconds (default
   2), ``BENCH_RUNS`` rounds (default 3) of service, ceiling, bare in turn; each target's median
   round is reported, the ratios are the medians of the rounds' ratios, and every round is listed.
   After ``BENCH_GAME_MOVES`` moves (default 300; 0: never) a client deals itself a new game, so
   every level plays games of the same length (how a move's cost grows with the game is item 5).
   Afterwards a direct query checks that every game holds exactly 1 + its acknowledged moves events.
5. Old vs new game: move latency on a game with 1,000 and with 10,000 events vs a fresh one.
6. The load generator's own speed, against a stub server that answers with a canned body.

``BENCH_AB="NAME=value,..."`` adds a second service process with those settings, measured in every
round right after the first: an A/B of a setting under the same conditions (see
``bench/harness/rounds.py``).

Results are printed and written to ``bench/results/api.json``. ``BENCH_QUICK=1`` shrinks every
default to a run of seconds (see ``bench/__main__.py``).
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .harness.api_report import report
from .harness.checks import check_events, old_vs_new
from .harness.database import Database, bench_database
from .harness.env import PINNING, RESULTS_DIR, quick
from .harness.env import float_env as _float_env
from .harness.processes import Server, stop_server, wait_healthy
from .harness.results import write_results
from .harness.rounds import AB_ENV, TARGETS, Played, play_level, start_targets
from .harness.service_api import LOOP
from .harness.stub import load_generator_speed

__all__ = ["AB_ENV", "CONCURRENCY", "LATENCY_MOVES", "OLD_GAME_EVENTS", "RESULTS_FILE", "RUNS",
           "SERVER_DESCRIPTION", "TARGETS", "main", "report"]

RESULTS_FILE = RESULTS_DIR / "api.json"
CONCURRENCY = tuple(int(c) for c in os.environ.get("BENCH_CONCURRENCY", quick("1,16,64", "1,16")).split(","))
OLD_GAME_EVENTS = quick((1000, 10_000), (100, 1000))  # old vs new: a move on games this long vs on a new one
# alternating service/ceiling runs per level; the median counts
RUNS = max(1, int(os.environ.get("BENCH_RUNS", quick("3", "1"))))
LATENCY_MOVES = quick(300, 50)
SERVER_DESCRIPTION = f"uvicorn with httptools on {LOOP}"


async def _measure(servers: dict[str, Server], db: Database, played: Played, warmup: float,
                   seconds: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    for server in servers.values():
        await asyncio.to_thread(wait_healthy, server)
    levels = [await play_level(servers, db, played, c, RUNS, warmup, seconds) for c in CONCURRENCY]
    old_new = []
    for events in OLD_GAME_EVENTS:
        compared = await old_vs_new(servers["service"].port, played.seed, events, LATENCY_MOVES)
        played.seed += 2
        played.service += compared.pop("games")
        old_new.append(compared)
        print(f"  old ({events} events) vs new: p50 {compared['old_p50_ms']:.2f} "
              f"vs {compared['new_p50_ms']:.2f} ms", flush=True)
    return levels, old_new


async def _run(db: Database, work_dir: Path, warmup: float, seconds: float) -> dict[str, Any]:
    servers = start_targets(db, work_dir)
    played = Played()
    try:
        levels, old_new = await _measure(servers, db, played, warmup, seconds)
    finally:
        for server in servers.values():
            stop_server(server)
    sample = next((g.sample for g in reversed(played.service) if g.sample), b"{}")
    generator = await load_generator_speed(sample, work_dir, min(seconds, 3.0))
    check = check_events(db.url, played.service, played.ceiling)
    return {
        "warmup": warmup, "seconds": seconds, "server": SERVER_DESCRIPTION, "database": db.description,
        "cpus": os.cpu_count(),
        "pinned": None if PINNING is None else {"server": sorted(PINNING[0]), "rest": sorted(PINNING[1])},
        "ab": ",".join(f"{k}={v}" for k, v in AB_ENV.items()) or None,
        "python": platform.python_version(),
        "levels": levels, "check": check, "old_vs_new": old_new, "load_generator": generator,
    }


def main() -> None:
    if PINNING is not None:
        os.sched_setaffinity(0, PINNING[1])  # PostgreSQL and the load generator, started from here, inherit it
    warmup = _float_env("BENCH_WARMUP", quick(2.0, 0.5))
    seconds = _float_env("BENCH_SECONDS", quick(10.0, 1.0))
    work_dir = Path(tempfile.mkdtemp(prefix="canfield-api-bench-"))
    try:
        with bench_database(work_dir) as db:
            results = asyncio.run(_run(db, work_dir, warmup, seconds))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    write_results(results, report(results), RESULTS_FILE)
    if not results["check"]["ok"]:
        raise SystemExit("api bench: the events check failed")


if __name__ == "__main__":
    main()
