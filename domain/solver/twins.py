"""Twin merging in the sound stage: positions that differ only in which twin holds a free pair's child.

``TwinMerging`` gives ``search.Search`` its free pairs (``free_twins``), the merged key of a
position's columns (``merged``) and the moves only the other members of a merged class have
(``twin_moves``); ``twin_room`` says where merging is sound. Why it never loses a win is told in
``search.Search``'s docstring.
"""

from __future__ import annotations

from .macros import FROM_TABLEAU, RANK, SUIT, TO_FOUNDATION, TWIN, TWIN_FIRST, Macro, Position
from .position_rules import PositionRules

# Twin merging (see ``Search.visited``) needs every twin move legal in every merged position: a
# run moved onto its own column's end would need 27 cards in one column (a card, then 26 steps
# down in alternating colours to its twin), impossible with at most this many tableau cards.
_TWIN_MAX_CARDS = 26
# ... or with more, when some rank and colour is missing from the tableau: such a 27-card run holds
# every rank in both colours (the cards 13 apart have the same rank and the other colour). A
# card's bit of its (rank, colour) class: the classes of the tableau are those of its cards.
_CLASS_BIT = tuple(1 << (RANK[card] * 2 + (SUIT[card] in (1, 2))) for card in range(52))


def twin_room(columns: tuple[tuple[int, ...], ...]) -> int:
    """Whether positions with these tableau cards are twin-merged (``Search.merged``): 2 if also
    with any one card more, 1 if only with these, 0 if not. Merged: every twin move is legal (no
    column can hold a run from a card down to its twin), so at most 26 cards, or a (rank, colour)
    class that none of the cards has: the same for every member of a merged class (twin moves
    keep the tableau's cards), and one card more fills at most one missing class."""
    cards = len(columns[0]) + len(columns[1]) + len(columns[2]) + len(columns[3])
    if cards < _TWIN_MAX_CARDS:
        return 2
    classes = 0
    for column in columns:
        for card in column:
            classes |= _CLASS_BIT[card]
    missing = 26 - classes.bit_count()
    if missing >= 2:
        return 2
    return 1 if missing or cards == _TWIN_MAX_CARDS else 0


class TwinMerging(PositionRules):
    """The twin-merging part of a search (see ``search.Search``)."""

    def free_twins(self, columns: tuple[tuple[int, ...], ...]) -> list[tuple[int, int, int]]:
        """The free twin pairs: (end column, host column, index of the host card in it).

        A pair is free when one twin is a column's end and the other lies in the tableau with a
        card on it, the pair's only child: moving that child's run from one twin to the other is
        legal both ways, and it changes nothing but which of the two twins is the end.
        """
        free: list[tuple[int, int, int]] = []
        every = columns[0] + columns[1] + columns[2] + columns[3]
        for end_index, column in enumerate(columns):
            if not column:
                continue
            twin = TWIN[column[-1]]
            if twin not in every:
                continue
            for host_index, host_column in enumerate(columns):
                if twin in host_column:
                    at = host_column.index(twin)
                    if at < len(host_column) - 1:
                        free.append((end_index, host_index, at))
                    break
        return free

    def merged(self, columns: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
        """The columns with the child of every free twin pair on the lower of the two twins."""
        c0, c1, c2, c3 = columns
        if not ((c0 and c0[-1] < 26) or (c1 and c1[-1] < 26) or (c2 and c2[-1] < 26) or (c3 and c3[-1] < 26)):
            return columns  # no end is the lower twin (spades and hearts are, clubs and diamonds are not)
        every = c0 + c1 + c2 + c3
        if len(every) > _TWIN_MAX_CARDS and not twin_room(columns):
            return columns
        changed: list[tuple[int, ...]] | None = None
        end_index = 0
        while end_index < 4:
            column = columns[end_index] if changed is None else changed[end_index]
            end_index += 1
            if not column:
                continue
            end = column[-1]
            twin = TWIN[end]
            if twin < end or twin not in every:
                continue  # already on the lower twin, or the twin is not in the tableau
            if changed is None:
                changed = list(columns)
            for host_index in range(4):
                host_column = changed[host_index]
                if twin in host_column:
                    at = host_column.index(twin) + 1
                    if at < len(host_column):  # the twin has a child: move its run onto the end
                        changed[end_index - 1] = column + host_column[at:]
                        changed[host_index] = host_column[:at]
                        end_index = 0  # the run's end is another column's end now: look again
                    break
        return columns if changed is None else tuple(changed)

    def twin_moves(self, position: Position, moves: list[Macro]) -> list[Macro]:
        """The moves that only the twin-merged positions have (see ``visited``), each made after
        the twin move that gets there: the hosting twin goes home, or the child's twin (from the
        reserve, the talon or a column's first card) goes onto the hosting twin. For positions
        that are merged (``moves`` calls it for those only: ``twin_room``)."""
        _reserve, found, columns, _talon, _pointer, _progress = position
        extra: list[Macro] = []
        for end_index, host_index, at in self.free_twins(columns):
            host_column = columns[host_index]
            host, child = host_column[at], host_column[at + 1]
            first = TWIN_FIRST * (1 + (child * 4 + host_index) * 4 + end_index)  # child's run onto the end
            if found[host // 13] == self.rel[host]:
                extra.append((FROM_TABLEAU, host, TO_FOUNDATION, first + host_index))
            other = TWIN[child]
            for kind, card, target, detail in moves:
                if card == other and target == end_index and not (kind == FROM_TABLEAU and detail == host_index):
                    extra.append((kind, card, host_index, first + detail))
        return extra
