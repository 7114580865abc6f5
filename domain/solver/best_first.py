"""Best-first win finding, the ``NARROW_BEST`` and ``BEST`` stages of ``stages.solve`` (narrow-reach
too, and draw-one's sound-best: the ``SOUND`` stage's moves, whose search of every position is a proof).

Positions are expanded best first by an evaluation: cards home, cards out of the reserve and out
of the talon, and how deep the next card of each foundation lies under other reserve or tableau
cards (among equals, the latest found first, so the search dives). It only looks for wins: it
uses the transposition table and move generator of a ``Search`` (whose stage says which
shortcuts are taken) and stops with ``OutOfBudget`` at that search's position limit. A line it
finds is replayed through the rules engine like any other, so a win is always real; finding
nothing proves nothing, except where the search has the sound stage's moves and expanded every
position it entered (``solver.take_turns`` then calls the deal lost: the order of expansion does
not matter for that proof).

A search runs in steps (``BestFirst.step``), so that several searches can take turns
(``solver.take_turns``): which search wins a deal first differs from deal to deal, and taking turns
costs the winner at most a few times its own positions instead of every other search's limit.
"""

from __future__ import annotations

import heapq

from .macros import Macro, Position
from .search import Search

# Weights of the evaluation: a card home, a card out of the reserve, out of the talon, and one
# card fewer over the next card of a foundation. Tuned on open-runs deals the depth-first stages
# did not win within 2 s (docs/solver.md).
HOME, RESERVE, TALON, DEPTH = 2, 3, 1, 2

# The bonus of the ``reach`` evaluation for each next foundation card that one move can play
# (the reserve top, a column's end card, a waste card that draws and recycles reach): it finds
# some wins the plain evaluation misses (open-runs seed 253), so one search of each kind takes turns.
REACH = 2

# A node of the search tree: (parent node or None, the macro moves from the parent, automatic ones included)
_Node = tuple["_Node | None", tuple["Macro", ...]]


def _next_cards(position: Position, base: int, reserve_index: dict[int, int]) -> tuple[int, int, list[int]]:
    """Where the next card of each foundation lies: (how many cards lie on them in the reserve and
    the columns, how many of them are a reserve top or a column's end, those in the talon)."""
    reserve, found, columns, _talon, _pointer, _progress = position
    depth = 0
    playable = 0
    waiting: list[int] = []
    for suit in range(4):
        count = found[suit]
        if count == 13:
            continue
        card = suit * 13 + (base + count) % 13
        index = reserve_index.get(card, 99)
        if index < reserve:
            depth += reserve - 1 - index
            playable += index == reserve - 1
            continue
        for column in columns:
            if card in column:
                lying = len(column) - 1 - column.index(card)
                depth += lying
                playable += lying == 0
                break
        else:
            waiting.append(card)
    return depth, playable, waiting


def _value(position: Position, base: int, reserve_index: dict[int, int]) -> int:
    depth, _playable, _waiting = _next_cards(position, base, reserve_index)
    return _score(position, depth)


def _score(position: Position, depth: int) -> int:
    reserve, found, _columns, talon, _pointer, _progress = position
    return HOME * (found[0] + found[1] + found[2] + found[3]) - RESERVE * reserve - TALON * len(talon) - DEPTH * depth


def _reach_value(position: Position, search: Search, reserve_index: dict[int, int]) -> int:
    """``_value`` plus ``REACH`` for each next foundation card that one move can play."""
    _reserve, _found, _columns, talon, pointer, progress = position
    depth, playable, waiting = _next_cards(position, search.base, reserve_index)
    if waiting:
        tops = {talon[q - 1] for q in search.reachable(len(talon), pointer, progress)}
        playable += sum(card in tops for card in waiting)
    return _score(position, depth) + REACH * playable


class BestFirst:
    """One best-first search, run a few expansions at a time (``step``).

    ``line`` is the winning macro line once found; ``done`` says the search has ended (won, or
    every position of its kind expanded). ``step`` lets the search's ``OutOfBudget`` through.
    """

    def __init__(self, search: Search, start: Position, reach: bool = False) -> None:
        self.search = search
        self.reach = reach
        self.line: list[Macro] | None = None
        self.done = False
        self.base = search.base
        self.reserve_index = {card: index for index, card in enumerate(search.reserve)}
        self.counter = 0
        self.heap: list[tuple[int, int, Position, _Node]] = []
        path: list[Macro] = []
        won, position, _added = search.enter(start, path)
        if won:
            self.line, self.done = path, True
        elif position is None:
            self.done = True
        else:
            self.heap.append((-self.value(position), 0, position, (None, tuple(path))))

    def value(self, position: Position) -> int:
        if self.reach:
            return _reach_value(position, self.search, self.reserve_index)
        return _value(position, self.base, self.reserve_index)

    def step(self, expansions: int) -> bool:
        """Expand up to ``expansions`` positions; True once the search has ended."""
        if self.done:
            return True
        search, heap, value_of = self.search, self.heap, self.value
        for _ in range(expansions):
            if not heap:
                self.done = True
                return True
            _, _, position, node = heapq.heappop(heap)
            for move in search.moves(position):
                segment = [move]
                won, child, _added = search.enter(search.play(position, move), segment)
                if won:
                    self.line, self.done = _line(node) + segment, True
                    return True
                if child is None:
                    continue
                self.counter -= 1
                heapq.heappush(heap, (-value_of(child), self.counter, child, (node, tuple(segment))))
        return False


def best_first(search: Search, start: Position) -> list[Macro] | None:
    """A winning macro line, or None when every position of the search's kind was expanded."""
    runner = BestFirst(search, start)
    while not runner.step(1 << 16):
        pass
    return runner.line


def _line(node: _Node | None) -> list[Macro]:
    parts: list[tuple[Macro, ...]] = []
    while node is not None:
        parent, segment = node
        parts.append(segment)
        node = parent
    return [move for segment in reversed(parts) for move in segment]
