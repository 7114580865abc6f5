"""`canfield pool build`: make a verified deal pool, the first N won seeds in seed order.

Build: seeds 1, 2, 3, ... are solved in a process pool, each with its own deadline, until the
first N won seeds (in seed order) are known. The pool is those N seeds; "seeds tried" is the
N-th win's seed, and won / lost / undecided are counted over seeds 1 .. seeds tried exactly.

Order and stop: at most ``2 * workers`` seeds are in flight, handed out in increasing order.
The next seed S is handed out only while fewer than N wins are known among the seeds below S
(all finished or running): once N are, the N-th win is below S whatever the running seeds
turn out to be. The build ends when seeds 1 .. K are all done and hold N wins; seeds still
running then are stopped (a shared event the solver's clock checks) and forgotten.

Every won line is replayed through the rules engine (``service.deals.deal_pools.verify_deal``) when it
arrives: one that does not replay to a win counts as undecided and is reported loudly. The
exact document is checked again before it is written; a failure there (a bug in between)
writes nothing and exits 1.

Pool numbers are published addresses: ``build`` never rewrites a pool file that already has
deals (with enough deals there is nothing to do; with fewer it says why and stops);
``canfield pool recheck`` (``service.deals.pool_recheck``) re-decides the seeds outside the pool.

Resume: every finished seed is appended (and flushed) to ``<output>.progress.jsonl`` as one
JSON line; a new run reuses the lines with the same ruleset and budget. Ctrl-C stops cleanly
(exit 130) and keeps that file. At the end the pool file is written atomically and the
progress file deleted. The pool file holds no timestamps.
"""

from __future__ import annotations

import json
import signal
import statistics
import sys
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from domain.rulesets import Ruleset
from service.deals.deal_pools import DealPool, PoolDeal, deal_pool_path
from service.deals.pool_progress import ProgressBar, Seeds, pool_document, progress_path, read_progress
from service.deals.pool_solving import (
    DEFAULT_BUDGET_SECONDS,
    EXIT_INTERRUPTED,
    check_budget,
    solve_seed,
    solver_processes,
    worker_count,
)
from service.deals.pool_verify import (
    BuildError,
    check_line,
    line_problem,
    loud,
    pool_json,
    pool_ruleset,
    verify_document,
    write_atomically,
)


class _CtrlC:
    """SIGINT as a flag (``pool build``): the handler only records it (no lock taken in a signal
    handler); ``check`` raises ``KeyboardInterrupt`` where the parent can take it, within the
    loop's quarter-second wait, and the parent then tells the workers to stop."""

    def __init__(self) -> None:
        self.seen = False

    def handle(self, _signum: int, _frame: object) -> None:
        self.seen = True

    def check(self) -> None:
        if self.seen:
            raise KeyboardInterrupt


def _published(output: Path, count: int) -> bool:
    """True when ``output`` already holds at least ``count`` deals (nothing to build); a BuildError
    when it holds fewer: building again could give its published numbers other deals."""
    try:
        document = json.loads(output.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # none yet, or unreadable: nothing published there
    deals = document.get("deals") if isinstance(document, dict) else None
    if not deals:
        return False
    if len(deals) >= count:
        return True
    raise BuildError(
        f"{output} already holds {len(deals)} deals, and a pool number is a published address: a new "
        f"build could give those numbers other deals. `canfield pool recheck` re-decides the seeds outside "
        f"the pool without moving a deal; --output PATH builds a new file elsewhere"
    )


def build(
    ruleset_id: str,
    count: int,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    workers: int | None = None,
    output: Path | None = None,
) -> int:
    """Build the pool; the exit status (0, 1 when the final check fails, 130 on Ctrl-C)."""
    ruleset = pool_ruleset(ruleset_id)
    if count < 1:
        raise BuildError("--count must be at least 1")
    check_budget(budget_seconds)
    workers = worker_count(workers)
    if workers < 1:
        raise BuildError("--workers must be at least 1")
    output = output or deal_pool_path(ruleset.id)
    if _published(output, count):
        print(f"canfield pool build: {output} already holds {count} or more deals; nothing to build", flush=True)
        return 0
    progress = progress_path(output)
    label = f"{ruleset.key} budget {budget_seconds:g}s"
    started = time.perf_counter()
    seeds = Seeds(count)
    reused = _reuse_progress(progress, ruleset, budget_seconds, seeds)
    output.parent.mkdir(parents=True, exist_ok=True)
    bar = ProgressBar(sys.stderr, label, count)
    run = _Build(ruleset, count, budget_seconds, workers, seeds, progress, bar, started)
    outcome = run.run()
    if isinstance(outcome, int):
        return outcome
    document, text, final_problems = outcome
    wall = time.perf_counter() - started
    if final_problems:
        for problem in final_problems:
            loud(problem)
        print(
            f"canfield pool build: the pool was NOT written (a bug: lines passed one check and failed the next); "
            f"the seed results are kept in {progress}",
            file=sys.stderr,
        )
        return 1
    write_atomically(output, text)
    progress.unlink(missing_ok=True)
    _report_built(run, document, reused, wall, output)
    return 0


def _reuse_progress(progress: Path, ruleset: Ruleset, budget_seconds: float, seeds: Seeds) -> int:
    """Add the seed results of an earlier run's progress file to ``seeds``; how many were reused."""
    records, skipped = read_progress(progress, ruleset, budget_seconds)
    reused = 0
    for record in records:
        if int(record["seed"]) in seeds.verdict:
            continue
        problem = None
        if record["result"] == "won":
            problem = line_problem(ruleset, record)
            if problem is not None:
                loud(f"{problem} (a reused progress line); counted as undecided")
        seeds.add(record, problem)
        reused += 1
    if records or skipped:
        print(
            f"canfield pool build: reusing {reused} seed results from {progress}"
            + (f" (ignored {skipped} lines of another ruleset or budget, or unreadable)" if skipped else ""),
            file=sys.stderr,
            flush=True,
        )
    return reused


@dataclass
class _Build:
    """A pool build in progress: the seeds decided so far, those in flight, and the progress file."""

    ruleset: Ruleset
    count: int
    budget_seconds: float
    workers: int
    seeds: Seeds
    progress: Path
    bar: ProgressBar
    started: float
    solved: int = 0
    pending: dict[Future[dict[str, Any]], int] = field(default_factory=dict)

    def run(self) -> int | tuple[dict[str, Any], str, list[str]]:
        """Solve seeds until the pool is complete: (the document, its text, the final check's
        problems), or the exit status when interrupted or a worker died."""
        executor, stop = solver_processes(self.workers)
        # Ctrl-C sets a flag that the loop reads between waits, instead of raising wherever the parent
        # happens to be: a KeyboardInterrupt raised inside concurrent.futures' own bookkeeping (wait()
        # takes every pending future's lock, one after the other) can leave a lock held, and then the
        # executor's shutdown waits for ever (seen: a Ctrl-C that never ended, now and then).
        interrupted = _CtrlC()
        previous_handler = signal.signal(signal.SIGINT, interrupted.handle)
        try:
            with open(self.progress, "a", encoding="utf-8") as log:
                if self.progress.stat().st_size and not self.progress.read_bytes().endswith(b"\n"):
                    log.write("\n")  # a line cut short by a kill stays on its own (and is skipped)
                try:
                    self.solve_seeds(executor, log, interrupted)
                    return self.final_check(executor, stop, interrupted)
                except KeyboardInterrupt:
                    return self.keep_on_ctrl_c(executor, stop, log)
                except BrokenProcessPool:
                    self.bar.finish()
                    print(
                        f"canfield pool build: a worker process died (out of memory?); {len(self.seeds.verdict)} "
                        f"seed results are kept in {self.progress}; run the same command again to resume.",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
        finally:
            stop.set()
            executor.shutdown(wait=True, cancel_futures=True)
            signal.signal(signal.SIGINT, previous_handler)

    def accept(self, record: dict[str, Any], log: TextIO) -> None:
        stopped = record.pop("_stopped")
        error = record.pop("_error")
        if stopped and record["result"] == "unknown":
            return  # cut short by us, not by its budget: it says nothing
        log.write(json.dumps(record) + "\n")
        log.flush()
        self.solved += 1
        if error is not None:
            loud(f"seed {record['seed']}: {error}; counted as undecided")
        self.seeds.add(record, error)

    def solve_seeds(self, executor: ProcessPoolExecutor, log: TextIO, interrupted: _CtrlC) -> None:
        """Hand out seeds in increasing order (at most ``2 * workers`` in flight) until the pool is complete."""
        seeds, pending = self.seeds, self.pending
        next_seed = 1
        while not seeds.complete:
            interrupted.check()
            while len(pending) < 2 * self.workers:
                while next_seed in seeds.verdict:
                    next_seed += 1
                if seeds.wins_below(next_seed) >= self.count:
                    break  # the N-th win is a seed already finished or running
                ruleset = self.ruleset
                future = executor.submit(solve_seed, ruleset.id, ruleset.version, next_seed, self.budget_seconds)
                pending[future] = next_seed
                next_seed += 1
            if not pending:
                raise RuntimeError("no seed in flight and the pool is not complete")  # cannot happen
            done, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            interrupted.check()
            for future in done:
                del pending[future]
                self.accept(future.result(), log)
            self.bar.update(seeds, self.solved, time.perf_counter() - self.started)
        self.bar.update(seeds, self.solved, time.perf_counter() - self.started, force=True)
        self.bar.finish()

    def final_check(
        self, executor: ProcessPoolExecutor, stop: Any, interrupted: _CtrlC
    ) -> tuple[dict[str, Any], str, list[str]]:
        """The last word before writing: the exact document, parsed back, every line replayed."""
        document = pool_document(self.ruleset, self.budget_seconds, self.seeds)
        text = pool_json(document)

        def parallel_check(pool: DealPool, items: Iterable[PoolDeal]) -> Iterable[str | None]:
            items = list(items)
            return executor.map(
                check_line,
                [pool.ruleset] * len(items),
                [item.seed for item in items],
                [item.length for item in items],
                [item.line for item in items],
                chunksize=16,
            )

        for future in self.pending:
            future.cancel()
        stop.set()  # the seeds still running are not needed
        problems = verify_document(json.loads(text), parallel_check)
        interrupted.check()
        return document, text, problems

    def keep_on_ctrl_c(self, executor: ProcessPoolExecutor, stop: Any, log: TextIO) -> int:
        """Ctrl-C: stop the workers, keep what finished meanwhile, say how to resume."""
        stop.set()
        for future in self.pending:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
        for future in self.pending:
            if future.done() and not future.cancelled() and future.exception() is None:
                self.accept(future.result(), log)  # finished while we stopped: still worth keeping
        self.bar.finish()
        print(
            f"\ncanfield pool build: interrupted; {len(self.seeds.verdict)} seed results are kept in {self.progress}.\n"
            f"Run the same command again (same --ruleset, --budget-seconds and --output) to resume.",
            file=sys.stderr,
            flush=True,
        )
        return EXIT_INTERRUPTED


def _report_built(run: _Build, document: dict[str, Any], reused: int, wall: float, output: Path) -> None:
    """The summary of a pool written: counts, speed, budget and line lengths."""
    lengths = [deal["length"] for deal in document["deals"]]
    speed = run.solved / wall if wall > 0 else 0.0
    print(
        f"canfield pool build: {run.ruleset.key}: {len(document['deals'])} deals "
        f"from seeds 1..{document['seedsTried']} "
        f"(won {document['won']}, lost {document['lost']}, undecided {document['undecided']}, "
        f"found {100 * document['won'] / max(1, document['seedsTried']):.1f}%)\n"
        f"  reused {reused} seed results from the progress file, solved {run.solved} seeds with {run.workers} workers "
        f"in wallSeconds {wall:.1f} ({speed:.2f} solves/s)\n"
        f"  budget {run.budget_seconds:g}s per seed, median {document['medianSeconds']}s per seed tried, "
        f"median line {statistics.median(lengths):g} moves\n"
        f"  verified every line by replay; wrote {output}",
        flush=True,
    )
    if run.seeds.failures:
        loud(f"{len(run.seeds.failures)} won lines did not replay and were counted as undecided (seeds "
              f"{', '.join(map(str, sorted(run.seeds.failures)))})")
