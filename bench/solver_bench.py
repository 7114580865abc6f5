"""Solver figures: on seeds 1..N of each ruleset with a time budget per deal, how many deals are
won (a line found and replayed to a win), proven lost, or undecided; line lengths (API moves,
draws included) and solve times. The budget is CPU seconds of the worker (the same verdicts on
a busy machine, only later); no position limit. Env: SOLVER_BENCH_SEEDS (default 1751, or a
range "A-B"), SOLVER_BENCH_BUDGET (default 10), SOLVER_BENCH_RULESETS (default all three),
SOLVER_BENCH_WORKERS (default: every core). Results go to bench/results/solver-<ruleset>.json,
and one record per seed to solver-<ruleset>.jsonl (the format of `canfield pool build`'s
progress file, so `canfield pool recheck --reuse` can take them); a range A-B writes
solver-<ruleset>-A-B.jsonl, and SOLVER_BENCH_MERGE=1 sums up the stored records of seeds 1..N
(parts run side by side) instead of solving."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .harness.env import quick

RESULTS = Path(__file__).resolve().parent / "results"


def _solve(job: tuple[str, int, float]) -> dict[str, object]:
    from domain import get_ruleset

    from .harness.service_api import solve_seed

    ruleset_id, seed, budget = job
    ruleset = get_ruleset(ruleset_id)
    record = solve_seed(ruleset.id, ruleset.version, seed, budget)
    if record.pop("_error") is not None:  # a won line that does not replay: a bug, never a win
        record["result"] = "unknown"
    record.pop("_stopped")
    return record


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        only = values[0] if values else 0.0
        return only, only, only
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def _records_path(ruleset_id: str, seeds: range) -> Path:
    """solver-<ruleset>.jsonl for seeds from 1; a part run (seeds from A) gets its own file."""
    part = "" if seeds.start == 1 else f"-{seeds.start}-{seeds.stop - 1}"
    return RESULTS / f"solver-{ruleset_id}{part}.jsonl"


def run(ruleset_id: str, seeds: range, budget: float, workers: int) -> dict[str, object]:
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    with ProcessPoolExecutor(workers) as pool, open(_records_path(ruleset_id, seeds), "w") as log:
        for record in pool.map(_solve, [(ruleset_id, seed, budget) for seed in seeds], chunksize=2):
            log.write(json.dumps(record) + "\n")
            log.flush()
            rows.append(record)
    return figures(ruleset_id, rows, budget, time.perf_counter() - started, workers)


def figures(
    ruleset_id: str, rows: list[dict[str, object]], budget: float, wall: float, workers: int
) -> dict[str, object]:
    """The summary of per-seed records (seeds in order)."""
    won = [r for r in rows if r["result"] == "won"]
    lost = [r for r in rows if r["result"] == "lost"]
    lengths = quartiles([float(str(r["length"])) for r in won])
    count = len(rows)
    return {
        "ruleset": ruleset_id,
        "seeds": f"{rows[0]['seed']}..{rows[-1]['seed']}",
        "budgetSeconds": budget,
        "won": len(won),
        "lost": len(lost),
        "undecided": count - len(won) - len(lost),
        "foundRate": len(won) / count,
        "decidedShare": (len(won) + len(lost)) / count,
        "lineLength": {"q1": lengths[0], "median": lengths[1], "q3": lengths[2]},
        "medianSeconds": statistics.median(float(str(r["seconds"])) for r in rows),
        "wallSeconds": wall,
        "workers": workers,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }


def merged(ruleset_id: str, seeds: range, budget: float) -> dict[str, object]:
    """Figures from the per-seed records of earlier runs (parts run side by side), seeds 1..N."""
    found: dict[int, dict[str, object]] = {}
    for path in sorted(RESULTS.glob(f"solver-{ruleset_id}*.jsonl")):
        for text in path.read_text().splitlines():
            record = json.loads(text)
            if record["budgetSeconds"] == budget and int(str(record["seed"])) in seeds:
                found.setdefault(int(str(record["seed"])), record)
    missing = [seed for seed in seeds if seed not in found]
    if missing:
        raise SystemExit(f"solver bench: no record for {len(missing)} seeds of {ruleset_id} (first {missing[0]})")
    return figures(ruleset_id, [found[seed] for seed in seeds], budget, 0.0, 0)


def main() -> None:
    text = os.environ.get("SOLVER_BENCH_SEEDS", quick("1751", "2-3"))
    first, _, last = text.rpartition("-")
    seeds = range(int(first) if first else 1, int(last) + 1)
    budget = float(os.environ.get("SOLVER_BENCH_BUDGET", quick("10", "1")))
    workers = int(os.environ.get("SOLVER_BENCH_WORKERS", str(os.cpu_count() or 1)))
    rulesets = os.environ.get("SOLVER_BENCH_RULESETS", "open-runs,classic,draw-one").split(",")
    merge = os.environ.get("SOLVER_BENCH_MERGE") == "1"  # summarize stored records instead of solving
    RESULTS.mkdir(exist_ok=True)
    print(f"solver bench: seeds {seeds.start}..{seeds.stop - 1}, {budget:g} CPU s per deal, {workers} workers")
    print(f"{'ruleset':10} {'won':>6} {'lost':>6} {'undec.':>6} {'found':>7} {'decided':>8} "
          f"{'line q1/median/q3':>19} {'median s':>9} {'wall s':>8}")
    for ruleset_id in rulesets:
        summary = merged(ruleset_id, seeds, budget) if merge else run(ruleset_id, seeds, budget, workers)
        if seeds.start == 1:
            (RESULTS / f"solver-{ruleset_id}.json").write_text(json.dumps(summary, indent=2) + "\n")
        line = summary["lineLength"]
        assert isinstance(line, dict)
        print(
            f"{ruleset_id:10} {summary['won']:>6} {summary['lost']:>6} {summary['undecided']:>6} "
            f"{summary['foundRate']:>7.1%} {summary['decidedShare']:>8.1%} "
            f"{line['q1']:>6.0f}/{line['median']:>5.0f}/{line['q3']:<6.0f} "
            f"{summary['medianSeconds']:>9.3f} {summary['wallSeconds']:>8.0f}"
        )
