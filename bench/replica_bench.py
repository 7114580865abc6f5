"""Replica lag under load: how far a streaming replica trails the primary while moves are made.

``python -m bench replica`` (on request, not in ``make bench``). What it does:

1. An embedded PostgreSQL of its own in a temp dir, migrated, and a streaming replica of it
   (``service.store.embedded_replica.start_replica``: pg_basebackup -R, a hot standby).
2. The service as in production, with ``DATABASE_READ_URL`` on the replica (``BENCH_WORKERS``
   processes), rate limits off.
3. The soak's mixed load (``bench/harness/mixed_load.py``: ``REPLICA_CLIENTS`` clients, two per
   game, reads, legal moves, card moves, undos, draws) for ``REPLICA_SECONDS`` (20), while the
   primary's ``pg_stat_replication`` is sampled every 50 ms: ``replay_lag`` (the time from a
   commit on the primary to its replay on the replica, as PostgreSQL measures it) and the bytes of
   WAL the replica has yet to replay.

Prints the moves per second, the percentiles of both lags and the errors (answers a correct
service never gives this load); writes ``bench/results/replica.json``. ``BENCH_QUICK=1``: 4 s.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

import psycopg

from .harness.client import Connection
from .harness.env import RESULTS_DIR, WORKERS, quick
from .harness.env import float_env as _float_env
from .harness.mixed_load import Run, client, new_slot
from .harness.processes import await_healthy as wait_healthy
from .harness.processes import start_service, stop_server
from .harness.results import run_and_report
from .harness.service_api import embedded_db, embedded_replica, migrate
from .harness.soak_report import summarize

RESULTS_FILE = RESULTS_DIR / "replica.json"
CLIENTS = int(os.environ.get("REPLICA_CLIENTS", "16"))
SAMPLE_SECONDS = 0.05
_SAMPLE = (
    "SELECT extract(epoch FROM replay_lag) * 1000, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)"
    " FROM pg_stat_replication"
)


async def _sample(url: str, until: list[bool]) -> tuple[list[float], list[float]]:
    """(replay_lag ms, bytes behind) every SAMPLE_SECONDS until ``until[0]``."""
    lags: list[float] = []
    behind: list[float] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while not until[0]:
            row = await (await conn.execute(_SAMPLE)).fetchone()
            if row is not None:
                if row[0] is not None:
                    lags.append(float(row[0]))
                if row[1] is not None:
                    behind.append(float(row[1]))
            await asyncio.sleep(SAMPLE_SECONDS)
    return lags, behind


def _spread(values: list[float]) -> dict[str, float | None]:
    ordered = sorted(values)
    if not ordered:
        return {"samples": 0, "p50": None, "p99": None, "max": None}
    def at(q: float) -> float:
        return round(ordered[round(q * (len(ordered) - 1))], 2)

    return {"samples": len(ordered), "p50": at(0.5), "p99": at(0.99), "max": at(1.0)}


async def _run(seconds: float, work_dir: Path) -> dict[str, Any]:
    primary = embedded_db.start(work_dir / "primary")
    replica = None
    server = None
    try:
        migrate(primary.url)
        replica = embedded_replica.start_replica(primary.admin_url, work_dir / "replica")
        os.environ["DATABASE_READ_URL"] = replica.url
        server = start_service(primary.url, work_dir)
        await wait_healthy(server)
        run = Run(server.port, random.Random(2026), [])
        setup = Connection(server.port)
        for _ in range(max(1, CLIENTS // 2)):
            run.slots.append(await new_slot(setup, run))
        setup.close()
        print(f"  replica: {CLIENTS} clients on {len(run.slots)} games for {seconds:g} s ...", flush=True)
        done = [False]
        sampler = asyncio.create_task(_sample(primary.admin_url, done))
        tasks = [asyncio.create_task(client(i, run)) for i in range(CLIENTS)]
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        run.stop = done[0] = True
        await asyncio.gather(*tasks)
        lags, behind = await sampler
        elapsed = time.perf_counter() - started
    finally:
        os.environ.pop("DATABASE_READ_URL", None)
        if server is not None:
            stop_server(server)
        if replica is not None:
            replica.stop()
        primary.stop()
    return {"clients": CLIENTS, "workers": WORKERS, "cpus": os.cpu_count(), "load": summarize(run.soak, elapsed),
            "replay_lag_ms": _spread(lags), "bytes_behind": _spread(behind)}


def report(results: dict[str, Any]) -> str:
    load, lag, behind = results["load"], results["replay_lag_ms"], results["bytes_behind"]
    return "\n".join([
        (f"replica: {load['seconds']:g} s, {results['clients']} clients, uvicorn x{results['workers']}, "
        f"{results['cpus']} CPUs; {load['moves']} moves ({load['moves_per_second']:g}/s, p50 {load['p50_ms']} ms, "
        f"p99 {load['p99_ms']} ms), errors {load['errors']}"),
        (f"  replay_lag (pg_stat_replication, {lag['samples']} samples): p50 {lag['p50']} ms, p99 {lag['p99']} ms, "
        f"max {lag['max']} ms"),
        (f"  WAL not yet replayed ({behind['samples']} samples): p50 {behind['p50']} B, p99 {behind['p99']} B, "
        f"max {behind['max']} B"),
    ])


def main() -> None:
    seconds = _float_env("REPLICA_SECONDS", quick(20.0, 4.0))
    results = run_and_report(_run, seconds, "canfield-replica-", report, RESULTS_FILE)
    if results["load"]["errors"]:
        raise SystemExit("replica bench: errors under load (see above)")
