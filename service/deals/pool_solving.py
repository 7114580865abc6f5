"""The solver side of the pool commands: one seed solved in a worker process, the process pool.

Each seed is solved with its own deadline in CPU time of its worker (``solve_seed``), so a busy
machine gives the same verdicts, only later; a won line is replayed to a win before it counts.
The workers share one stop event with the parent: once it is set, the solves running give up
(the solver's clock checks it), and Ctrl-C is the parent's to handle (exit 130).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from domain.rulesets import get_ruleset
from domain.solver import SOLVER_VERSION
from service.deals.deal_pools import encode_line, start_state
from service.deals.pool_verify import BuildError, check_line

SOLVER_NAME = f"domain.solver@{SOLVER_VERSION}"
DEFAULT_BUDGET_SECONDS = 10.0
EXIT_INTERRUPTED = 130


# --- the worker side --------------------------------------------------------------------

_stop: Any = None  # a multiprocessing Event shared with the parent: set = give up the current solve


def _init_worker(stop: Any) -> None:
    global _stop  # noqa: PLW0603 (a pool initializer hands the worker its state through a module global)
    _stop = stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def solve_seed(ruleset_id: str, version: int, seed: int, budget_seconds: float) -> dict[str, Any]:
    """Solve one seed with its own deadline; the record of the progress file, plus two private keys.

    ``_stopped``: the parent asked to stop (an ``unknown`` then means nothing);
    ``_error``: a won line that does not replay (None when fine).
    """
    from domain.solver import Budget, solve

    ruleset = get_ruleset(ruleset_id, version)
    stop = _stop
    # The budget is CPU time of this worker, so a busy machine gives the same verdicts, only later.
    started = time.process_time()
    deadline = started + budget_seconds

    def out_of_time() -> bool:
        return time.process_time() > deadline or (stop is not None and stop.is_set())

    outcome = solve(start_state(ruleset, seed), Budget(out_of_time=out_of_time))
    seconds = time.process_time() - started
    line = encode_line(outcome.moves) if outcome.result == "won" else ""
    error = check_line(ruleset, seed, len(outcome.moves), line) if outcome.result == "won" else None
    return {
        "ruleset": ruleset.id,
        "rulesetVersion": ruleset.version,
        "solver": SOLVER_NAME,
        "budgetSeconds": budget_seconds,
        "seed": seed,
        "result": outcome.result,
        "length": len(outcome.moves),
        "line": line,
        "seconds": round(seconds, 4),
        "states": outcome.states,
        "_stopped": bool(stop is not None and stop.is_set()),
        "_error": error,
    }


# --- the parent side --------------------------------------------------------------------


def check_budget(budget_seconds: float) -> None:
    if not budget_seconds > 0:
        raise BuildError("--budget-seconds must be more than 0")


def worker_count(workers: int | None) -> int:
    return workers or os.cpu_count() or 1


def solver_processes(workers: int) -> tuple[ProcessPoolExecutor, Any]:
    """A process pool of solvers, and the event that tells their solves to give up."""
    context = multiprocessing.get_context()
    stop = context.Event()
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(stop,))
    return executor, stop
