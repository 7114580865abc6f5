"""Server CPU per move, measured so that a shared, busy machine hardly moves it.

``python -m bench cpu`` (on request, not part of ``make bench``'s default list). Wall-clock rates
on this 2-core machine swing by 2x with what else runs; the CPU time the server process itself
spends per request does not (much). This starts a target as ``bench api`` does (one process,
uvicorn with httptools on uvloop, embedded PostgreSQL or ``BENCH_DATABASE_URL``) and, per round,
deals each of ``CPU_CLIENTS`` clients (default 16) a fresh open-runs game (outside the
measurement), then has every client play ``CPU_MOVES`` draw/recycle moves (default 150) on it,
reading the server process's CPU time (user + system, from /proc through psutil) before and
after. It reports server CPU per request (us) for every round and their median, and PostgreSQL's.

``CPU_TARGETS``: ``service`` (the default), ``bare`` (``bench/bare_app.py``: the HTTP stack
alone), or both (``service,bare``). ``CPU_ROUNDS``
rounds (default 5) after one warm-up round.

``CPU_STRACE=1`` counts the server's system calls per request (``strace -c``; it slows the
server, so only the counts mean anything): like instructions, they do not depend on the load.

``CPU_CALLGRIND=1`` runs the server under valgrind's callgrind and reports instructions per request
(``callgrind_control -z`` before a round, ``-d`` after): a count that the machine's load does not
change at all, only what the code does (the server is ~50x slower there, so rounds are few
and moves are grouped more than on a real server: compare callgrind figures with each other only).

Results go to ``bench/results/cpu.json`` (the last run of each target); with callgrind, the last
round's profile to ``bench/results/callgrind.out`` (``callgrind_annotate`` reads it).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness.database import bench_database
from .harness.env import RESULTS_DIR, quick
from .harness.load import Game, new_ceiling_game, new_service_game
from .harness.processes import Server, start_server, stop_server, wait_healthy
from .harness.server_cpu import metered_round, report
from .harness.tracing import callgrind_prefix

RESULTS = RESULTS_DIR / "cpu.json"
CLIENTS = int(os.environ.get("CPU_CLIENTS", "16"))
MOVES = int(os.environ.get("CPU_MOVES", quick("150", "20")))  # per client and round, on a fresh game
ROUNDS = int(os.environ.get("CPU_ROUNDS", quick("5", "1")))
TARGETS = [t for t in os.environ.get("CPU_TARGETS", "service").split(",") if t]
CALLGRIND = os.environ.get("CPU_CALLGRIND", "") not in ("", "0")
STRACE = os.environ.get("CPU_STRACE", "") not in ("", "0")
APPS = {"service": "service.http.asgi:app", "bare": "bench.bare_app:app"}


async def _games(name: str, port: int, round_no: int) -> list[Game]:
    if name != "bare":
        return list(await asyncio.gather(*(new_service_game(port, 10_000 * round_no + i) for i in range(CLIENTS))))
    return [new_ceiling_game(port, "/bare") for _ in range(CLIENTS)]


def _round(server: Server, db_pid: int | None, name: str, round_no: int, work_dir: Path) -> dict[str, Any]:
    """Fresh games dealt (not measured), then ``MOVES`` metered moves on each."""
    async def run() -> dict[str, Any]:
        games = await _games(name, server.port, round_no)
        keep = RESULTS.with_name("callgrind.out") if CALLGRIND else None
        return await metered_round(server, db_pid, games, MOVES, work_dir, keep, STRACE)

    return asyncio.run(run())


def measure(name: str, database_url: str, db_pid: int | None, work_dir: Path) -> dict[str, Any]:
    prefix = callgrind_prefix(name, work_dir) if CALLGRIND else []
    server = start_server(name, APPS[name], database_url, work_dir, prefix=prefix, pin=False)
    try:
        wait_healthy(server, timeout=600 if CALLGRIND else 30)
        if name != "bare":
            time.sleep(3 if not CALLGRIND else 0)  # the daily deals are prepared at startup (another process)
        _round(server, db_pid, name, 0, work_dir)  # warm-up
        rounds = [_round(server, db_pid, name, n, work_dir) for n in range(1, ROUNDS + 1)]
    finally:
        stop_server(server)
    result = {
        "target": name,
        "clients": CLIENTS,
        "moves_per_client": MOVES,
        "callgrind": CALLGRIND,
        "median_server_cpu_us": statistics.median(r["server_cpu_us"] for r in rounds),
        "median_db_cpu_us": statistics.median(r["db_cpu_us"] for r in rounds) if db_pid and name != "bare" else None,
        "median_instructions": statistics.median(r["instructions"] for r in rounds) if CALLGRIND else None,
        "rounds": rounds,
    }
    print(report(result))
    return result


def main() -> None:
    if CALLGRIND and not shutil.which("valgrind"):
        raise SystemExit("cpu: CPU_CALLGRIND needs valgrind")
    work_dir = Path(tempfile.mkdtemp(prefix="canfield-cpu-"))
    results: list[dict[str, Any]] = []
    try:
        with bench_database(work_dir) as db:
            results.extend(measure(name, db.url, db.postmaster_pid, work_dir) for name in TARGETS)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "load": os.getloadavg(),
                                   "results": results}, indent=2) + "\n")
