"""The API bench's alternating rounds: every target under the same load in turn, round after round,
and with ``BENCH_AB`` a second service process with other settings measured beside the first."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .database import Database
from .load import Game, new_ceiling_game, new_service_game, run_load
from .processes import Server, start_server
from .stats import CpuMeter, median


def ab_env() -> dict[str, str]:
    """``BENCH_AB="NAME=value,..."``: a second service process with these settings (say
    ``MOVE_BATCH_MAX=1``), measured in every round beside the first: an A/B of one setting under
    the same conditions, round by round (this machine's speed drifts by a third between runs)."""
    pairs = [item.split("=", 1) for item in os.environ.get("BENCH_AB", "").split(",") if item.strip()]
    return {name.strip(): value.strip() for name, value in pairs}


AB_ENV = ab_env()
TARGETS = ("service", "service-b", "ceiling", "bare") if AB_ENV else ("service", "ceiling", "bare")
"""What each level measures, in this order in every run: the service's moves (and with ``BENCH_AB``
the other service's), the one-INSERT ceiling app, the bare endpoint (the HTTP stack alone)."""


def start_targets(db: Database, work_dir: Path) -> dict[str, Server]:
    """A server process for each of ``TARGETS``."""
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
class Played:
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


async def run_round(servers: dict[str, Server], db: Database, current: dict[str, list[Game]], played: Played,
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


def summarize_level(level: dict[str, Any]) -> None:
    """Each target's median round, and the medians of the rounds' ratios."""
    for target in TARGETS:
        by_speed = sorted(level["runs"], key=lambda pair: pair[target]["per_second"])
        level[target] = by_speed[len(by_speed) // 2][target]
    level["ratio"] = median([pair["ratio"] for pair in level["runs"]])
    level["bare_ratio"] = median([pair["bare_ratio"] for pair in level["runs"]])
    level["ratios"] = [pair["ratio"] for pair in level["runs"]]
    level["bare_ratios"] = [pair["bare_ratio"] for pair in level["runs"]]
    if AB_ENV:
        level["b_ratio"] = median([pair["b_ratio"] for pair in level["runs"]])
        level["a_over_b"] = median([pair["a_over_b"] for pair in level["runs"]])
        level["a_over_bs"] = [pair["a_over_b"] for pair in level["runs"]]


async def play_level(servers: dict[str, Server], db: Database, played: Played, concurrency: int, rounds: int,
                     warmup: float, seconds: float) -> dict[str, Any]:
    """``rounds`` rounds at one concurrency, each client on a game of its own per target."""
    games = await played.deal(servers["service"].port, concurrency)
    cgames = [new_ceiling_game(servers["ceiling"].port) for _ in range(concurrency)]
    played.ceiling += cgames
    level: dict[str, Any] = {"concurrency": concurrency, "runs": []}
    current = {"service": games, "ceiling": cgames,
               "bare": [new_ceiling_game(servers["bare"].port, "/bare") for _ in range(concurrency)]}
    if AB_ENV:
        current["service-b"] = await played.deal(servers["service-b"].port, concurrency)
    for _ in range(rounds):
        level["runs"].append(await run_round(servers, db, current, played, warmup, seconds))
    summarize_level(level)
    return level
