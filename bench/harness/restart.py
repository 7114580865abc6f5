"""The database restarted under load: stopped (``pg_ctl stop -m fast``), left down, started again on
the same data directory, and the time until the service acknowledges a move and answers ``/health``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from .mixed_load import Run
from .processes import Server, health_ok
from .service_api import embedded_db

RESTART_LOAD_BEFORE = 1.0  # seconds of load before the stop
RESTART_DOWN = 1.0  # seconds the database stays down
RESTART_LOAD_AFTER = 2.0  # seconds of load after the recovery


async def restart_under_load(db: Any, data_dir: Path, server: Server, run: Run) -> tuple[Any, dict[str, Any]]:
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
