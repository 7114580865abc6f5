"""`canfield pool recheck`: re-decide the seeds outside a pool, and move none of its deals.

Pool numbers are published addresses, so a pool's deals and their order stay byte for byte.
``recheck`` re-decides, with the current solver, every seed of 1..seedsTried that is not a pool
deal, and rewrites only the verdicts. Seeds it wins stay out of the pool (``wonOutsidePool``,
with their lines), so that no number moves. Each newly finished seed is appended to
``<file>.recheck.jsonl``, so an interrupted recheck resumes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from domain.rulesets import Ruleset
from service.deals.deal_pools import DealPool, deal_pool_path, parse_pool
from service.deals.pool_progress import read_progress
from service.deals.pool_solving import (
    DEFAULT_BUDGET_SECONDS,
    EXIT_INTERRUPTED,
    SOLVER_NAME,
    check_budget,
    solve_seed,
    solver_processes,
    worker_count,
)
from service.deals.pool_verify import (
    BuildError,
    line_problem,
    loud,
    pool_json,
    pool_ruleset,
    verify_document,
    write_atomically,
)


def recheck_path(output: Path) -> Path:
    return output.with_name(output.name + ".recheck.jsonl")


def recheck(
    ruleset_id: str,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    workers: int | None = None,
    file: Path | None = None,
    reuse: Iterable[Path] = (),
) -> int:
    """Re-decide every seed of 1..seedsTried outside the pool; rewrite the verdicts, never the deals.

    Records of the current solver with the same budget are reused from ``reuse`` files (e.g. the
    solver bench's ``bench/results/solver-<ruleset>.jsonl``) and from ``<file>.recheck.jsonl``,
    where each newly finished seed is appended (so an interrupted recheck resumes).
    """
    ruleset = pool_ruleset(ruleset_id)
    check_budget(budget_seconds)
    workers = worker_count(workers)
    path = file or deal_pool_path(ruleset.id)
    document, pool = _verified_pool(path, ruleset)
    in_pool = {item.seed for item in pool.deals}
    todo = [seed for seed in range(1, pool.seeds_tried + 1) if seed not in in_pool]
    progress = recheck_path(path)
    records: dict[int, dict[str, Any]] = {}
    for source in [*reuse, progress]:
        for record in read_progress(source, pool.ruleset, budget_seconds)[0]:
            records.setdefault(int(record["seed"]), record)
    missing = [seed for seed in todo if seed not in records]
    print(
        f"canfield pool recheck: {pool.ruleset.key}: {len(todo)} seeds outside the pool, {len(todo) - len(missing)} "
        f"reused, solving {len(missing)} with {workers} workers ({budget_seconds:g} s each)",
        file=sys.stderr,
        flush=True,
    )
    if not _solve_missing(pool.ruleset, missing, budget_seconds, workers, progress, records):
        return EXIT_INTERRUPTED
    renewed, won, lost, undecided = _renewed(document, pool, budget_seconds, todo, records)
    text = pool_json(renewed)
    problems = verify_document(json.loads(text))
    if problems:
        for problem in problems:
            loud(problem)
        print(f"canfield pool recheck: {path} was NOT rewritten; results are kept in {progress}", file=sys.stderr)
        return 1
    write_atomically(path, text)
    progress.unlink(missing_ok=True)
    print(
        f"canfield pool recheck: {pool.ruleset.key}: seeds 1..{pool.seeds_tried}: won {renewed['won']} "
        f"({pool.size} pool deals, {won} outside the pool), lost {lost}, undecided {undecided}; "
        f"the {pool.size} deals are unchanged; wrote {path}",
        flush=True,
    )
    return 0


def _verified_pool(path: Path, ruleset: Ruleset) -> tuple[dict[str, Any], DealPool]:
    """The pool document at ``path`` and the pool it holds, checked whole and of ``ruleset``."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BuildError(f"cannot read the pool {path}: {error}") from None
    problems = verify_document(document)
    if problems:
        raise BuildError(f"the pool {path} does not verify, so it is left alone: {problems[0]}")
    pool = parse_pool(document)
    if pool.ruleset.id != ruleset.id:
        raise BuildError(f"{path} is a pool for {pool.ruleset.id}, not {ruleset.id}")
    return document, pool


def _solve_missing(
    ruleset: Ruleset,
    missing: list[int],
    budget_seconds: float,
    workers: int,
    progress: Path,
    records: dict[int, dict[str, Any]],
) -> bool:
    """Solve the ``missing`` seeds into ``records``, each appended to ``progress``; False on Ctrl-C."""
    executor, stop = solver_processes(workers)
    try:
        with open(progress, "a", encoding="utf-8") as log:
            futures = [
                executor.submit(solve_seed, ruleset.id, ruleset.version, seed, budget_seconds) for seed in missing
            ]
            for done, future in enumerate(futures, start=1):
                record = future.result()
                record.pop("_stopped")
                record.pop("_error")  # checked again below, with every reused record
                log.write(json.dumps(record) + "\n")
                log.flush()
                records[int(record["seed"])] = record
                if done % 10 == 0 or done == len(futures):
                    print(f"canfield pool recheck: {done}/{len(futures)} solved", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
        print(f"\ncanfield pool recheck: interrupted; results so far are kept in {progress}", file=sys.stderr)
        return False
    finally:
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
    return True


def _renewed(
    document: dict[str, Any],
    pool: DealPool,
    budget_seconds: float,
    todo: list[int],
    records: dict[int, dict[str, Any]],
) -> tuple[dict[str, Any], int, int, int]:
    """The document with the verdicts of ``records`` on the seeds outside the pool (a won line
    that does not replay counts as undecided), the deals untouched; and how many are won, lost
    and undecided outside the pool."""
    won: list[dict[str, Any]] = []
    lost: list[int] = []
    undecided: list[int] = []
    for seed in todo:
        record = records[seed]
        if record["result"] == "won":
            problem = line_problem(pool.ruleset, record)
            if problem is None:
                won.append({"seed": seed, "length": record["length"], "line": record["line"]})
                continue
            loud(f"{problem}; counted as undecided")
        (lost if record["result"] == "lost" else undecided).append(seed)
    renewed = {key: value for key, value in document.items() if key not in ("verdicts", "deals")}
    renewed.update(
        won=pool.size + len(won),
        lost=len(lost),
        undecided=len(undecided),
        verdicts={
            "solver": SOLVER_NAME,
            "budgetSeconds": budget_seconds,
            "wonOutsidePool": won,
            "lost": lost,
            "undecided": undecided,
        },
        deals=document["deals"],
    )
    return renewed, len(won), len(lost), len(undecided)
