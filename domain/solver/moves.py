"""The solver's move generator: every macro move of a position, in the order the searches try them.

``MoveGeneration`` gives ``search.Search`` its ``moves``: to foundations, off the reserve, tableau
moves that empty a column or free a card that goes home, talon moves, then the other splits of
runs and the foundation returns, each as the stage allows, and with twin merging the moves that
only the other members of a merged class have.
"""

from __future__ import annotations

from collections.abc import Iterable

from .macros import (
    FROM_FOUNDATION,
    FROM_RESERVE,
    FROM_TABLEAU,
    FROM_TALON,
    OPPOSITE_SUITS,
    RANK,
    SUIT,
    TO_FOUNDATION,
    Macro,
    Position,
)
from .twins import TwinMerging, twin_room

# The two cards that fit on each card in the tableau: one rank lower (K on A), the other colour.
_FITS_ON = tuple(
    tuple(suit * 13 + (RANK[card] + 12) % 13 for suit in OPPOSITE_SUITS[SUIT[card]]) for card in range(52)
)


class MoveGeneration(TwinMerging):
    """The move generator of a search (see ``search.Search``)."""

    def moves(self, position: Position) -> list[Macro]:
        """Every macro move, in the order tried: to foundations, off the reserve, tableau moves that
        empty a column or free a card that goes home; then talon moves; then the other splits of
        runs and foundation returns."""
        reserve, found, columns, _talon, _pointer, progress = position
        rel = self.rel
        hosts, empty_column = _hosts(columns)
        first: list[Macro] = [  # to foundations, off the reserve, emptying columns
            (FROM_TABLEAU, columns[index][-1], TO_FOUNDATION, index)
            for index in range(len(columns) - 1, -1, -1)
            if columns[index] and found[columns[index][-1] // 13] == rel[columns[index][-1]]
        ]
        last: list[Macro] = []  # splitting runs, foundation returns
        # With twin merging (``visited``): a run moved off a card onto that card's twin is a twin
        # move (the same merged position), and a card that fits on two ends (twins, neither with a
        # child) makes one merged position on either, so one of them is enough.
        merge = twin_room(columns) if self.twins and (self.free_recycle or progress) else 0
        hosts_used = 1 if merge == 2 else 2  # (one more card in the tableau must keep it merged)
        if reserve:
            card = self.reserve[reserve - 1]
            if found[card // 13] == rel[card]:
                first.append((FROM_RESERVE, card, TO_FOUNDATION, 0))
            first.extend((FROM_RESERVE, card, target, 0) for target in hosts.get(card, [])[:hosts_used])
            if empty_column >= 0:
                first.append((FROM_RESERVE, card, empty_column, 0))
        self._tableau_moves(position, hosts, empty_column, merge, first, last)
        first.extend(self._talon_moves(position, hosts, hosts_used, empty_column, first))
        if self.returns:
            last.extend(self._returns(position, hosts, empty_column))
        first.extend(last)
        if merge:
            first.extend(self.twin_moves(position, first))
        return first

    def _tableau_moves(
        self,
        position: Position,
        hosts: dict[int, list[int]],
        empty_column: int,
        merge: int,
        first: list[Macro],
        last: list[Macro],
    ) -> None:
        """The tableau moves: into ``first`` those that empty a column or free a card that goes
        home, into ``last`` the other splits of runs."""
        reserve, found, columns, _talon, _pointer, _progress = position
        rel = self.rel
        starts_of = _run_starts(columns, hosts) if empty_column < 0 and self.any_run else None
        for index, column in enumerate(columns):
            if not column:
                continue
            if starts_of is not None:
                starts: Iterable[int] = starts_of[index]
            elif self.any_run:
                starts = range(len(column))
            else:
                starts = (0, len(column) - 1) if len(column) > 1 else (0,)
            for start in starts:
                card = column[start]
                targets = hosts.get(card, [])
                if merge:  # the rest: the same merged positions (a refill adds a card to the tableau)
                    used = 1 if merge == 2 or not reserve else 2
                    targets = [target for target in targets if target != index][:used] if start == 0 else []
                if empty_column >= 0 and start > 0:  # a whole column into an empty one changes nothing
                    targets = [*targets, empty_column]
                for target in targets:
                    if target == index:
                        continue
                    move = (FROM_TABLEAU, card, target, index)
                    if start == 0 or found[column[start - 1] // 13] == rel[column[start - 1]]:
                        first.append(move)
                    else:
                        last.append(move)

    def _talon_moves(
        self, position: Position, hosts: dict[int, list[int]], hosts_used: int, empty_column: int, first: list[Macro]
    ) -> list[Macro]:
        """The talon moves to the tableau; those to a foundation go into ``first`` (in the same pass)."""
        _reserve, found, _columns, talon, pointer, progress = position
        rel = self.rel
        then: list[Macro] = []
        for q in self.reachable(len(talon), pointer, progress):
            card = talon[q - 1]
            if found[card // 13] == rel[card]:
                first.append((FROM_TALON, card, TO_FOUNDATION, q))
            if card in hosts:
                then.extend((FROM_TALON, card, target, q) for target in hosts[card][:hosts_used])
            if empty_column >= 0:
                then.append((FROM_TALON, card, empty_column, q))
        return then

    def _returns(self, position: Position, hosts: dict[int, list[int]], empty_column: int) -> list[Macro]:
        """The foundation returns (in ``WIDE`` and ``BEST`` only those that take a card free to move now)."""
        reserve, found, columns, talon, pointer, progress = position
        movable: set[int] = set()
        if self.free_returns_only:
            movable.update(talon[q - 1] for q in self.reachable(len(talon), pointer, progress))
            if reserve:
                movable.add(self.reserve[reserve - 1])
            for column in columns:
                if column:
                    movable.add(column[-1])
                    movable.add(column[0])
        returns: list[Macro] = []
        for suit in range(4):
            count = found[suit]
            if count:
                card = suit * 13 + (self.base + count - 1) % 13
                if self.free_returns_only and movable.isdisjoint(_FITS_ON[card]):
                    continue
                returns.extend((FROM_FOUNDATION, card, target, 0) for target in hosts.get(card, ()))
                if empty_column >= 0:
                    returns.append((FROM_FOUNDATION, card, empty_column, 0))
        return returns


def _hosts(columns: tuple[tuple[int, ...], ...]) -> tuple[dict[int, list[int]], int]:
    """card -> the columns whose end card it fits on; and the first empty column (-1: none; one
    empty column stands for all, they are alike)."""
    hosts: dict[int, list[int]] = {}
    empty_column = -1
    for index, column in enumerate(columns):
        if column:
            for card in _FITS_ON[column[-1]]:
                if card in hosts:
                    hosts[card].append(index)
                else:
                    hosts[card] = [index]
        elif empty_column < 0:
            empty_column = index
    return hosts, empty_column


def _run_starts(columns: tuple[tuple[int, ...], ...], hosts: dict[int, list[int]]) -> list[list[int]]:
    """Where in each column a run can start, with no empty column and any run moving: only cards
    that fit on a column end can move, so find them instead of trying every card."""
    starts_of: list[list[int]] = [[], [], [], []]
    for card in hosts:
        for index, column in enumerate(columns):
            if card in column:
                starts_of[index].append(column.index(card))
                break
    for found_starts in starts_of:
        found_starts.sort()
    return starts_of
