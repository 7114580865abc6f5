"""`canfield pool build` and `canfield pool verify`: make and check the verified deal pools.

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
deals (with enough deals there is nothing to do; with fewer it says why and stops). ``recheck``
re-decides, with the current solver, every seed of
1..seedsTried that is not a pool deal, and rewrites only the verdicts: the deals and their
order stay byte for byte. Seeds it wins stay out of the pool (``wonOutsidePool``, with their
lines), so that no number moves.

Resume: every finished seed is appended (and flushed) to ``<output>.progress.jsonl`` as one
JSON line; a new run reuses the lines with the same ruleset and budget. Ctrl-C stops cleanly
(exit 130) and keeps that file. At the end the pool file is written atomically and the
progress file deleted. The pool file holds no timestamps.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, TextIO

from domain.errors import DomainError
from domain.rulesets import ALL_RULESETS, Ruleset, get_ruleset
from domain.solver import SOLVER_VERSION
from service.deals.deal_pools import (
    DEAL_POOL_DIR,
    DealPool,
    PoolDeal,
    Verdicts,
    deal_pool_path,
    encode_line,
    parse_pool,
    start_state,
    verify_deal,
)

SOLVER_NAME = f"domain.solver@{SOLVER_VERSION}"
DEFAULT_BUDGET_SECONDS = 10.0
EXIT_INTERRUPTED = 130


class BuildError(Exception):
    """A failure to report in one line (bad arguments, an unreadable file...)."""


def progress_path(output: Path) -> Path:
    return output.with_name(output.name + ".progress.jsonl")


# --- the worker side --------------------------------------------------------------------

_stop: Any = None  # a multiprocessing Event shared with the parent: set = give up the current solve


def _init_worker(stop: Any) -> None:
    global _stop  # noqa: PLW0603 (a pool initializer hands the worker its state through a module global)
    _stop = stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


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


def _empty_pool(ruleset: Ruleset) -> DealPool:
    return DealPool(ruleset, 0.0, 0, 0, 0, 0, ())


def check_line(ruleset: Ruleset, seed: int, length: int, line: str) -> str | None:
    """None when the encoded line replays to a win from the seed's deal, else why not."""
    return verify_deal(_empty_pool(ruleset), PoolDeal(0, seed, length, line))


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


@dataclass
class Seeds:
    """What is known about seeds 1, 2, ...: a verdict per finished seed."""

    count: int  # N, the pool size wanted
    results: dict[int, dict[str, Any]] = field(default_factory=dict)  # seed -> progress record
    verdict: dict[int, str] = field(default_factory=dict)  # seed -> "won", "lost" or "undecided"
    failures: dict[int, str] = field(default_factory=dict)  # seed -> why its won line does not replay
    wins: int = 0  # among all finished seeds
    prefix: int = 0  # seeds 1 .. prefix are all finished
    prefix_wins: int = 0

    def add(self, record: dict[str, Any], error: str | None) -> None:
        seed = int(record["seed"])
        if seed in self.verdict:
            return
        result = record["result"]
        if result == "won" and error is not None:
            self.failures[seed] = error
            verdict = "undecided"
        elif result in ("won", "lost"):
            verdict = result
        else:
            verdict = "undecided"
        self.results[seed] = record
        self.verdict[seed] = verdict
        if verdict == "won":
            self.wins += 1
        while self.prefix_wins < self.count and self.prefix + 1 in self.verdict:
            self.prefix += 1
            if self.verdict[self.prefix] == "won":
                self.prefix_wins += 1

    def wins_below(self, limit: int) -> int:
        return sum(1 for seed, verdict in self.verdict.items() if seed < limit and verdict == "won")

    @property
    def complete(self) -> bool:
        return self.prefix_wins >= self.count

    def pool_seeds(self) -> list[int]:
        return [seed for seed in range(1, self.prefix + 1) if self.verdict[seed] == "won"]


def read_progress(path: Path, ruleset: Ruleset, budget_seconds: float) -> tuple[list[dict[str, Any]], int]:
    """(the reusable records of a progress file, how many lines were skipped)."""
    if not path.exists():
        return [], 0
    records: list[dict[str, Any]] = []
    skipped = 0
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        try:
            record = json.loads(text)
            usable = (
                record.get("solver") == SOLVER_NAME  # an older solver's verdicts are not reused
                and record["ruleset"] == ruleset.id
                and int(record["rulesetVersion"]) == ruleset.version
                and float(record["budgetSeconds"]) == budget_seconds
                and isinstance(record["seed"], int)
                and record["seed"] >= 1
                and record["result"] in ("won", "lost", "unknown")
                and isinstance(record["line"], str)
                and isinstance(record["length"], int)
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            usable = False  # a line cut short by a kill, or hand-made nonsense
        if usable:
            records.append(record)
        else:
            skipped += 1
    return records, skipped


def pool_document(ruleset: Ruleset, budget_seconds: float, seeds: Seeds) -> dict[str, Any]:
    tried = range(1, seeds.prefix + 1)
    verdicts = [seeds.verdict[seed] for seed in tried]
    seconds = [float(seeds.results[seed]["seconds"]) for seed in tried]
    listed = {
        "solver": SOLVER_NAME,
        "budgetSeconds": budget_seconds,
        "wonOutsidePool": [],
        "lost": [seed for seed in tried if seeds.verdict[seed] == "lost"],
        "undecided": [seed for seed in tried if seeds.verdict[seed] == "undecided"],
    }
    return {
        "ruleset": ruleset.id,
        "rulesetVersion": ruleset.version,
        "solver": SOLVER_NAME,
        "budgetSeconds": budget_seconds,
        "seedsTried": seeds.prefix,
        "won": verdicts.count("won"),
        "lost": verdicts.count("lost"),
        "undecided": verdicts.count("undecided"),
        "medianSeconds": round(statistics.median(seconds), 3) if seconds else 0.0,
        "verdicts": listed,
        "deals": [
            {"seed": seed, "length": seeds.results[seed]["length"], "line": seeds.results[seed]["line"]}
            for seed in seeds.pool_seeds()
        ],
    }


def pool_json(document: dict[str, Any]) -> str:
    """Pretty but compact: one header key per line, one deal per line (small diffs), final newline."""
    header = [f"  {json.dumps(key)}: {_compact(value)}" for key, value in document.items() if key != "deals"]
    deals = [f"    {json.dumps(deal, ensure_ascii=False)}" for deal in document["deals"]]
    body = ",\n".join(header)
    if deals:
        return "{\n" + body + ',\n  "deals": [\n' + ",\n".join(deals) + "\n  ]\n}\n"
    return "{\n" + body + ',\n  "deals": []\n}\n'


def _compact(value: Any) -> str:
    """A header value; the verdict lists one entry kind per line."""
    if not isinstance(value, dict):
        return json.dumps(value)
    items = [f"    {json.dumps(key)}: {json.dumps(item, ensure_ascii=False)}" for key, item in value.items()]
    return "{\n" + ",\n".join(items) + "\n  }"


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)


DealCheck = Callable[[DealPool, Iterable[PoolDeal]], Iterable[str | None]]


def verify_document(document: dict[str, Any], deal_check: DealCheck | None = None) -> list[str]:
    """Every problem of a pool document: header sums, seed order, and each line replayed to a win."""
    try:
        pool = parse_pool(document)
    except Exception as error:  # a missing key, a bad type, an unknown ruleset...
        return [f"unreadable pool: {type(error).__name__}: {error}"]
    problems: list[str] = []
    if pool.won + pool.lost + pool.undecided != pool.seeds_tried:
        problems.append(
            f"won {pool.won} + lost {pool.lost} + undecided {pool.undecided} != seedsTried {pool.seeds_tried}"
        )
    outside = pool.verdicts.won_outside_pool if pool.verdicts else ()
    if pool.size + len(outside) != pool.won:
        problems.append(f"{pool.size} deals and {len(outside)} won outside the pool but won {pool.won}")
    if pool.verdicts is not None:
        problems.extend(_verdict_problems(pool, pool.verdicts))
    seeds = [item.seed for item in pool.deals]
    if any(a >= b for a, b in pairwise(seeds)) or (seeds and seeds[0] < 1):
        problems.append("the deal seeds are not strictly increasing from 1")
    if seeds and seeds[-1] != pool.seeds_tried:
        problems.append(f"the last deal's seed {seeds[-1]} is not seedsTried {pool.seeds_tried}")
    lines = pool.deals + outside
    if deal_check is None:
        errors: Iterable[str | None] = (verify_deal(pool, item) for item in lines)
    else:
        errors = deal_check(pool, lines)
    problems.extend(error for error in errors if error is not None)
    return problems


def _verdict_problems(pool: DealPool, verdicts: Verdicts) -> list[str]:
    """The listed verdicts cover seeds 1..seedsTried once each and agree with the counts."""
    problems = []
    if len(verdicts.lost) != pool.lost:
        problems.append(f"lost {pool.lost} but {len(verdicts.lost)} lost seeds listed")
    if len(verdicts.undecided) != pool.undecided:
        problems.append(f"undecided {pool.undecided} but {len(verdicts.undecided)} undecided seeds listed")
    listed = [item.seed for item in pool.deals + verdicts.won_outside_pool] + [*verdicts.lost, *verdicts.undecided]
    if sorted(listed) != list(range(1, pool.seeds_tried + 1)):
        problems.append(f"the deals and listed verdicts do not name each of seeds 1..{pool.seeds_tried} once")
    return problems


# --- progress display -------------------------------------------------------------------


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class ProgressBar:
    """One line on stderr, rewritten with \\r at most 4 times a second; plain lines every 5 s off a TTY."""

    def __init__(self, stream: TextIO, label: str, count: int) -> None:
        self.stream = stream
        self.label = label
        self.count = count
        self.tty = stream.isatty()
        self.every = 0.25 if self.tty else 5.0
        self.last = 0.0
        self.width = 0

    def line(self, seeds: Seeds, solved: int, elapsed: float) -> str:
        done = len(seeds.verdict)
        wins = min(seeds.wins, self.count)
        rate = seeds.wins / done if done else 0.0
        speed = solved / elapsed if elapsed > 0 else 0.0
        if seeds.complete:
            eta = "0s"
        elif speed > 0 and rate > 0:
            eta = _duration((self.count - seeds.wins) / rate / speed)
        else:
            eta = "?"
        filled = int(20 * wins / self.count) if self.count else 20
        bar = "#" * filled + "-" * (20 - filled)
        return (
            f"{self.label} [{bar}] {wins}/{self.count} wins | {done} deals done | found {100 * rate:.1f}% | "
            f"{speed:.1f} solves/s | ETA {eta}"
        )

    def update(self, seeds: Seeds, solved: int, elapsed: float, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        text = self.line(seeds, solved, elapsed)
        if self.tty:
            pad = max(0, self.width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0


# --- build ------------------------------------------------------------------------------


def _loud(message: str) -> None:
    print(f"\ncanfield pool build: VERIFICATION FAILED: {message}", file=sys.stderr, flush=True)


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


def _ruleset(ruleset_id: str) -> Ruleset:
    try:
        return get_ruleset(ruleset_id)
    except DomainError as exc:
        raise BuildError(exc.reason) from None


def _check_budget(budget_seconds: float) -> None:
    if not budget_seconds > 0:
        raise BuildError("--budget-seconds must be more than 0")


def _worker_count(workers: int | None) -> int:
    return workers or os.cpu_count() or 1


def _executor(workers: int) -> tuple[ProcessPoolExecutor, Any]:
    """A process pool of solvers, and the event that tells their solves to give up."""
    context = multiprocessing.get_context()
    stop = context.Event()
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(stop,))
    return executor, stop


def _line_problem(ruleset: Ruleset, record: dict[str, Any]) -> str | None:
    """None when a won record's line replays to a win from its seed's deal, else why not."""
    return check_line(ruleset, int(record["seed"]), int(record["length"]), record["line"])


def build(
    ruleset_id: str,
    count: int,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    workers: int | None = None,
    output: Path | None = None,
) -> int:
    """Build the pool; the exit status (0, 1 when the final check fails, 130 on Ctrl-C)."""
    ruleset = _ruleset(ruleset_id)
    if count < 1:
        raise BuildError("--count must be at least 1")
    _check_budget(budget_seconds)
    workers = _worker_count(workers)
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
            _loud(problem)
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
            problem = _line_problem(ruleset, record)
            if problem is not None:
                _loud(f"{problem} (a reused progress line); counted as undecided")
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
        executor, stop = _executor(self.workers)
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
            _loud(f"seed {record['seed']}: {error}; counted as undecided")
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
        _loud(f"{len(run.seeds.failures)} won lines did not replay and were counted as undecided (seeds "
              f"{', '.join(map(str, sorted(run.seeds.failures)))})")


# --- verify -----------------------------------------------------------------------------


def pool_files(
    ruleset_id: str | None, file: Path | None = None, directory: Path = DEAL_POOL_DIR
) -> list[tuple[str, Path]]:
    """(label, path) of the pools to verify."""
    if file is not None:
        return [(str(file), file)]
    if ruleset_id is not None:
        ruleset = _ruleset(ruleset_id)
        return [(ruleset.id, deal_pool_path(ruleset.id, directory))]
    ids = sorted({ruleset.id for ruleset in ALL_RULESETS})
    return [(rid, deal_pool_path(rid, directory)) for rid in ids if deal_pool_path(rid, directory).exists()]


def verify(ruleset_id: str | None = None, file: Path | None = None) -> int:
    """Replay every stored line; 0 when all pools check out, 1 on any failure."""
    targets = pool_files(ruleset_id, file)
    if not targets:
        print(f"canfield pool verify: no pool files in {DEAL_POOL_DIR}", file=sys.stderr)
        return 0
    failed = False
    for label, path in targets:
        if not path.exists():
            print(f"{label}: FAILED: no pool file {path}")
            failed = True
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            print(f"{label}: FAILED: cannot read {path}: {error}")
            failed = True
            continue
        problems = verify_document(document)
        if ruleset_id is not None and file is None and document.get("ruleset") != ruleset_id:
            problems.insert(0, f"the file is for ruleset {document.get('ruleset')!r}")
        if problems:
            failed = True
            for problem in problems:
                print(f"{label}: FAILED: {problem}")
        else:
            print(f"{label}: ok: {len(document['deals'])} deals")
    return 1 if failed else 0


# --- recheck ----------------------------------------------------------------------------


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
    ruleset = _ruleset(ruleset_id)
    _check_budget(budget_seconds)
    workers = _worker_count(workers)
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
            _loud(problem)
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
    executor, stop = _executor(workers)
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
            problem = _line_problem(pool.ruleset, record)
            if problem is None:
                won.append({"seed": seed, "length": record["length"], "line": record["line"]})
                continue
            _loud(f"{problem}; counted as undecided")
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
