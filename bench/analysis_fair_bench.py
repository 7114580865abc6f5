"""The analysis queue under a flood (``python -m bench analysis-fair``).

A server with the default analysis settings (one worker, ``ANALYSIS_POSITION_MS=5000``,
``ANALYSIS_JOB_SECONDS=20``, 3 jobs per player) and two flooding accounts that keep the queue full:
each holds as many analyses queued as its cap allows and asks for the next as soon as one is done
(every 0.2 s it tries again), each from its own set of named fixture games (``FLOOD_GAMES``: 16
draws and recycles, then resigned, on a hard open-runs deal, seed 7, 12, 35 or 43, whose tables
the solver does not decide within seconds, or on a near copy of one: its bottom reserve card
swapped with one of the three above it. Every copy is as hard and its tables are those of no other
game, so the verdict cache cannot help: each job costs its whole budget, as a flooder who knows
the service would make it). Once the worker has been busy with them for
``ANALYSIS_FAIR_WARMUP`` seconds, a victim (a new account each time) asks for the analysis of their
short game (``VICTIM_GAME``: three draws, then resigned) and waits for it: the figure is the time
from the request to the analysis being done, for ``ANALYSIS_FAIR_TRIALS`` victims one after the
other. Target: within 30 s each.

Env: ANALYSIS_FAIR_TRIALS (default 5), ANALYSIS_FAIR_WARMUP (seconds, default 5). ``BENCH_QUICK=1``:
one victim after 2 s. Results go to ``bench/results/analysis_fair.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from domain import (
    Command,
    Draw,
    Recycle,
    Resign,
    apply,
    command_to_api,
    deal,
    get_ruleset,
    initial_state,
    shuffled_deck,
)
from domain.cards import codes

from .harness.client import call
from .harness.database import bench_database
from .harness.env import RESULTS_DIR, float_env, quick
from .harness.processes import start_server, stop_server, wait_healthy

TARGET_SECONDS = 30.0
TRIALS = int(os.environ.get("ANALYSIS_FAIR_TRIALS", quick(5, 1)))
WARMUP = float_env("ANALYSIS_FAIR_WARMUP", quick(5.0, 2.0))
FLOODERS = {"flooder-1": (7, 12), "flooder-2": (35, 43)}
"""Each flooder's hard deals (open-runs seeds): the solver leaves their tables unknown after 1-2 s."""
SWAPS = range(4)
"""The copies of each hard deal: 0 as dealt, k: the bottom reserve card swapped with the k-th above it."""
VICTIM_SEED = 2  # open-runs seed 2: won, the solver finds the line in milliseconds


def hard_deck(seed: int, swap: int) -> tuple[int, ...]:
    """The seed's deal, its bottom reserve card swapped with the ``swap``-th card above it (0: as dealt)."""
    deck = list(shuffled_deck(seed))
    deck[0], deck[swap] = deck[swap], deck[0]
    return tuple(deck)


def stock_moves(deck: tuple[int, ...], count: int) -> list[Command]:
    """``count`` draws and recycles from the deck's deal: a draw while the stock has cards, else a recycle."""
    state = initial_state(deal(get_ruleset("open-runs"), deck, {"source": "deck"}))
    moves: list[Command] = []
    for _ in range(count):
        move: Command = Draw() if state.stock else Recycle()
        state, _events = apply(state, move)
        moves.append(move)
    return moves


FLOOD_GAMES = {f"flood-{seed}-swap-{swap}": ({"deck": codes(hard_deck(seed, swap))},
                                             [*stock_moves(hard_deck(seed, swap), 16), Resign()])
               for seeds in FLOODERS.values() for seed in seeds for swap in SWAPS}
"""The named fixture games of the flood: 16 draws and recycles on a copy of the hard deal, then resigned."""
VICTIM_GAME: tuple[str, dict[str, Any], list[Command]] = (
    "victim-seed-2", {"seed": VICTIM_SEED}, [Draw(), Draw(), Draw(), Resign()])


async def _player(port: int, name: str) -> str:
    status, body = await call(port, "POST", "/players", {"name": name})
    assert status == 201, body
    return str(body["token"])


async def _ended_game(port: int, token: str, dealt: dict[str, Any], moves: list[Command]) -> str:
    status, view = await call(port, "POST", "/games", {"ruleset": "open-runs", "deal": dealt}, token)
    assert status == 201, view
    for move in moves:
        status, body = await call(port, "POST", f"/games/{view['id']}/moves", command_to_api(move), token)
        assert status == 200, body
    return str(view["id"])


async def _flood(port: int, token: str, games: list[str], stop: asyncio.Event, refused: list[int]) -> None:
    """Keep this account's cap of analyses queued: the next game as soon as there is a place."""
    waiting = list(games)
    while waiting and not stop.is_set():
        status, body = await call(port, "POST", f"/games/{waiting[0]}/analysis", None, token)
        if status == 202:
            waiting.pop(0)
            continue
        if status != 429 or body["code"] != "analysis_queue_full":
            raise RuntimeError(f"a flood request was answered {status}: {body}")
        refused.append(1)
        await asyncio.sleep(0.2)


async def _victim(port: int, trial: int) -> dict[str, Any]:
    token = await _player(port, f"victim-{trial}")
    name, dealt, moves = VICTIM_GAME
    game_id = await _ended_game(port, token, dealt, moves)
    started = time.monotonic()
    status, body = await call(port, "POST", f"/games/{game_id}/analysis", None, token)
    assert status == 202, body
    while body["status"] not in ("done", "failed"):
        await asyncio.sleep(0.05)
        status, body = await call(port, "GET", f"/games/{game_id}/analysis")
        assert status == 200, body
    seconds = time.monotonic() - started
    print(f"victim {trial}: {name} analysed ({body['status']}) {seconds:.1f} s after its request")
    return {"game": name, "status": body["status"], "seconds": round(seconds, 2)}


async def _scenario(port: int) -> dict[str, Any]:
    flooders = {name: await _player(port, name) for name in FLOODERS}
    games = {name: [await _ended_game(port, flooders[name], *FLOOD_GAMES[f"flood-{seed}-swap-{swap}"])
                    for swap in SWAPS for seed in seeds] for name, seeds in FLOODERS.items()}
    stop, refused = asyncio.Event(), list[int]()
    floods = [asyncio.create_task(_flood(port, flooders[name], games[name], stop, refused)) for name in flooders]
    await asyncio.sleep(WARMUP)
    victims = []
    for trial in range(1, TRIALS + 1):
        victims.append(await _victim(port, trial))
        await asyncio.sleep(1.0)
    stop.set()
    await asyncio.gather(*floods)
    return {"victims": victims, "flood_requests_refused": len(refused)}


def _flood_jobs(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT status, (result->>'budgetSpent')::boolean, (result->>'solved')::int, "
            "extract(epoch FROM finished_at - started_at) FROM analysis_jobs WHERE requester IN "
            "(SELECT 'player:' || id FROM players WHERE name LIKE 'flooder-%')"
        ).fetchall()
    done = [row for row in rows if row[0] == "done"]
    return {"queued_in_all": len(rows), "done": len(done), "budget_spent": sum(1 for row in done if row[1]),
            "longest_seconds": round(max((float(row[3]) for row in done), default=0.0), 1)}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="canfield-analysis-fair-") as work, bench_database(Path(work)) as db:
        server = start_server("analysis-fair", "service.http.asgi:app", db.url, Path(work), {"ANALYSIS_WORKERS": "1"},
                              pin=False)
        try:
            wait_healthy(server)
            figures = asyncio.run(_scenario(server.port))
        finally:
            stop_server(server)
        figures["flood_jobs"] = _flood_jobs(db.url)
    seconds = [victim["seconds"] for victim in figures["victims"]]
    summary = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "settings": "defaults (ANALYSIS_WORKERS=1, ANALYSIS_POSITION_MS=5000, ANALYSIS_JOB_SECONDS=20, "
                    "ANALYSIS_JOBS_PER_PLAYER=3)",
        "warmup_seconds": WARMUP, "target_seconds": TARGET_SECONDS,
        "victim_seconds": {"median": round(statistics.median(seconds), 1), "max": round(max(seconds), 1)},
        "within_target": all(s <= TARGET_SECONDS and v["status"] == "done"
                             for s, v in zip(seconds, figures["victims"], strict=True)),
        **figures,
    }
    print(f"victims analysed in {summary['victim_seconds']['median']} s (median), {summary['victim_seconds']['max']} s "
          f"(max) of {len(seconds)}; target {TARGET_SECONDS:.0f} s: {'met' if summary['within_target'] else 'MISSED'}; "
          f"flood jobs done {figures['flood_jobs']['done']} ({figures['flood_jobs']['budget_spent']} out of budget), "
          f"{figures['flood_requests_refused']} flood requests refused (429)")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "analysis_fair.json").write_text(json.dumps(summary, indent=2) + "\n")
