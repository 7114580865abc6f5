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
import os
import random
import time
from pathlib import Path
from typing import Any

import psycopg

from .harness.audit import audit
from .harness.env import RESULTS_DIR, WORKERS, quick
from .harness.env import float_env as _float_env
from .harness.mixed_load import Run, client, deal_slots
from .harness.processes import Server, start_service, stop_server
from .harness.processes import await_healthy as wait_healthy
from .harness.restart import RESTART_DOWN, RESTART_LOAD_AFTER, RESTART_LOAD_BEFORE, restart_under_load
from .harness.results import run_and_report
from .harness.service_api import embedded_db, migrate
from .harness.soak_report import report, summarize

__all__ = ["CLIENTS", "EXPECTED", "PER_GAME", "RESTART_DOWN", "RESTART_LOAD_AFTER", "RESTART_LOAD_BEFORE",
           "RESULTS_FILE", "audit", "main", "report", "run_and_report", "start_service", "summarize", "wait_healthy"]

RESULTS_FILE = RESULTS_DIR / "soak.json"
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "16"))
PER_GAME = 2
EXPECTED = {200, 409, 412, 422}  # the answers a correct service gives this load


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
        await deal_slots(run, max(1, CLIENTS // PER_GAME))

        # 1. the soak
        print(f"  soak: {CLIENTS} clients on {len(run.slots)} games for {seconds:g} s ...", flush=True)
        tasks = [asyncio.create_task(client(i, run)) for i in range(CLIENTS)]
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        run.restart_mode = True  # requests from now on count for the restart phase
        soak_seconds = time.perf_counter() - started
        print(f"  soak: errors so far {run.soak.error_count}; restarting the database under load ...", flush=True)

        # 2. the database restart, under the same clients
        db, restart = await restart_under_load(db, data_dir, server, run)
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
        "clients": CLIENTS, "games_at_once": len(run.slots), "workers": WORKERS,
        "database": f"PostgreSQL {version[0] if version else '?'} (embedded, Unix socket)",
        "cpus": os.cpu_count(),
        "soak": summarize(run.soak, soak_seconds),
        "restart": {**summarize(run.restart, restart_seconds), **restart},
        "audit": check,
    }


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
