"""Best-first win finding, the ``BEST`` stage of ``solver.solve``.

Positions are expanded best first by an evaluation: cards home, cards out of the reserve and out
of the talon, and how deep the next card of each foundation lies under other reserve or tableau
cards (among equals, the latest found first, so the search dives). It only looks for wins: it
uses the transposition table and move generator of a ``_Search`` (whose stage says which
shortcuts are taken) and stops with ``_OutOfBudget`` at that search's position limit. A line it
finds is replayed through the rules engine like any other, so a win is always real; finding
nothing proves nothing.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .solver import Macro, Position, _Search

# Weights of the evaluation: a card home, a card out of the reserve, out of the talon, and one
# card fewer over the next card of a foundation. Tuned on open-runs deals the depth-first stages
# did not win within 2 s (see the README).
HOME, RESERVE, TALON, DEPTH = 2, 3, 1, 2

# A node of the search tree: (parent node or None, the macro moves from the parent, automatic ones included)
_Node = tuple["_Node | None", tuple["Macro", ...]]


def _value(position: Position, base: int, reserve_index: dict[int, int]) -> int:
    reserve, found, columns, talon, _pointer, _progress = position
    depth = 0
    for suit in range(4):
        count = found[suit]
        if count == 13:
            continue
        card = suit * 13 + (base + count) % 13
        index = reserve_index.get(card, 99)
        if index < reserve:
            depth += reserve - 1 - index
            continue
        for column in columns:
            if card in column:
                depth += len(column) - 1 - column.index(card)
                break
    return HOME * (found[0] + found[1] + found[2] + found[3]) - RESERVE * reserve - TALON * len(talon) - DEPTH * depth


def best_first(search: _Search, start: Position) -> list[Macro] | None:
    """A winning macro line, or None when every position of the search's kind was expanded."""
    path: list[Macro] = []
    won, position, _added = search.enter(start, path)
    if won:
        return path
    if position is None:
        return None
    base = search.base
    reserve_index = {card: index for index, card in enumerate(search.reserve)}
    counter = 0
    heap: list[tuple[int, int, Position, _Node]] = [
        (-_value(position, base, reserve_index), 0, position, (None, tuple(path)))
    ]
    while heap:
        _, _, position, node = heapq.heappop(heap)
        for move in search.moves(position):
            segment = [move]
            won, child, _added = search.enter(search.play(position, move), segment)
            if won:
                return _line(node) + segment
            if child is None:
                continue
            counter -= 1
            heapq.heappush(heap, (-_value(child, base, reserve_index), counter, child, (node, tuple(segment))))
    return None


def _line(node: _Node | None) -> list[Macro]:
    parts: list[tuple[Macro, ...]] = []
    while node is not None:
        parent, segment = node
        parts.append(segment)
        node = parent
    return [move for segment in reversed(parts) for move in segment]
