"""Shortening a won line: cutting out the detours a depth-first line takes (``shortest``)."""

from __future__ import annotations

from collections.abc import Callable

from .macros import Macro, Position
from .search import Search


def shortened(
    search: Search, start: Position, line: list[Macro], out_of_time: Callable[[], bool] = lambda: False
) -> list[Macro]:
    """The line with detours cut out: wherever one move reaches a position the line only gets
    to later, jump there (a depth-first line can wander, most of all with foundation returns).
    Out of time (asked every 64 moves), the rest of the line is kept as it is: still a win."""
    positions = [start]
    for move in line:
        positions.append(search.play(positions[-1], move))
    # the last time the line is at each position (exactly: moves name columns)
    later: dict[Position, int] = {position: index for index, position in enumerate(positions)}
    shorter: list[Macro] = []
    index = 0
    while index < len(line):
        if len(shorter) % 64 == 63 and out_of_time():
            return shorter + line[index:]  # ``shorter`` reaches positions[index]
        best, best_move = index + 1, line[index]
        for move in search.moves(positions[index]):
            target = later.get(search.play(positions[index], move), -1)
            if target > best:
                best, best_move = target, move
        shorter.append(best_move)
        index = best
    return shorter


def shortest(
    search: Search, start: Position, line: list[Macro], out_of_time: Callable[[], bool] = lambda: False
) -> list[Macro]:
    """``shortened`` again and again while it still cuts (each pass finds new shortcuts), while
    ``out_of_time`` says there is time (a long line's passes can take seconds)."""
    for _ in range(8):
        if out_of_time():
            break
        shorter = shortened(search, start, line, out_of_time)
        if len(shorter) >= len(line):
            break
        line = shorter
    return line
