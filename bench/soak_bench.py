"""Soak: a long mixed load with an error count and a lost-move count (both must be 0), then the
time the service takes to recover from a database restart under load.

``python -m bench soak`` (part of ``make bench``). What it does:

1. An embedded PostgreSQL of its own in a temp dir (this bench stops and starts it, so it never
   uses ``BENCH_DATABASE_URL``), a fresh database, migrated.
2. The service as in production: ``python -m uvicorn service.http.asgi:app`` (``BENCH_WORKERS``
   processes, default 1), rate limits off (one address plays 16 players), a request waits at most
   1 s for a database connection (``DB_POOL_TIMEOUT_MS=1000``) before its 503.
3. **Soak**: ``SOAK_CLIENTS`` (16) clients for ``SOAK_SECONDS`` (60), each on its own keep-alive
   connection (the raw asyncio HTTP/1.1 client of ``bench/harness/client.py``), two clients per game
   so that they get in each other's way. Each step is one of: a read of the game (10%); legal
   moves then one of their card moves (15%); an undo (10%); else a draw, or a recycle when the
   stock is empty as far as the client knows. A move carries an ``If-Match`` of the version the
   client last saw (a third of them), an ``Idempotency-Key`` (a third; a tenth of those are sent
   twice, and the second reply must be the first byte for byte) or nothing. A client that sees
   its game end deals a new one.
   **Errors** are the answers a correct service never gives this load: anything but 200, 412
   (to an If-Match), 422 (a move chosen from a view another client made stale) and 409 (the
   game ended), a broken connection, or a replayed reply that differs.
4. **Database restart under load**: the clients go on, now with an Idempotency-Key on every
   move and retrying 503s and broken connections with the same key every 50 ms. After 1 s
   the database is stopped (``pg_ctl stop -m fast``) and, 1 s after it is down, started again on
   the same data directory. **Recovery time** = from ``start`` returning to the first move
   acknowledged with 200; also the first ``/health`` 200 (polled every 10 ms). Errors here are
   answers other than 200/409/412/422/503.
5. **Audit** of every game ever played, straight from PostgreSQL: event versions contiguous from
   1, the games row at the last event's version, the snapshot equal to a replay of the events up to
   its version and the state it restores equal to a replay of them all (``tests.live.log_problems``).
   **Lost moves** = acknowledged events (each 200 reply lists the events it appended) missing
   from the log or stored as another event. Also counted: events in the log that no client was
   told about (with every request answered, 0 too).

Results are printed and written to ``bench/results/soak.json``; the exit status is 1 when errors
or lost moves are not 0 or the audit fails. ``BENCH_QUICK=1``: 5 s of soak instead of 60.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from .harness.client import Connection
from .harness.env import HOST, PROJECT_ROOT, RESULTS_DIR, WORKERS, quick
from .harness.env import float_env as _float_env
from .harness.mixed_load import Run, Tally, client, new_slot
from .harness.processes import Server, free_port, health_ok, stop_server
from .harness.service_api import embedded_db, log_audit, migrate, uvicorn_arguments
from .harness.stats import percentile as _percentile

RESULTS_FILE = RESULTS_DIR / "soak.json"
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "16"))
PER_GAME = 2
EXPECTED = {200, 409, 412, 422}
RESTART_LOAD_BEFORE = 1.0
RESTART_DOWN = 1.0
RESTART_LOAD_AFTER = 2.0


# ------------------------------------------------------------------ the audit


def audit(url: str, run: Run) -> dict[str, Any]:
    stored, log_problems = log_audit()  # the same checks as the tests' audit

    problems: list[str] = []
    lost = 0
    untold = 0
    logs = stored(url, list(run.games))
    events_total = sum(len(log.events) for log in logs.values())
    for game_id in run.games:
        log = logs.get(game_id)
        if log is None:
            problems.append(f"{game_id}: no games row")
            continue
        problems += log_problems(game_id, log)
        kinds = {version: kind for version, kind, _ in log.events}
        acked = run.acked.get(game_id, {})
        lost += sum(1 for version, kind in acked.items() if kinds.get(version) != kind)
        untold += sum(1 for version in kinds if version > 1 and version not in acked)
    return {
        "games": len(run.games),
        "events": events_total,
        "acknowledged_events": sum(len(a) for a in run.acked.values()),
        "lost_moves": lost,
        "unacknowledged_events": untold,
        "problems": problems[:20],
        "ok": not problems and lost == 0,
    }


# ------------------------------------------------------------------ the run


def start_service(database_url: str, log_dir: Path) -> Server:
    import subprocess

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "RATE_LIMIT_"))}
    env.update({
        "DATABASE_URL": database_url,
        "PYTHONPATH": str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        "RATE_LIMIT_WRITES_PER_SECOND": "0",
        "RATE_LIMIT_READS_PER_SECOND": "0",
        "DB_POOL_TIMEOUT_MS": "1000",
    })
    log = log_dir / "service.log"
    command = [sys.executable, "-m", "uvicorn", "service.http.asgi:app", "--host", HOST, "--port", str(port),
               "--log-level", "warning", "--no-access-log", "--workers", str(WORKERS), *uvicorn_arguments()]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return Server("service", port, process, log)


async def wait_healthy(server: Server, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        if await asyncio.to_thread(health_ok, server.port):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"the service did not come up:\n{server.log.read_text(errors='replace')[-3000:]}")


def summarize(tally: Tally, seconds: float) -> dict[str, Any]:
    latencies = sorted(tally.latencies)
    moves = sum(n for key, n in tally.statuses.items() if key.startswith("move "))
    reads = sum(n for key, n in tally.statuses.items() if key.startswith("read "))
    return {
        "seconds": round(seconds, 2),
        "requests": moves + reads + tally.replays_checked,
        "moves": moves,
        "reads": reads,
        "moves_per_second": round(moves / seconds, 1) if seconds else None,
        "acknowledged_moves": tally.statuses.get("move 200", 0),
        "statuses": dict(sorted(tally.statuses.items())),
        "p50_ms": round(_percentile(latencies, 0.5), 2),
        "p99_ms": round(_percentile(latencies, 0.99), 2),
        "replays_checked": tally.replays_checked,
        "errors": tally.error_count,
        "error_samples": tally.errors,
        "unavailable_503": tally.unavailable,
    }


async def _restart(db: Any, data_dir: Path, server: Server, run: Run) -> tuple[Any, dict[str, Any]]:
    """Stop the database under load, leave it down, start it again; time the recovery."""
    await asyncio.sleep(RESTART_LOAD_BEFORE)
    t0 = time.monotonic()
    await asyncio.to_thread(db.stop)
    stop_seconds = time.monotonic() - t0
    await asyncio.sleep(RESTART_DOWN)
    t1 = time.monotonic()
    db = await asyncio.to_thread(embedded_db.start, data_dir)
    back = time.monotonic()
    start_seconds = back - t1
    health_after = None
    while time.monotonic() - back < 60:
        if health_after is None and await asyncio.to_thread(health_ok, server.port):
            health_after = time.monotonic() - back
        first = [t for t in run.acked_at if t >= back]
        if first and health_after is not None:
            break
        await asyncio.sleep(0.01)
    first_move = [t for t in run.acked_at if t >= back]
    recovery = min(first_move) - back if first_move else None
    await asyncio.sleep(RESTART_LOAD_AFTER)
    return db, {
        "t0": t0,
        "stop_seconds": round(stop_seconds, 2),
        "down_seconds": RESTART_DOWN,
        "start_seconds": round(start_seconds, 2),
        "recovery_seconds": None if recovery is None else round(recovery, 3),
        "health_after_seconds": None if health_after is None else round(health_after, 3),
    }


async def _run(seconds: float, work_dir: Path) -> dict[str, Any]:
    data_dir = work_dir / "embedded"
    db = embedded_db.start(data_dir)
    server: Server | None = None
    try:
        migrate(db.url)
        with psycopg.connect(db.url) as conn:
            version = conn.execute("SHOW server_version").fetchone()
        server = start_service(db.url, work_dir)
        await wait_healthy(server)
        run = Run(server.port, random.Random(2026), [])
        setup = Connection(server.port)
        for _ in range(max(1, CLIENTS // PER_GAME)):
            run.slots.append(await new_slot(setup, run))
        setup.close()

        # 1. the soak
        print(f"  soak: {CLIENTS} clients on {len(run.slots)} games for {seconds:g} s ...", flush=True)
        tasks = [asyncio.create_task(client(i, run)) for i in range(CLIENTS)]
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        run.restart_mode = True  # requests from now on count for the restart phase
        soak_seconds = time.perf_counter() - started
        print(f"  soak: errors so far {run.soak.error_count}; restarting the database under load ...", flush=True)

        # 2. the database restart, under the same clients
        db, restart = await _restart(db, data_dir, server, run)
        run.stop = True
        await asyncio.gather(*tasks)
        restart_seconds = time.monotonic() - restart.pop("t0") + RESTART_LOAD_BEFORE
        stop_server(server)
        check = await asyncio.to_thread(audit, db.url, run)
    finally:
        if server is not None:
            stop_server(server)
        db.stop()
    return {
        "clients": CLIENTS,
        "games_at_once": len(run.slots),
        "workers": WORKERS,
        "database": f"PostgreSQL {version[0] if version else '?'} (embedded, Unix socket)",
        "cpus": os.cpu_count(),
        "soak": summarize(run.soak, soak_seconds),
        "restart": {
            **summarize(run.restart, restart_seconds),
            **restart,
        },
        "audit": check,
    }


def report(results: dict[str, Any]) -> str:
    soak, restart, check = results["soak"], results["restart"], results["audit"]
    recovery = restart["recovery_seconds"]
    lines = [
        (
            f"soak: {soak['seconds']:g} s, {results['clients']} clients on {results['games_at_once']} games at a "
            f"time, uvicorn x{results['workers']}, {results['database']}, {results['cpus']} CPUs"
        ),
        (
            f"  {soak['requests']} requests: {soak['moves']} moves ({soak['moves_per_second']:g}/s, "
            f"p50 {soak['p50_ms']} ms, "
            f"p99 {soak['p99_ms']} ms), {soak['reads']} reads, {soak['replays_checked']} idempotent retries compared"
        ),
        f"  answers: {soak['statuses']}",
        (
            f"  ERRORS: {soak['errors']}   LOST MOVES: {check['lost_moves']} (of {check['acknowledged_events']} "
            f"acknowledged events; {check['unacknowledged_events']} stored events nobody was told about; "
            f"{check['games']} games audited: versions contiguous, no half-written move, "
            f"snapshot and restored state == replay: "
            f"{'yes' if not check['problems'] else 'NO'})"
        ),
        (
            f"database restart under load: stop {restart['stop_seconds']} s, down {restart['down_seconds']:g} s, "
            f"start {restart['start_seconds']} s; RECOVERY: first acknowledged move "
            f"{'never' if recovery is None else f'{recovery:.2f} s'} after the database was back "
            f"(/health 200 after {restart['health_after_seconds']} s); 503s while down: "
            f"{restart['unavailable_503']}; errors: {restart['errors']}"
        ),
    ]
    lines.extend(f"  error: {sample}" for sample in (soak["error_samples"] + restart["error_samples"])[:10])
    lines.extend(f"  audit: {problem}" for problem in check["problems"][:10])
    return "\n".join(lines)


def run_and_report(
    run: Callable[[float, Path], Awaitable[dict[str, Any]]], seconds: float, prefix: str,
    describe: Callable[[dict[str, Any]], str], results_file: Path,
) -> dict[str, Any]:
    """``run`` in a temp dir of its own (removed after), its report printed and its results written."""
    work_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        results = asyncio.run(run(seconds, work_dir))
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    text = describe(results)
    print(text)
    results["table"] = text.splitlines()
    results_file.parent.mkdir(parents=True, exist_ok=True)
    results_file.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"(written to {results_file.relative_to(PROJECT_ROOT)})")
    return results


def main() -> None:
    seconds = _float_env("SOAK_SECONDS", quick(60.0, 5.0))
    results = run_and_report(_run, seconds, "canfield-soak-", report, RESULTS_FILE)
    failed = (
        results["soak"]["errors"] or results["restart"]["errors"] or not results["audit"]["ok"]
        or results["restart"]["recovery_seconds"] is None
    )
    if failed:
        raise SystemExit("soak bench: errors, lost moves or a failed audit (see above)")


if __name__ == "__main__":
    main()
