"""Solver work off the event loop: the solver runs in a separate process (it is CPU-bound).

One job runs at a time; the others wait in this process, not in the executor, first come first
served, at most ``max_waiting`` of them (one more is ``503 solver_busy`` with ``Retry-After``).
The solver hints' workers have that bound (``SOLVER_QUEUE_MAX``); the daily deals' and the race
deals' have none here, because their callers bound how many of them wait (``DailyDeals``, at most
``DAILY_PREPARING_MAX`` dates at once; ``RaceDealQueue``, at most ``RACE_DEAL_QUEUE_MAX``
race creations at once). A job whose caller
is cancelled while it waits (its client went away: the controller cancels the request) leaves the
queue and never runs. A job already running in the worker cannot be interrupted there: its
caller stops waiting, its result is dropped, and the next job starts when it ends, within its own
time budget (``SOLVER_HINT_MS`` for a hint).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, TypeVar

from domain import Ruleset, command_to_api
from domain.codec import snapshot_to_state
from domain.solver import Budget, solve

from ..errors import SolverBusy
from ..metrics import SOLVER_HINTS, SOLVER_JOBS, SOLVER_WAITING
from .daily import PROOF_MAX_SECONDS, PROOF_MAX_STATES, Proof, prove

RETRY_AFTER_SECONDS = 2
JOB_NAMES = {"next_move": "hint", "prove": "proof"}
"""The ``job`` label of the solver's job durations, by the function the worker runs."""


def next_move(snapshot: dict[str, Any], seconds: float) -> tuple[str, dict[str, str] | None]:
    """The solver's verdict from a position and the first move of its winning line.

    ``lost`` only when proven (the solver's sound stage searched everything); out of time is
    ``unknown``. There is no position limit: ``seconds`` is the only budget.
    """
    deadline = time.perf_counter() + seconds
    result = solve(snapshot_to_state(snapshot), Budget(out_of_time=lambda: time.perf_counter() > deadline))
    first = command_to_api(result.moves[0]) if result.result == "won" and result.moves else None
    return result.result, first


T = TypeVar("T")


def _end_with(parent: int) -> None:
    """In a worker, first thing: end when the server process ends, however it ends (uvicorn
    re-raises SIGTERM after a graceful shutdown, which skips the executor's own clean-up, and a
    SIGKILL skips everything). Linux only (PR_SET_PDEATHSIG); elsewhere ``close`` has to do."""
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the server ended before the line above
        os._exit(0)


class SolverWorkers:
    """One worker process, started on first use: CPU-bound work off the event loop, one job at a
    time, at most ``max_waiting`` more waiting (None: no bound)."""

    def __init__(self, max_waiting: int | None = None) -> None:
        self.executor: ProcessPoolExecutor | None = None
        self.max_waiting = max_waiting
        self.started = 0  # jobs handed to the worker process (a test counts them)
        self._busy = False
        self._waiting: list[asyncio.Future[None]] = []  # callers waiting for the worker, first come first

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker process (a module-level function, picklable arguments)."""
        await self._turn()
        if self.executor is None:
            self.executor = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_end_with,
                initargs=(os.getpid(),),
            )
        loop = asyncio.get_running_loop()
        try:
            job = loop.run_in_executor(self.executor, function, *args)
        except BaseException:
            self._next()
            raise
        self.started += 1
        timer = SOLVER_JOBS.labels(JOB_NAMES.get(function.__name__, function.__name__)).observe
        # the worker is free when the job ends, awaited or not
        job.add_done_callback(partial(self._ended, started=time.perf_counter(), timer=timer))
        return await asyncio.shield(job)  # a cancelled caller stops waiting; the job's result is dropped

    async def _turn(self) -> None:
        """Return when the worker is this caller's; refuse when too many wait already."""
        if not self._busy and not self._waiting:
            self._busy = True
            return
        if self.max_waiting is not None and len(self._waiting) >= self.max_waiting:
            raise SolverBusy(f"the solver is busy ({len(self._waiting)} requests are waiting for it): "
                              "try again in a moment", retry_after=RETRY_AFTER_SECONDS)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        SOLVER_WAITING.inc()
        try:
            await turn
        except BaseException:
            if turn in self._waiting:
                self._waiting.remove(turn)  # gone before its turn: never runs
            elif not turn.cancelled():
                self._next()  # given the worker just as it was cancelled: pass it on
            raise
        finally:
            SOLVER_WAITING.dec()

    def _ended(self, job: asyncio.Future[Any], started: float, timer: Callable[[float], None]) -> None:
        timer(time.perf_counter() - started)
        if not job.cancelled():
            job.exception()  # retrieved: a dropped job's error is not logged as never retrieved
        self._next()

    def _next(self) -> None:
        """The job has ended: the first caller still waiting gets the worker."""
        while self._waiting:
            turn = self._waiting.pop(0)
            if not turn.done():
                turn.set_result(None)
                return
        self._busy = False

    async def next_move(self, snapshot: dict[str, Any], seconds: float) -> tuple[str, dict[str, str] | None]:
        verdict = await self.run(next_move, snapshot, seconds)
        SOLVER_HINTS.labels(verdict[0]).inc()
        return verdict

    def close(self) -> None:
        for turn in self._waiting:
            turn.cancel()
        self._waiting.clear()
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None


class WorkerProver:
    """A ``Prover`` (service.deals.daily) with a solver worker process of its own, started when
    first needed: races' and tournaments' secret deals are proven here, so proving them never
    holds up the daily deal's proof, nor it theirs."""

    def __init__(self) -> None:
        self.workers = SolverWorkers()

    async def __call__(self, ruleset: Ruleset, seed: int) -> Proof:
        return await self.workers.run(prove, ruleset.id, ruleset.version, seed, PROOF_MAX_STATES, PROOF_MAX_SECONDS)

    def close(self) -> None:
        self.workers.close()
