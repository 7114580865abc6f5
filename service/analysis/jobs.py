"""One analysis job: the game's positions from its events, the solver asked position after position
(``domain.analysis.Analysis`` says which) in a worker process, each answer kept as it comes (a job
taken up again resumes from them), then the verdicts and the turning point."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from domain import command_to_api
from domain.analysis import Analysis, Answer, positions
from domain.codec import event_from_data, snapshot_to_state, state_to_snapshot
from domain.solver import Budget, solve

from ..deals.deal_pools import decode_line, encode_line
from ..store.event_store import StoredEvent

JSON = dict[str, Any]
Solve = Callable[[dict[str, Any], float], Awaitable[tuple[str, str | None]]]
"""Solve a position (a snapshot) within so many seconds: its result and, when won, its line."""
Keep = Callable[[JSON, int], Awaitable[bool]]
"""Keep one answer and the count of positions settled; False when the job is no longer ours."""


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
        analysis.record(answer["index"], answer_of(answer["result"], answer.get("line")))
    return analysis


def answer_of(result: str, line: str | None) -> Answer:
    return Answer(result, tuple(decode_line(line)) if line else ())


async def run(analysis: Analysis, solve_one: Solve, seconds: float, keep: Keep) -> bool:
    """Ask the solver about each position ``analysis`` names, keeping every answer; False when the
    job stopped being ours on the way."""
    while (index := analysis.next_position()) is not None:
        snapshot = state_to_snapshot(analysis.positions[index].state)
        result, line = await solve_one(snapshot, seconds)
        analysis.record(index, answer_of(result, line))
        if not await keep({"index": index, "result": result, "line": line}, analysis.settled):
            return False
    return True


def report(analysis: Analysis) -> JSON:
    """A finished analysis as the API shows it (positions and turning point), and how many positions
    the solver was asked about (``solved``; the rest were settled by reuse)."""
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
    return {"positions": shown, "turningPoint": turning, "solved": analysis.solved}
