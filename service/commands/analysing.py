"""``canfield analyse GAME_ID``: a game's analysis from the command line. Queues it as the API would
(for a game that has ended and is public), runs it in this process unless a server's worker has it
already (then waits for it), and returns the finished job."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from ..analysis.queue import DONE, FAILED, JobRow
from ..bootstrap import build_services, close
from ..deals.solver_workers import SolverWorkers
from ..settings import Settings
from ..store.connections import PoolOptions, open_pool
from ..store.event_store import EventStore

WAIT_SECONDS = 1.0


async def analyse(url: str, settings: Settings, game_id: uuid.UUID, said: Callable[[str], None]) -> JobRow:
    """The game's finished (done or failed) job; ``said`` hears what happens on the way."""
    pool = open_pool(url, PoolOptions(1, 4, settings.statement_timeout_ms, settings.pool_timeout_seconds))
    await pool.open()
    services = build_services(EventStore(pool), settings)
    runner = services.analysis
    workers = SolverWorkers()
    try:
        job = await services.analyses.request_public(game_id)
        said(f"analysis of game {game_id}: {job.status}, {job.total} positions")
        while job.status not in (DONE, FAILED):
            claimed = await runner.queue.claim(settings.analysis_lease_seconds, game_id)
            if claimed is not None:
                kept = f" (resuming from {len(claimed.answers)} answers)" if claimed.answers else ""
                said(f"running it here{kept}")
                await runner.run(claimed, workers)
            else:
                await asyncio.sleep(WAIT_SECONDS)  # a server's worker runs it
            found = await runner.queue.get(game_id)
            assert found is not None
            job = found
        return job
    finally:
        workers.close()
        await close(services)
        await pool.close()
