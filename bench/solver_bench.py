"""Solver figures: on seeds 1..N of each ruleset with a time budget per deal, how many deals are
won (a line found), proven lost, or undecided; line lengths (API moves, draws included) and solve
times. Env: SOLVER_BENCH_SEEDS (default 1751), SOLVER_BENCH_BUDGET (CPU seconds, default 10),
SOLVER_BENCH_RULESETS (default all three), SOLVER_BENCH_WORKERS (default: every core).
Results also go to bench/results/solver-<ruleset>.json."""

from __future__ import annotations

import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _solve(job: tuple[str, int, float]) -> tuple[int, str, int, float, int]:
    from domain import get_ruleset
    from domain.solver import Budget, solve
    from service.pool import start_state

    ruleset_id, seed, budget = job
    started = time.process_time()  # CPU seconds: the same verdicts on a busy machine
    deadline = started + budget
    result = solve(
        start_state(get_ruleset(ruleset_id), seed),
        Budget(max_states=10**9, out_of_time=lambda: time.process_time() > deadline),
    )
    return seed, result.result, len(result.moves), time.process_time() - started, result.states


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        only = values[0] if values else 0.0
        return only, only, only
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def run(ruleset_id: str, seeds: int, budget: float, workers: int) -> dict[str, object]:
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        rows = list(pool.map(_solve, [(ruleset_id, seed, budget) for seed in range(1, seeds + 1)], chunksize=4))
    wall = time.perf_counter() - started
    won = [r for r in rows if r[1] == "won"]
    lost = [r for r in rows if r[1] == "lost"]
    lengths = quartiles([float(r[2]) for r in won])
    return {
        "ruleset": ruleset_id,
        "seeds": seeds,
        "budgetSeconds": budget,
        "won": len(won),
        "lost": len(lost),
        "undecided": seeds - len(won) - len(lost),
        "foundRate": len(won) / seeds,
        "decidedShare": (len(won) + len(lost)) / seeds,
        "lineLength": {"q1": lengths[0], "median": lengths[1], "q3": lengths[2]},
        "medianSeconds": statistics.median(r[3] for r in rows),
        "wallSeconds": wall,
        "workers": workers,
    }


def main() -> None:
    seeds = int(os.environ.get("SOLVER_BENCH_SEEDS", "1751"))
    budget = float(os.environ.get("SOLVER_BENCH_BUDGET", "10"))
    workers = int(os.environ.get("SOLVER_BENCH_WORKERS", str(os.cpu_count() or 1)))
    rulesets = os.environ.get("SOLVER_BENCH_RULESETS", "open-runs,classic,draw-one").split(",")
    RESULTS.mkdir(exist_ok=True)
    print(f"solver bench: seeds 1..{seeds}, {budget:g} s per deal, {workers} workers")
    print(f"{'ruleset':10} {'won':>6} {'lost':>6} {'undec.':>6} {'found':>7} {'decided':>8} "
          f"{'line q1/median/q3':>19} {'median s':>9} {'wall s':>8}")
    for ruleset_id in rulesets:
        figures = run(ruleset_id, seeds, budget, workers)
        (RESULTS / f"solver-{ruleset_id}.json").write_text(json.dumps(figures, indent=2) + "\n")
        line = figures["lineLength"]
        assert isinstance(line, dict)
        print(
            f"{ruleset_id:10} {figures['won']:>6} {figures['lost']:>6} {figures['undecided']:>6} "
            f"{figures['foundRate']:>7.1%} {figures['decidedShare']:>8.1%} "
            f"{line['q1']:>6.0f}/{line['median']:>5.0f}/{line['q3']:<6.0f} "
            f"{figures['medianSeconds']:>9.3f} {figures['wallSeconds']:>8.0f}"
        )
