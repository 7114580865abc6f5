"""Game analysis figures (``python -m bench analysis``).

1. Cost per game: open-runs games of about 100, 300 and 1,000 events, played at random from seeds
   1, 2, ... (card moves mostly, draws, an undo now and then) and resigned, analysed in this
   process with the solver's per-position budget: seconds per game, positions per second, solver
   calls, and the share of positions settled by reuse (not asked of the solver).
2. Under load: a server (``ANALYSIS_WORKERS=1``, not pinned: the machine's cores are shared as in
   production) serving draw/recycle moves from C clients, with analyses of 100-event games queued
   and without: moves/s both ways, and analyses finished per minute during the measured window.

Env: ANALYSIS_BENCH_GAMES (games per size, default 3), ANALYSIS_BENCH_BUDGET (solver seconds per
position, default 5), ANALYSIS_BENCH_SECONDS (load window, default 60), ANALYSIS_BENCH_CLIENTS
(default 4). Results go to bench/results/analysis.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from domain import (
    Command,
    Event,
    MoveCard,
    Resign,
    Undo,
    apply,
    command_to_api,
    deal,
    get_ruleset,
    initial_state,
    legal_moves,
    shuffled_deck,
)
from domain.analysis import WON, Analysis, positions
from domain.codec import state_to_snapshot

from .harness.client import call, seed_deal
from .harness.database import bench_database
from .harness.env import RESULTS_DIR, float_env, quick
from .harness.load import new_service_game, run_load
from .harness.processes import start_server, stop_server, wait_healthy

SIZES = (100, 300, 1000)
GAMES = int(os.environ.get("ANALYSIS_BENCH_GAMES", quick(3, 1)))
BUDGET = float_env("ANALYSIS_BENCH_BUDGET", quick(5.0, 0.5))
SECONDS = float_env("ANALYSIS_BENCH_SECONDS", quick(60.0, 3.0))
CLIENTS = int(os.environ.get("ANALYSIS_BENCH_CLIENTS", quick(4, 2)))
QUEUED = quick(40, 3)  # 100-event games queued for the load run


def random_game(seed: int, events: int) -> tuple[list[Event], list[Command]]:
    """A game of about ``events`` events: random moves (card moves twice as likely as a draw, an
    undo one time in ten) from the seed's deal, then a resignation."""
    rng = random.Random(seed)
    first = deal(get_ruleset("open-runs"), shuffled_deck(seed), {"source": "seed", "seed": seed})
    state = initial_state(first)
    log: list[Event] = [first]
    commands: list[Command] = []
    while len(log) < events - 1 and state.playing:
        moves = [m for m in legal_moves(state) if not isinstance(m, (Resign, Undo))]
        cards = [m for m in moves if isinstance(m, MoveCard)]
        if state.undo_depth and rng.random() < 0.1:
            move: Command = Undo()
        elif cards and rng.random() < 2 / 3:
            move = rng.choice(cards)
        else:
            move = rng.choice(moves)
        state, made = apply(state, move, log)
        log += made
        commands.append(move)
    if state.playing:
        state, made = apply(state, Resign(), log)
        log += made
        commands.append(Resign())
    return log, commands


def analyse(events: list[Event], budget: float) -> dict[str, Any]:
    """One game's analysis in this process, the solver as the service's worker runs it."""
    from service.analysis.jobs import answer_of, solve_position

    started = time.perf_counter()
    analysis = Analysis(positions(events))
    while (index := analysis.next_position()) is not None:
        result, line = solve_position(state_to_snapshot(analysis.positions[index].state), budget)
        analysis.record(index, answer_of(result, line))
    seconds = time.perf_counter() - started
    total = len(analysis.positions)
    verdicts = [v.result for v in analysis.verdicts if v is not None]
    return {
        "events": len(events), "positions": total, "solver_calls": analysis.solved, "seconds": round(seconds, 3),
        "positions_per_second": round(total / seconds, 1), "reused_share": round(1 - analysis.solved / total, 4),
        "won": verdicts.count(WON), "lost": verdicts.count("lost"), "unknown": verdicts.count("unknown"),
        "turning_point": analysis.turning_point() is not None,
    }


def cost_per_game() -> list[dict[str, Any]]:
    rows = []
    for size in SIZES:
        games = [analyse(random_game(seed, size)[0], BUDGET) for seed in range(1, GAMES + 1)]
        row = {
            "events": size,
            "games": len(games),
            "seconds_per_game": round(sum(g["seconds"] for g in games) / len(games), 2),
            "positions_per_second": round(sum(g["positions"] for g in games) / sum(g["seconds"] for g in games), 1),
            "reused_share": round(1 - sum(g["solver_calls"] for g in games) / sum(g["positions"] for g in games), 4),
            "games_detail": games,
        }
        print(f"{size:>5} events: {row['seconds_per_game']} s/game, {row['positions_per_second']} positions/s, "
              f"{row['reused_share']:.1%} settled by reuse")
        rows.append(row)
    return rows


async def _queue_games(port: int, count: int) -> None:
    """``count`` ended games of about 100 events, played through the API, each with its analysis asked for."""
    status, player = await call(port, "POST", "/players", {"name": "analyst"})
    assert status == 201, player
    token = player["token"]
    for seed in range(1, count + 1):
        status, view = await call(port, "POST", "/games", {"ruleset": "open-runs", "deal": seed_deal(seed)}, token)
        assert status == 201, view
        for command in random_game(seed, 100)[1]:
            status, body = await call(port, "POST", f"/games/{view['id']}/moves", command_to_api(command), token)
            assert status == 200, body
        status, body = await call(port, "POST", f"/games/{view['id']}/analysis", None, token)
        assert status == 202, body


async def _moves_per_second(port: int, analyses: bool) -> tuple[float, float, float]:
    """Moves/s of the load run, and when (epoch seconds) its window began and ended."""
    if analyses:
        await _queue_games(port, QUEUED)
    games = [await new_service_game(port, 50_000 + i) for i in range(CLIENTS)]
    began = time.time()
    result = await run_load(port, games, min(2.0, SECONDS / 4), SECONDS, None, None)
    return float(result["per_second"]), began, time.time()


def _finished(url: str, began: float, ended: float) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM analysis_jobs WHERE status = 'done' AND finished_at "
                           "BETWEEN to_timestamp(%s) AND to_timestamp(%s)", (began, ended)).fetchone()
    return int(row[0]) if row else 0


def under_load(url: str, log_dir: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for analyses in (False, True):
        env = {"ANALYSIS_WORKERS": "1" if analyses else "0", "ANALYSIS_POSITION_MS": str(int(BUDGET * 1000)),
               "ANALYSIS_JOBS_PER_PLAYER": "0", "ANALYSIS_JOBS_PER_ADDRESS": "0"}  # one account queues them all
        server = start_server(f"analysis-{analyses}", "service.http.asgi:app", url, log_dir, env, pin=False)
        try:
            wait_healthy(server)
            moves, began, ended = asyncio.run(_moves_per_second(server.port, analyses))
        finally:
            stop_server(server)
        figures["moves_per_second_" + ("with_analysis" if analyses else "without_analysis")] = round(moves, 1)
        if analyses:
            finished = _finished(url, began, ended)
            figures["analyses_finished"] = finished
            figures["analyses_per_minute"] = round(finished / (ended - began) * 60, 1)
    print(f"moves/s without analysis {figures['moves_per_second_without_analysis']}, with "
          f"{figures['moves_per_second_with_analysis']}; {figures['analyses_per_minute']} analyses finished a minute")
    return figures


def main() -> None:
    rows = cost_per_game()
    with tempfile.TemporaryDirectory(prefix="canfield-analysis-bench-") as work, bench_database(Path(work)) as db:
        load = under_load(db.url, Path(work))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    summary = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
               "budget_seconds": BUDGET, "cost": rows, "load": {"clients": CLIENTS, "seconds": SECONDS, **load}}
    (RESULTS_DIR / "analysis.json").write_text(json.dumps(summary, indent=2) + "\n")
