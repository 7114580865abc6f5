"""Analysis off the request path: ``ANALYSIS_WORKERS`` loops per server process, each taking jobs from
the queue in PostgreSQL and running the solver in a worker process of its own.

A loop takes the next waiting job in fair order (``AnalysisQueue.claim``: round robin across the
players who asked), runs it (``service.analysis.jobs``)
and looks again; with nothing waiting it sleeps until a job is asked for in this process or
``POLL_SECONDS`` have passed (a job asked for in another process, or left by one that died). While
a job runs, its lease is renewed every third of ``ANALYSIS_LEASE_SECONDS``; a process that dies
stops renewing, and the job is taken up by the next loop anywhere that finds its lease run out, from
the answers kept so far. A process that stops on purpose gives its jobs back at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from ..deals.solver_workers import SolverWorkers
from ..settings import Settings
from ..store.connections import DATABASE_DOWN_ERRORS
from ..store.event_store import EventStore
from ..tasks import cancel_and_wait
from .jobs import JSON, SolverTime, analysis_of, report, run, solve_position, spent_of
from .queue import AnalysisQueue, Claimed
from .verdicts import VerdictCache

POLL_SECONDS = 5.0
log = logging.getLogger("canfield")


class AnalysisRunner:
    def __init__(self, store: EventStore, settings: Settings) -> None:
        self.store = store
        self.queue = AnalysisQueue(store.pool)
        self.verdicts = VerdictCache(store.pool)
        self.seconds = settings.analysis_position_seconds
        self.budget = settings.analysis_job_seconds
        self.lease = settings.analysis_lease_seconds
        self.workers = [SolverWorkers() for _ in range(settings.analysis_workers)]
        self.finished = 0  # jobs this process has finished (a benchmark counts them)
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._loop(workers), name="canfield-analysis") for workers in self.workers]

    def wake(self) -> None:
        """A job was asked for in this process: look now."""
        self._wake.set()

    async def stop(self) -> None:
        for task in self._tasks:
            await cancel_and_wait(task)
        self._tasks = []
        for workers in self.workers:
            workers.close()

    async def _loop(self, workers: SolverWorkers) -> None:
        while True:
            try:
                job = await self.queue.claim(self.lease)
            except DATABASE_DOWN_ERRORS as error:
                log.warning("analysis: the database is not answering (%s)", type(error).__name__)
                job = None
            if job is None:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
                continue
            await self.run(job, workers)

    async def run(self, job: Claimed, workers: SolverWorkers) -> bool:
        """Run a job this process has taken to its end: done, or failed (its reason logged and kept).
        False when it stopped being ours (its lease was taken over) or the database went away."""
        try:
            async with self._leased(job):
                analysis = analysis_of(await self.store.read_events_upto(job.game_id, job.version), job.answers)

                async def keep(answers: list[JSON], done: int) -> bool:
                    return await self.queue.progress(job, answers, done, self.lease)

                async def solve_one(snapshot: dict[str, Any], seconds: float) -> tuple[str, str | None]:
                    return await workers.run(solve_position, snapshot, seconds)

                allowed = SolverTime(self.seconds, self.budget, spent_of(job.answers))
                if not await run(analysis, solve_one, allowed, keep, self.verdicts):
                    return False
                finished = await self.queue.finish(job, report(analysis), analysis.settled)
                self.finished += finished
                return finished
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.queue.release(job))
            raise
        except DATABASE_DOWN_ERRORS as error:
            log.warning("analysis of game %s stopped: the database is not answering (%s)", job.game_id,
                        type(error).__name__)  # its lease runs out; a loop takes it up again
            return False
        except Exception as error:  # a Contradiction (a solver answer that is no proof) or a bug: logged
            log.exception("analysis of game %s failed", job.game_id)
            await self.queue.fail(job, f"{type(error).__name__}: {error}")
            return False

    @contextlib.asynccontextmanager
    async def _leased(self, job: Claimed) -> AsyncIterator[None]:
        """Renew the job's lease in the background while the block runs."""

        async def renew() -> None:
            with contextlib.suppress(*DATABASE_DOWN_ERRORS):  # the job's own next write finds out
                while await self.queue.renew(job, self.lease):
                    await asyncio.sleep(self.lease / 3)

        task = asyncio.create_task(renew(), name="canfield-analysis-lease")
        try:
            yield
        finally:
            await cancel_and_wait(task)
