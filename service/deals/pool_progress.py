"""What a pool build knows so far, and where it keeps and shows it.

``Seeds`` holds a verdict per finished seed and knows when the first N wins (in seed order) are
known; ``pool_document`` is the pool those make. Every finished seed is one JSON line of
``<output>.progress.jsonl`` (``read_progress`` takes back the reusable ones), and ``ProgressBar``
is the one line on stderr that shows how far the build is.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from domain.rulesets import Ruleset
from service.deals.pool_solving import SOLVER_NAME


def progress_path(output: Path) -> Path:
    return output.with_name(output.name + ".progress.jsonl")


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
