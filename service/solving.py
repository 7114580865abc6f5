"""Solver hints off the event loop: the solver runs in a separate process (it is CPU-bound)."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

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


class SolverPool:
    """One worker process per server process, started on first use."""

    def __init__(self) -> None:
        self.executor: ProcessPoolExecutor | None = None

    async def next_move(self, snapshot: dict[str, Any], seconds: float) -> tuple[str, dict[str, str] | None]:
        if self.executor is None:
            self.executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, next_move, snapshot, seconds)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None
