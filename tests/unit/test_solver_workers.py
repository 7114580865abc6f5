"""The solver's worker process: off the event loop, and below the server's priority where asked."""

from __future__ import annotations

import os

import pytest

from service.deals.daily_deals import DAILY_SOLVER_NICENESS
from service.deals.solver_workers import SolverWorkers


def niceness() -> int:
    return os.nice(0)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="os.nice does not exist on this platform")
async def test_a_worker_runs_at_the_niceness_it_was_given_and_the_server_keeps_its_own() -> None:
    mine = os.nice(0)
    background, foreground = SolverWorkers(niceness=DAILY_SOLVER_NICENESS), SolverWorkers()
    try:
        assert await background.run(niceness) == min(mine + DAILY_SOLVER_NICENESS, 19)
        assert await foreground.run(niceness) == mine  # hints: a player is waiting
        assert os.nice(0) == mine
        assert await background.run(os.getpid) != os.getpid()
    finally:
        background.close()
        foreground.close()
