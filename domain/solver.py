"""A solver for all three rulesets: depth-first search over macro moves with a transposition table.

What makes it fast:
- compact positions: the reserve is a count (its order is fixed), foundations four counts,
  columns tuples of card ints, the talon (waste + stock in draw order) a tuple and a pointer;
- every waste card reachable by further draws (and recycles, where allowed) is one move, so
  the search never branches on single draws;
- a transposition table of seen positions, with columns in canonical (sorted) order;
- safe automatic moves to the foundations (a card nothing can still be built on);
- move ordering: foundations, the reserve, emptying columns, then the rest.

The search is exhaustive, so ``lost`` is a proof; ``unknown`` means the budget ran out.
The clock is the caller's: ``Budget.out_of_time`` is called now and then.
A ``won`` line is rebuilt move by move through the rules engine, so it is always legal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .commands import Command, Draw, MoveCard, Recycle
from .piles import FOUNDATION, TABLEAU
from .rules import apply
from .rulesets import RecyclePolicy, TableauMoves
from .state import GameState, Status

_RANK = tuple(card % 13 for card in range(52))
_SUIT = tuple(card // 13 for card in range(52))
_OPPOSITE_SUITS = ((1, 2), (0, 3), (0, 3), (1, 2))  # suits of the other colour
# The two cards that fit on each card in the tableau: one rank lower (K on A), the other colour.
_FITS_ON = tuple(
    tuple(suit * 13 + (_RANK[card] + 12) % 13 for suit in _OPPOSITE_SUITS[_SUIT[card]]) for card in range(52)
)

# Where a macro move takes its card from.
_RESERVE, _TALON, _TABLEAU, _FOUNDATION = 0, 1, 2, 3
_TO_FOUNDATION = -1
_NEVER = 1 << 30


@dataclass(frozen=True, slots=True)
class Budget:
    max_states: int = 2_000_000
    out_of_time: Callable[[], bool] = field(default=lambda: False)
    check_every: int = 512
    # A first, narrower search (no splitting of runs, no foundation returns) finds most wins
    # quickly and with short lines; the full search then decides the rest.
    narrow_states: int = 40_000


@dataclass(frozen=True, slots=True)
class SolveResult:
    result: str  # "won", "lost" or "unknown"
    moves: tuple[Command, ...]  # the winning line in API moves (draws included) when won
    states: int  # positions searched


class _OutOfBudget(Exception):
    pass


# A position: (reserve count, foundations, columns, talon, pointer, progress)
Position = tuple[int, tuple[int, int, int, int], tuple[tuple[int, ...], ...], tuple[int, ...], int, bool]
# A macro move: (source kind, card, target column or _TO_FOUNDATION, detail): detail is the
# talon position for talon moves, the column index for tableau moves, else 0.
Macro = tuple[int, int, int, int]


class _Search:
    def __init__(self, state: GameState, budget: Budget, narrow: bool = False, max_depth: int = 1 << 30) -> None:
        ruleset = state.ruleset
        self.base = state.base_rank
        self.reserve = state.reserve
        self.draw = ruleset.draw_count
        self.free_recycle = ruleset.recycle is RecyclePolicy.UNLIMITED
        self.any_run = ruleset.tableau_moves is TableauMoves.ANY_RUN and not narrow
        self.returns = ruleset.foundation_returns and not narrow
        self.budget = budget
        self.max_depth = max_depth  # longest line (in macro moves) worth looking for
        self.max_states = min(budget.max_states, budget.narrow_states) if narrow else budget.max_states
        self.states = 0
        self.seen: dict[tuple[object, ...], list[int]] = {}
        self._reachable: dict[tuple[int, int, bool], list[int]] = {}

    # -------------------------------------------------------------- rules on positions

    def fits_foundation(self, card: int, found: tuple[int, int, int, int]) -> bool:
        count = found[_SUIT[card]]
        return count < 13 and _RANK[card] == (self.base + count) % 13

    def safe(self, card: int, found: tuple[int, int, int, int]) -> bool:
        """Nothing can still be built on ``card`` in the tableau: the cards that would go on it are home."""
        relative = (_RANK[card] - self.base) % 13
        need = relative if relative else 13
        first, second = _OPPOSITE_SUITS[_SUIT[card]]
        return found[first] >= need and found[second] >= need

    def reachable(self, size: int, pointer: int, progress: bool) -> list[int]:
        """Talon positions q (the waste would hold q cards, its top talon[q - 1]), fewest draws first."""
        key = (size, pointer, progress)
        found = self._reachable.get(key)
        if found is None:
            found = self._reachable[key] = list(self._positions(size, pointer, progress))
        return found

    def _positions(self, size: int, pointer: int, progress: bool) -> Iterator[int]:
        seen = set()
        if pointer:
            seen.add(pointer)
            yield pointer
        q = pointer
        while q < size:
            q = min(q + self.draw, size)
            seen.add(q)
            yield q
        if self.free_recycle or progress:
            q = 0
            while q < pointer:
                q = min(q + self.draw, size)
                if q not in seen:
                    seen.add(q)
                    yield q

    # -------------------------------------------------------------- moves

    def play(self, position: Position, move: Macro) -> Position:
        reserve, found, columns, talon, pointer, progress = position
        kind, card, target, detail = move
        moved: tuple[int, ...] = (card,)
        column_list = list(columns)
        if kind == _RESERVE:
            reserve -= 1
        elif kind == _TALON:
            talon = talon[: detail - 1] + talon[detail:]
            pointer = detail - 1
        elif kind == _FOUNDATION:
            found = _bump(found, _SUIT[card], -1)
        else:
            source = column_list[detail]
            index = source.index(card)
            moved = source[index:]
            column_list[detail] = source[:index]
            if index == 0 and reserve:
                column_list[detail] = (self.reserve[reserve - 1],)
                reserve -= 1
        if target == _TO_FOUNDATION:
            found = _bump(found, _SUIT[card], 1)
        else:
            column_list[target] = column_list[target] + moved
        return reserve, found, tuple(column_list), talon, pointer, True

    def auto(self, position: Position, path: list[Macro]) -> Position:
        """Play every safe card to its foundation (reserve top, column ends, waste top)."""
        base, safe = self.base, self.safe
        while True:
            reserve, found, columns, talon, pointer, _ = position
            home = {suit * 13 + (base + count) % 13 for suit, count in enumerate(found) if count < 13}
            move: Macro | None = None
            if reserve and self.reserve[reserve - 1] in home and safe(self.reserve[reserve - 1], found):
                move = (_RESERVE, self.reserve[reserve - 1], _TO_FOUNDATION, 0)
            else:
                for index, column in enumerate(columns):
                    if column and column[-1] in home and safe(column[-1], found):
                        move = (_TABLEAU, column[-1], _TO_FOUNDATION, index)
                        break
                else:
                    if pointer and talon[pointer - 1] in home and safe(talon[pointer - 1], found):
                        move = (_TALON, talon[pointer - 1], _TO_FOUNDATION, pointer)
            if move is None:
                return position
            path.append(move)
            position = self.play(position, move)

    def moves(self, position: Position) -> list[Macro]:
        reserve, found, columns, talon, pointer, progress = position
        first: list[Macro] = []  # to foundations, off the reserve, emptying columns
        then: list[Macro] = []  # from the talon
        last: list[Macro] = []  # splitting runs, foundation returns
        hosts: dict[int, list[int]] = {}  # card -> the columns whose end card it fits on
        empty_column = -1
        for index, column in enumerate(columns):
            if column:
                for card in _FITS_ON[column[-1]]:
                    hosts.setdefault(card, []).append(index)
            elif empty_column < 0:
                empty_column = index  # one empty column stands for all (they are alike)
        base = self.base
        home = {suit * 13 + (base + count) % 13 for suit, count in enumerate(found) if count < 13}

        if reserve:
            card = self.reserve[reserve - 1]
            if card in home:
                first.append((_RESERVE, card, _TO_FOUNDATION, 0))
            for target in hosts.get(card, ()):
                first.append((_RESERVE, card, target, 0))
            if empty_column >= 0:
                first.append((_RESERVE, card, empty_column, 0))
        for index, column in enumerate(columns):
            if not column:
                continue
            end = column[-1]
            if end in home:
                first.insert(0, (_TABLEAU, end, _TO_FOUNDATION, index))
            starts = range(len(column)) if self.any_run else ((0, len(column) - 1) if len(column) > 1 else (0,))
            for start in starts:
                card = column[start]
                targets = hosts.get(card, [])
                if empty_column >= 0 and start > 0:  # a whole column into an empty one changes nothing
                    targets = [*targets, empty_column]
                for target in targets:
                    if target == index:
                        continue
                    move = (_TABLEAU, card, target, index)
                    if start == 0 or column[start - 1] in home:
                        first.append(move)
                    else:
                        last.append(move)
        for q in self.reachable(len(talon), pointer, progress):
            card = talon[q - 1]
            if card in home:
                first.append((_TALON, card, _TO_FOUNDATION, q))
            for target in hosts.get(card, ()):
                then.append((_TALON, card, target, q))
            if empty_column >= 0:
                then.append((_TALON, card, empty_column, q))
        if self.returns:
            # A card comes back from its foundation only to take a card that is free to move now;
            # otherwise returns let a depth-first search wander (one deal's line ran to 200,000 moves).
            movable = {self.reserve[reserve - 1]} if reserve else set()
            movable.update(talon[q - 1] for q in self.reachable(len(talon), pointer, progress))
            for column in columns:
                if column:
                    movable.add(column[-1])
                    movable.add(column[0])
            for suit in range(4):
                count = found[suit]
                if count:
                    card = suit * 13 + (self.base + count - 1) % 13
                    if movable.isdisjoint(_FITS_ON[card]):
                        continue
                    for target in hosts.get(card, ()):
                        last.append((_FOUNDATION, card, target, 0))
                    if empty_column >= 0:
                        last.append((_FOUNDATION, card, empty_column, 0))
        return first + then + last

    # -------------------------------------------------------------- search

    def visited(self, position: Position) -> bool:
        """Seen before, or dominated by a position seen before; otherwise remember it.

        With recycling allowed, a pointer p reaches every talon position p + k*draw, the end,
        and every multiple of draw (after a recycle). So the same cards with a pointer of the
        same residue and no smaller, or with a multiple of draw, have no move the smaller one
        lacks: they are dominated and need no search of their own.
        """
        reserve, found, columns, talon, pointer, progress = position
        can_recycle = progress or self.free_recycle
        cards: tuple[object, ...] = (reserve, found, tuple(sorted(columns)), talon, can_recycle)
        if not can_recycle:
            cards = (*cards, pointer)  # only forward draws: keep the exact pointer
            pointer = 0
        residue = pointer % self.draw
        lowest = self.seen.get(cards)
        if lowest is None:
            lowest = self.seen[cards] = [_NEVER] * self.draw
        elif residue == 0 or lowest[residue] <= pointer:
            return True
        lowest[residue] = min(lowest[residue], pointer)
        lowest[0] = 0  # any pointer reaches what a multiple of draw reaches
        return False

    def enter(self, position: Position, path: list[Macro]) -> tuple[bool, Position | None, int]:
        """(won, the position to search from or None if seen, how many automatic moves were added)."""
        self.states += 1
        if self.states % self.budget.check_every == 0 and (
            self.states >= self.max_states or self.budget.out_of_time()
        ):
            raise _OutOfBudget()
        before = len(path)
        position = self.auto(position, path)
        added = len(path) - before
        if sum(position[1]) == 52:
            return True, position, added
        if self.visited(position):
            del path[before:]
            return False, None, 0
        return False, position, added

    def run(self, start: Position) -> list[Macro] | None:
        path: list[Macro] = []
        won, position, added = self.enter(start, path)
        if won:
            return path
        if position is None:
            return None
        stack: list[tuple[Position, Iterator[Macro], int]] = [(position, iter(self.moves(position)), added)]
        while stack:
            position, pending, added = stack[-1]
            move = next(pending, None)
            if move is None:
                stack.pop()
                if added:
                    del path[-added:]
                if stack:
                    path.pop()  # the move that led to the position just left
                continue
            if len(path) >= self.max_depth:
                continue
            path.append(move)
            won, child, child_added = self.enter(self.play(position, move), path)
            if won:
                return path
            if child is None:
                path.pop()
                continue
            stack.append((child, iter(self.moves(child)), child_added))
        return None


def _shortened(search: _Search, start: Position, line: list[Macro]) -> list[Macro]:
    """The line with detours cut out: wherever one move reaches a position the line only gets
    to later, jump there (a depth-first line can wander, most of all with foundation returns)."""
    positions = [start]
    for move in line:
        positions.append(search.play(positions[-1], move))
    later: dict[Position, int] = {}
    for index, position in enumerate(positions):
        later[position] = index  # the last time the line is there (exactly: moves name columns)
    shorter: list[Macro] = []
    index = 0
    while index < len(line):
        best, best_move = index + 1, line[index]
        for move in search.moves(positions[index]):
            target = later.get(search.play(positions[index], move), -1)
            if target > best:
                best, best_move = target, move
        shorter.append(best_move)
        index = best
    return shorter


def _bump(found: tuple[int, int, int, int], suit: int, delta: int) -> tuple[int, int, int, int]:
    counts = list(found)
    counts[suit] += delta
    return (counts[0], counts[1], counts[2], counts[3])


def _start(state: GameState) -> Position:
    talon = state.waste + tuple(reversed(state.stock))
    return (len(state.reserve), state.foundations, state.tableau, talon, len(state.waste), state.progress)


def solve(state: GameState, budget: Budget | None = None) -> SolveResult:
    """Search for a win from ``state``: ``won`` with a line of API moves, ``lost`` (proven) or ``unknown``."""
    if state.status is Status.WON:
        return SolveResult("won", (), 0)
    if state.status is not Status.PLAYING:
        return SolveResult("lost", (), 0)
    budget = budget or Budget()
    narrow = _Search(state, budget, narrow=True)
    try:
        line = narrow.run(_start(state))
    except _OutOfBudget:
        line = None
    if line is not None:
        return SolveResult("won", tuple(_to_commands(state, _shortened(narrow, _start(state), line))), narrow.states)
    if budget.out_of_time():
        return SolveResult("unknown", (), narrow.states)
    full = _Search(state, dataclasses.replace(budget, max_states=max(0, budget.max_states - narrow.states)))
    try:
        line = full.run(_start(state))
    except _OutOfBudget:
        return SolveResult("unknown", (), narrow.states + full.states)
    if line is None:
        return SolveResult("lost", (), narrow.states + full.states)
    return SolveResult("won", tuple(_to_commands(state, line)), narrow.states + full.states)


def _to_commands(state: GameState, line: list[Macro]) -> Iterator[Command]:
    """The API moves of a macro line: draws (and recycles) until the card shows, then the move."""
    for kind, card, target, _ in line:
        if kind == _TALON:
            for _ in range(2 * 52):
                if state.waste and state.waste[-1] == card:
                    break
                command: Command = Draw() if state.stock else Recycle()
                state, _events = apply(state, command)
                yield command
        command = MoveCard(card, FOUNDATION if target == _TO_FOUNDATION else TABLEAU[target])
        state, _events = apply(state, command)
        yield command
