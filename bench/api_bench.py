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
round right after the first: an A/B of a setting under the same conditions (see ``_ab_env``).

Results are printed and written to ``bench/results/api.json``. ``BENCH_QUICK=1`` shrinks every
default to a run of seconds (see ``bench/__main__.py``).
"""


from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness.checks import check_events, old_vs_new
from .harness.database import Database, bench_database
from .harness.env import PINNING, PROJECT_ROOT, RESULTS_DIR, WORKERS, quick
from .harness.env import float_env as _float_env
from .harness.load import Game, new_ceiling_game, new_service_game, run_load
from .harness.processes import Server, start_server, stop_server, wait_healthy
from .harness.service_api import LOOP
from .harness.stats import CpuMeter
from .harness.stats import median as _median
from .harness.stub import load_generator_speed

RESULTS_FILE = RESULTS_DIR / "api.json"
CONCURRENCY = tuple(int(c) for c in os.environ.get("BENCH_CONCURRENCY", quick("1,16,64", "1,16")).split(","))
OLD_GAME_EVENTS = quick((1000, 10_000), (100, 1000))  # old vs new: a move on games this long vs on a new one
# alternating service/ceiling runs per level; the median counts
RUNS = max(1, int(os.environ.get("BENCH_RUNS", quick("3", "1"))))
LATENCY_MOVES = quick(300, 50)
SERVER_DESCRIPTION = f"uvicorn with httptools on {LOOP}"


# ------------------------------------------------------------------ the run


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _ab_env() -> dict[str, str]:
    """``BENCH_AB="NAME=value,..."``: a second service process with these settings (say
    ``MOVE_BATCH_MAX=1``), measured in every round beside the first: an A/B of one setting under
    the same conditions, round by round (this machine's speed drifts by a third between runs)."""
    pairs = [item.split("=", 1) for item in os.environ.get("BENCH_AB", "").split(",") if item.strip()]
    return {name.strip(): value.strip() for name, value in pairs}


AB_ENV = _ab_env()
TARGETS = ("service", "service-b", "ceiling", "bare") if AB_ENV else ("service", "ceiling", "bare")
"""What each level measures, in this order in every run: the service's moves (and with ``BENCH_AB``
the other service's), the one-INSERT ceiling app, the bare endpoint (the HTTP stack alone)."""



def _pinned(results: dict[str, Any]) -> str:
    pinned = results.get("pinned")
    if not pinned:
        return " (nothing pinned)"
    return f" (servers on CPU {pinned['server']}, PostgreSQL and the load generator on {pinned['rest']})"


def report(results: dict[str, Any]) -> str:
    runs = len(results["levels"][0]["runs"]) if results["levels"] else 0
    lines = [
        (
            f"API bench: {results['seconds']:g} s per run after {results['warmup']:g} s warm-up; {results['server']}, "
            f"{WORKERS} process(es) each; {results['database']}; {results['cpus']} CPUs{_pinned(results)}; "
            f"per level {runs} rounds of "
            f"{' / '.join(TARGETS)}, each row the median round of its target"
        ),
        "",
        "   C  target     req/s   p50 ms   p99 ms  errors  | CPU: client  server (ms/req)  postgres (ms/req)  others",
    ]
    for level in results["levels"]:
        for target in TARGETS:
            r = level[target]
            lines.append(
                f"{level['concurrency']:4d}  {target:8} {r['per_second']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
                f"{r['errors']:7d}  |      {r['client_cpu_share'] * 100:4.0f}%  "
                f"{_fmt(r['server_cpu_share'] and r['server_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['server_cpu_ms_per_request'], '.3f')})   "
                f"{_fmt(r['db_cpu_share'] and r['db_cpu_share'] * 100, '4.0f')}% "
                f"({_fmt(r['db_cpu_ms_per_request'], '.3f')})    {r['other_cpu_share'] * 100:4.0f}%"
            )
        lines.append(
            f"      service / bare {level['bare_ratio']:.2f} (goal >= 0.5 at 16 and 64), "
            f"service / ceiling {level['ratio']:.2f}  (medians of the rounds' ratios)"
        )
        if "b_ratio" in level:
            lines.append(
                f"      service-b ({results['ab']}) / bare {level['b_ratio']:.2f}; service / service-b, median of "
                f"the rounds: {level['a_over_b']:.2f} (rounds {', '.join(f'{r:.2f}' for r in level['a_over_bs'])})"
            )
    lines.append("   CPU: % of one core during the run, ms per request; others = the rest of the machine")
    lines.extend(_report_rounds(results))
    lines.extend(_report_checks(results))
    return "\n".join(lines)


def _report_rounds(results: dict[str, Any]) -> list[str]:
    lines = []
    lines.append(f"   every round (req/s of {' / '.join(TARGETS)}; others' CPU during the service run):")
    for level in results["levels"]:
        for number, pair in enumerate(level["runs"], 1):
            lines.append(
                f"   C={level['concurrency']:<3} round {number}: "
                + " / ".join(f"{pair[t]['per_second']:.0f}" for t in TARGETS)
                + f"  (service/bare {pair['bare_ratio']:.2f}, service/ceiling {pair['ratio']:.2f}; "
                f"others {pair['service']['other_cpu_share'] * 100:.0f}%)"
            )
    return lines


def _report_checks(results: dict[str, Any]) -> list[str]:
    lines = []
    check = results["check"]
    verdict = "OK, no move lost" if check["ok"] else "MISMATCH"
    lines.append(
        f"events check: {verdict}: {check['games']} service games, {check['acked_moves']} acknowledged moves, "
        f"{check['events']} events (= games + moves: {check['events'] == check['games'] + check['acked_moves']}); "
        f"ceiling: {check['ceiling_acked']} acknowledged, {check['ceiling_rows']} rows"
    )
    lines.extend(f"   mismatch: {wrong}" for wrong in (check["mismatches"] + check["ceiling_mismatches"])[:5])
    lines.extend(
        f"old vs new game (1 client, {o['moves_each']} moves each, interleaved): "
        f"{o['old_events_at_start']}-event game p50 {o['old_p50_ms']:.2f} ms p99 {o['old_p99_ms']:.2f} ms; "
        f"{o['new_events_at_start']}-event game p50 {o['new_p50_ms']:.2f} ms p99 {o['new_p99_ms']:.2f} ms; "
        f"speed old/new (new p50 / old p50) {o['speed_ratio']:.2f} (goal >= 0.9 at 10,000); errors {o['errors']}"
        for o in results["old_vs_new"]
    )
    g = results["load_generator"]
    best = max(level["bare"]["per_second"] for level in results["levels"])
    lines.append(
        f"load generator alone (16 connections, stub server, {g['body_bytes']}-byte move body): "
        f"{g['per_second']:.0f} req/s, client CPU {g['client_cpu_us_per_request']:.0f} us/req "
        f"(= {1e6 / g['client_cpu_us_per_request']:.0f} req/s per core; "
        f"{1e6 / g['client_cpu_us_per_request'] / best:.1f}x the bare endpoint's best)"
    )
    return lines


def _start_servers(db: Database, work_dir: Path) -> dict[str, Server]:
    servers = {
        "service": start_server("service", "service.http.asgi:app", db.url, work_dir),
    }
    if AB_ENV:
        servers["service-b"] = start_server("service-b", "service.http.asgi:app", db.url, work_dir, AB_ENV)
    servers |= {
        "ceiling": start_server("ceiling", "bench.ceiling_app:app", db.url, work_dir),
        "bare": start_server("bare", "bench.bare_app:app", db.url, work_dir),
    }
    return servers


@dataclass
class _Played:
    """Every game of the run, for the events check, and the next seed to deal."""

    service: list[Game] = field(default_factory=list)
    ceiling: list[Game] = field(default_factory=list)
    seed: int = 1

    async def deal(self, port: int, count: int) -> list[Game]:
        games: list[Game] = []
        for batch in range(0, count, 16):
            size = min(16, count - batch)
            games += await asyncio.gather(*(new_service_game(port, self.seed + i) for i in range(size)))
            self.seed += size
        self.service += games
        return games


async def _round(servers: dict[str, Server], db: Database, current: dict[str, list[Game]], played: _Played,
                 warmup: float, seconds: float) -> dict[str, Any]:
    """One round: every target in turn, under the same load; the ratios of this round."""
    pair: dict[str, Any] = {}
    for target in TARGETS:
        server = servers[target]
        r = await run_load(
            server.port,
            current[target],
            warmup,
            seconds,
            CpuMeter([server.process.pid], children_of=server.process.pid),  # uvicorn workers too
            CpuMeter([db.postmaster_pid], children_of=db.postmaster_pid) if db.postmaster_pid else None,
        )
        dealt = r.pop("dealt")
        if target != "bare":  # bare games leave no trace to check
            (played.service if target.startswith("service") else played.ceiling).extend(dealt)
        current[target] = r.pop("current")
        pair[target] = r
        print(
            f"  C={len(current[target]):<3} {target:8} {r['per_second']:7.0f} req/s  p50 {r['p50_ms']:.2f} ms  "
            f"p99 {r['p99_ms']:.2f} ms  errors {r['errors']}  "
            f"others' CPU {r['other_cpu_share'] * 100:.0f}%",
            flush=True,
        )
    pair["ratio"] = pair["service"]["per_second"] / max(pair["ceiling"]["per_second"], 1e-9)
    pair["bare_ratio"] = pair["service"]["per_second"] / max(pair["bare"]["per_second"], 1e-9)
    if AB_ENV:
        pair["b_ratio"] = pair["service-b"]["per_second"] / max(pair["bare"]["per_second"], 1e-9)
        pair["a_over_b"] = pair["service"]["per_second"] / max(pair["service-b"]["per_second"], 1e-9)
    return pair


def _summarize_level(level: dict[str, Any]) -> None:
    """Each target's median round, and the medians of the rounds' ratios."""
    for target in TARGETS:
        by_speed = sorted(level["runs"], key=lambda pair: pair[target]["per_second"])
        level[target] = by_speed[len(by_speed) // 2][target]
    level["ratio"] = _median([pair["ratio"] for pair in level["runs"]])
    level["bare_ratio"] = _median([pair["bare_ratio"] for pair in level["runs"]])
    level["ratios"] = [pair["ratio"] for pair in level["runs"]]
    level["bare_ratios"] = [pair["bare_ratio"] for pair in level["runs"]]
    if AB_ENV:
        level["b_ratio"] = _median([pair["b_ratio"] for pair in level["runs"]])
        level["a_over_b"] = _median([pair["a_over_b"] for pair in level["runs"]])
        level["a_over_bs"] = [pair["a_over_b"] for pair in level["runs"]]


async def _level(servers: dict[str, Server], db: Database, played: _Played, concurrency: int,
                 warmup: float, seconds: float) -> dict[str, Any]:
    games = await played.deal(servers["service"].port, concurrency)
    cgames = [new_ceiling_game(servers["ceiling"].port) for _ in range(concurrency)]
    played.ceiling += cgames
    level: dict[str, Any] = {"concurrency": concurrency, "runs": []}
    current = {"service": games, "ceiling": cgames,
               "bare": [new_ceiling_game(servers["bare"].port, "/bare") for _ in range(concurrency)]}
    if AB_ENV:
        current["service-b"] = await played.deal(servers["service-b"].port, concurrency)
    for _ in range(RUNS):
        level["runs"].append(await _round(servers, db, current, played, warmup, seconds))
    _summarize_level(level)
    return level


async def _measure(servers: dict[str, Server], db: Database, played: _Played, warmup: float,
                   seconds: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    for server in servers.values():
        await asyncio.to_thread(wait_healthy, server)
    levels = [await _level(servers, db, played, c, warmup, seconds) for c in CONCURRENCY]
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
    servers = _start_servers(db, work_dir)
    played = _Played()
    try:
        levels, old_new = await _measure(servers, db, played, warmup, seconds)
    finally:
        for server in servers.values():
            stop_server(server)
    sample = next((g.sample for g in reversed(played.service) if g.sample), b"{}")
    generator = await load_generator_speed(sample, work_dir, min(seconds, 3.0))
    check = check_events(db.url, played.service, played.ceiling)
    return {
        "warmup": warmup,
        "seconds": seconds,
        "server": SERVER_DESCRIPTION,
        "database": db.description,
        "cpus": os.cpu_count(),
        "pinned": None if PINNING is None else {"server": sorted(PINNING[0]), "rest": sorted(PINNING[1])},
        "ab": ",".join(f"{k}={v}" for k, v in AB_ENV.items()) or None,
        "python": platform.python_version(),
        "levels": levels,
        "check": check,
        "old_vs_new": old_new,
        "load_generator": generator,
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
    text = report(results)
    print(text)
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    results["table"] = text.splitlines()
    RESULTS_FILE.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"(written to {RESULTS_FILE.relative_to(PROJECT_ROOT)})")
    if not results["check"]["ok"]:
        raise SystemExit("api bench: the events check failed")


if __name__ == "__main__":
    main()
