"""Solver hints off the event loop: the solver runs in a separate process (it is CPU-bound)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from domain import command_to_api
from domain.codec import snapshot_to_state
from domain.solver import Budget, solve


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
    """One worker process, started on first use: CPU-bound work off the event loop."""

    def __init__(self) -> None:
        self.executor: ProcessPoolExecutor | None = None

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker process (a module-level function, picklable arguments)."""
        if self.executor is None:
            self.executor = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_end_with,
                initargs=(os.getpid(),),
            )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, function, *args)

    async def next_move(self, snapshot: dict[str, Any], seconds: float) -> tuple[str, dict[str, str] | None]:
        return await self.run(next_move, snapshot, seconds)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None
