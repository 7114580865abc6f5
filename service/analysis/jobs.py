"""One analysis job: the game's positions from its events, the solver asked position after position
(``domain.analysis.Analysis`` says which) in a worker process, each answer kept as it comes (a job
taken up again resumes from them), then the verdicts and the turning point.

Before the solver is asked about a table, the verdict cache (``service.analysis.verdicts``) is: a
table an earlier job searched is not searched again. The job's solver time is bounded
(``ANALYSIS_JOB_SECONDS``): each search is given the position's time or what is left of the job's,
whichever is less, and once nothing is left the positions still unsettled are ``unknown``
(``Analysis.give_up``) and the job ends, its result saying so (``budgetSpent``).

Each kept answer is ``{"index", "result", "line"}`` as the first release wrote them, with where it
came from (``source``: ``solver``, ``cache`` or ``budget``) and the solver time it took (``ms``), so
a job taken up again knows how much of its budget is spent.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from domain import command_to_api
from domain.analysis import (
    FROM_BUDGET,
    FROM_CACHE,
    FROM_SOLVER,
    UNKNOWN,
    WON,
    Analysis,
    Answer,
    position_key,
    positions,
)
from domain.codec import event_from_data, snapshot_to_state, state_to_snapshot
from domain.solver import Budget, solve
from domain.state import GameState
from domain.verify import line_wins

from ..deals.deal_pools import decode_line, encode_line
from ..store.game_records import StoredEvent

JSON = dict[str, Any]
Solve = Callable[[dict[str, Any], float], Awaitable[tuple[str, str | None]]]
"""Solve a position (a snapshot) within so many seconds: its result and, when won, its line."""
Keep = Callable[[list[JSON], int], Awaitable[bool]]
"""Keep answers and the count of positions settled; False when the job is no longer ours."""


class Cache(Protocol):
    """Verdicts kept across jobs (``service.analysis.verdicts.VerdictCache``)."""

    async def find(self, key: str, seconds: float) -> tuple[str, str | None] | None: ...

    async def keep(self, key: str, result: str, line: str | None, seconds: float) -> None: ...

    async def drop(self, key: str) -> None: ...


@dataclass(frozen=True, slots=True)
class SolverTime:
    """A job's solver time: at most ``per_position`` seconds a search, ``budget`` seconds in all,
    of which ``spent`` went on the answers already kept."""

    per_position: float
    budget: float = math.inf
    spent: float = 0.0


def solve_position(snapshot: dict[str, Any], seconds: float) -> tuple[str, str | None]:
    """The solver's verdict on one position (in a worker process: CPU-bound) and, when won, its
    line in the pools' encoding. ``lost`` only when proven; out of time is ``unknown``."""
    deadline = time.perf_counter() + seconds
    result = solve(snapshot_to_state(snapshot), Budget(out_of_time=lambda: time.perf_counter() > deadline))
    return result.result, encode_line(result.moves) if result.result == "won" else None


def analysis_of(rows: list[StoredEvent], answers: list[JSON]) -> Analysis:
    """The analysis of a game's stored events with the answers kept so far."""
    analysis = Analysis(positions([event_from_data(row.type, row.data) for row in rows]))
    for answer in answers:
        analysis.record(answer["index"], answer_of(answer["result"], answer.get("line")),
                        answer.get("source", FROM_SOLVER))
    return analysis


def spent_of(answers: list[JSON]) -> float:
    """The solver seconds the kept answers took (answers kept by the first release say none)."""
    return sum(int(answer.get("ms", 0)) for answer in answers) / 1000


def answer_of(result: str, line: str | None) -> Answer:
    return Answer(result, tuple(decode_line(line)) if line else ())


async def run(
    analysis: Analysis, solve_one: Solve, allowed: SolverTime, keep: Keep, cache: Cache | None = None
) -> bool:
    """Settle each position ``analysis`` names: from the cache, else by the solver (``per_position``
    seconds each, at most what is left of the budget), keeping every answer; once the budget is
    spent, the rest are ``unknown``. False when the job stopped being ours on the way."""
    seconds, budget, spent = allowed.per_position, allowed.budget, allowed.spent
    while (index := analysis.next_position()) is not None:
        left = budget - spent
        if left <= 0:
            given = analysis.give_up()
            return await keep([{"index": i, "result": UNKNOWN, "line": None, "source": FROM_BUDGET, "ms": 0}
                               for i in given], analysis.settled)
        state = analysis.positions[index].state
        given_seconds = min(seconds, left)
        key = position_key(state)
        found = await cache.find(key, given_seconds) if cache is not None else None
        if cache is not None and found is not None and found[0] == WON and not _replays(state, found[1]):
            await cache.drop(key)  # a kept line that does not win (the rules changed?): search again
            found = None
        if found is not None:
            (result, line), source, ms = found, FROM_CACHE, 0
        else:
            started = time.perf_counter()
            result, line = await solve_one(state_to_snapshot(state), given_seconds)
            ms = max(1, round((time.perf_counter() - started) * 1000))
            spent += ms / 1000
            source = FROM_SOLVER
            if cache is not None:
                await cache.keep(key, result, line, given_seconds)
        analysis.record(index, answer_of(result, line), source)
        if not await keep([{"index": index, "result": result, "line": line, "source": source, "ms": ms}],
                          analysis.settled):
            return False
    return True


def _replays(state: GameState, line: str | None) -> bool:
    """Whether a kept line wins from ``state`` (replayed through the rules)."""
    if line is None:
        return False
    try:
        moves = decode_line(line)
    except (ValueError, IndexError):  # not a line in the pools' encoding
        return False
    return line_wins(state, moves).won


def report(analysis: Analysis) -> JSON:
    """A finished analysis as the API shows it (positions and turning point), and how many positions
    the solver was asked about (``solved``; ``cached``: settled by an earlier job's search; the rest
    by reuse along the game), and whether the job's budget ran out (``budgetSpent``: then the
    positions not reached are ``unknown``)."""
    lengths = analysis.moves_to_win()
    shown = [
        {"version": position.version, "verdict": verdict.result, "movesToWin": lengths[index]}
        for index, (position, verdict) in enumerate(zip(analysis.positions, analysis.verdicts, strict=True))
        if verdict is not None
    ]
    point = analysis.turning_point()
    turning = None if point is None else {
        "before": point.before,
        "after": point.after,
        "move": command_to_api(point.move),
        "winningLineBefore": [command_to_api(move) for move in point.line],
    }
    return {"positions": shown, "turningPoint": turning, "solved": analysis.solved, "cached": analysis.cached,
            "budgetSpent": analysis.given_up > 0}
