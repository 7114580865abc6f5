"""The solver's depth-first search (``Search``) over macro moves, with a transposition table.

A position is compact: the reserve a count (its order is fixed), foundations four counts, columns
tuples of card ints, the talon (waste + stock in draw order) a tuple and a pointer; every waste
card that further draws (and recycles, where allowed) reach is one macro move (``talon_positions``),
so the search never branches on single draws. The ``SOUND`` stage's search also exists in C
(``native``): ``Search.run_native`` makes exactly the moves of ``Search.run`` in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..commands import Command, Draw, MoveCard, Recycle
from ..piles import FOUNDATION, TABLEAU
from ..rules import apply
from ..rulesets import RecyclePolicy, TableauMoves
from ..state import GameState
from . import native
from .budget import Budget, OutOfBudget
from .talon import talon_positions

_RANK = tuple(card % 13 for card in range(52))
_SUIT = tuple(card // 13 for card in range(52))
_OPPOSITE_SUITS = ((1, 2), (0, 3), (0, 3), (1, 2))  # suits of the other colour
# The two cards that fit on each card in the tableau: one rank lower (K on A), the other colour.
_FITS_ON = tuple(
    tuple(suit * 13 + (_RANK[card] + 12) % 13 for suit in _OPPOSITE_SUITS[_SUIT[card]]) for card in range(52)
)
# Each card's twin: the same rank and colour, the other suit (S <-> C, H <-> D). A card fits on a
# card exactly when it fits on that card's twin.
TWIN = tuple((3 - _SUIT[card]) * 13 + _RANK[card] for card in range(52))
# Twin merging (see ``Search.visited``) needs every twin move legal in every merged position: a
# run moved onto its own column's end would need 27 cards in one column (a card, then 26 steps
# down in alternating colours to its twin), impossible with at most this many tableau cards.
_TWIN_MAX_CARDS = 26
# ... or with more, when some rank and colour is missing from the tableau: such a 27-card run holds
# every rank in both colours (the cards 13 apart have the same rank and the other colour). A
# card's bit of its (rank, colour) class: the classes of the tableau are those of its cards.
_CLASS_BIT = tuple(1 << (_RANK[card] * 2 + (_SUIT[card] in (1, 2))) for card in range(52))
# A macro move's detail above this carries a twin move made first (``Search.play``).
TWIN_FIRST = 64

# Where a macro move takes its card from.
_RESERVE, _TALON, _TABLEAU, _FOUNDATION = 0, 1, 2, 3
_TO_FOUNDATION = -1
_NEVER = 1 << 30


# The stages of a solve, in order (WIDE in classic only; SOUND_FIRST, the sound stage with a
# position limit, only with ``Budget.sound_first_states`` and the C search).
NARROW, NARROW_BEST, BEST, WIDE, SOUND = "narrow", "narrow-best", "best", "wide", "sound"
SOUND_FIRST = "sound-first"


# A position: (reserve count, foundations, columns, talon, pointer, progress)
Position = tuple[int, tuple[int, int, int, int], tuple[tuple[int, ...], ...], tuple[int, ...], int, bool]
# A macro move: (source kind, card, target column or _TO_FOUNDATION, detail): detail is the
# talon position for talon moves, the column index for tableau moves, else 0.
Macro = tuple[int, int, int, int]



class Search:
    """One depth-first search. The ``SOUND`` stage prunes only what provably never loses a win:

    - talon moves: every waste card that draws and recycles reach (``talon_positions``); a move
      that is not a talon move is made at the current pointer, which dominates making it after
      some draws (from here the draws can still be made afterwards, and in draw-one a pass that
      started with a real move may recycle);
    - transpositions: the same cards with a pointer reachable from one already seen (same
      residue and no smaller, a multiple of the draw, or the end) reach nothing new;
    - automatic moves, only where foundations are final (draw-one, open-runs): the reserve top
      or a column's end card whose two tableau children are home (nothing can ever be built on
      it, and a player who keeps it out can do nothing more than one who plays it); in draw-one
      also such a card anywhere in the talon (every talon card stays reachable). Never a draw-
      three talon card: taking it out shifts the later cards' places in the threes and can make
      a needed card unreachable. In ``classic`` nothing moves automatically, since foundation
      cards come back.
    - twin merging, where any run moves and nothing comes back (draw-one with a recycle allowed,
      open-runs), with at most 26 cards in the tableau or some rank and colour missing from it
      (``twin_room``): positions that differ only in which of two twins (same rank and colour)
      holds a free pair's child are one entry of the transposition table, and the search makes,
      besides the moves of the position it reached, the moves that only the other members have
      (``free_twins``, ``merged``, ``twin_moves``).

    Why twin merging is sound. Cards that fit on a card fit on its twin and on nothing else. A
    pair of twins is *free* when one is a column's end and the other lies in the tableau with a
    card c on it (c is then the pair's only child: the end twin has none). Moving c's run from
    one twin onto the other (a *twin move*) is legal both ways, since the end twin takes it and
    the run cannot hold the target (that takes 27 cards in one column: a card, then 26 steps
    down in alternating colours to its twin, so every rank in both colours; twin moves keep the
    tableau's cards, so no member of a class has such a run); it keeps the reserve, the
    foundations, the talon, the pointer and every other pair's state, and each free pair stays
    free. So a position's
    *class*, every choice of twin for the child of each free pair, is mutually reachable (a
    twin move counts as progress, hence draw-one merges only once a recycle is allowed anyway)
    and the class is its key (``merged``: each child on the lower twin). A member's moves that
    do not touch a free pair's end lead to the same class whichever member makes them (the
    pairs they leave free differ at most in their children's twins, and a pair they stop being
    free of ends alike in both: its child gone home or first in a column, a twin gone home,
    both twins taken). The moves that do touch it are the end twin going home and the child's
    twin (the only other card that fits) going onto it; for the member with the other twin as
    end, ``twin_moves`` makes those after the twin move there. So every move of every member
    is made (up to the class of where it leads), and with the pointer rule above, the members
    of the searched classes are closed under moves: a lost verdict still covers every line.

    The other stages only look for wins (a win they find is replayed like any other) and take
    shortcuts that may lose some: ``NARROW`` and ``NARROW_BEST`` allow no split runs and no
    foundation returns, and play a safe waste top home; ``WIDE`` and ``BEST`` allow every move but
    return a foundation card only to take a card that is free to move now (otherwise a
    depth-first line wanders through returns), and play safe cards home as ``NARROW`` does. The
    ``*_BEST`` stages are searched best first (``best_first.best_first``), the others depth first.
    """

    def __init__(self, state: GameState, budget: Budget, max_states: int | None, stage: str) -> None:
        ruleset = state.ruleset
        self.base = state.base_rank
        self.reserve = state.reserve
        self.draw = ruleset.draw_count
        self.free_recycle = ruleset.recycle is RecyclePolicy.UNLIMITED
        self.stage = stage
        self.sound = stage == SOUND
        narrow = stage in (NARROW, NARROW_BEST)
        self.any_run = ruleset.tableau_moves is TableauMoves.ANY_RUN and not narrow
        self.returns = ruleset.foundation_returns and not narrow
        self.free_returns_only = stage in (WIDE, BEST)
        self.auto_home = not self.sound or not ruleset.foundation_returns
        self.auto_talon = not self.sound or self.draw == 1
        # Twin merging (``visited``): the sound stage where any run moves and nothing comes back.
        self.twins = self.sound and ruleset.tableau_moves is TableauMoves.ANY_RUN and not ruleset.foundation_returns
        # rel[card]: the foundation count at which ``card`` is the next to go home (its rank above the base)
        self.rel = tuple((_RANK[card] - self.base) % 13 for card in range(52))
        self.budget = budget
        self.max_states = max_states
        self.states = 0
        self.seen: dict[tuple[object, ...], list[int]] = {}
        # Set by ``visited`` for a position it lets through: 0 if its cards are new, else the lowest
        # pointer of its residue they were searched from before (``_NEVER``: none of that residue).
        self.searched_from = 0
        self._reachable: dict[tuple[int, int, bool], tuple[int, ...]] = {}
        self._native: object | None = None  # a C search stopped out of budget (``resume_native``)

    # -------------------------------------------------------------- rules on positions

    def safe(self, card: int, found: tuple[int, int, int, int]) -> bool:
        """Nothing can still be built on ``card`` in the tableau: the cards that would go on it are home."""
        relative = (_RANK[card] - self.base) % 13
        need = relative if relative else 13
        first, second = _OPPOSITE_SUITS[_SUIT[card]]
        return found[first] >= need and found[second] >= need

    def can_recycle(self, progress: bool) -> bool:
        return self.free_recycle or progress

    def reachable(self, size: int, pointer: int, progress: bool) -> tuple[int, ...]:
        """Talon positions q (the waste would hold q cards, its top talon[q - 1]), fewest draws first."""
        key = (size, pointer, progress)
        found = self._reachable.get(key)
        if found is None:
            found = self._reachable[key] = talon_positions(size, pointer, self.draw, self.can_recycle(progress))
        return found

    # -------------------------------------------------------------- moves

    def play(self, position: Position, move: Macro) -> Position:
        kind, card, target, detail = move
        if detail >= TWIN_FIRST:  # a twin move first (``twin_moves``), then the move itself
            position = self.play(position, twin_move(detail))
            detail %= TWIN_FIRST
        reserve, found, columns, talon, pointer, _progress = position
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
        """Play every safe card to its foundation (see the class docstring for which)."""
        if not self.auto_home:
            return position
        rel, safe, reserve_cards, auto_talon = self.rel, self.safe, self.reserve, self.auto_talon
        while True:
            reserve, found, columns, talon, pointer, progress = position
            move: Macro | None = None
            card = reserve_cards[reserve - 1] if reserve else -1
            if reserve and found[card // 13] == rel[card] and safe(card, found):
                move = (_RESERVE, card, _TO_FOUNDATION, 0)
            else:
                for index, column in enumerate(columns):
                    if column and found[column[-1] // 13] == rel[column[-1]] and safe(column[-1], found):
                        move = (_TABLEAU, column[-1], _TO_FOUNDATION, index)
                        break
                else:
                    if auto_talon:
                        move = self._auto_talon(talon, pointer, progress, found)
            if move is None:
                return position
            path.append(move)
            position = self.play(position, move)

    def _auto_talon(
        self, talon: tuple[int, ...], pointer: int, progress: bool, found: tuple[int, int, int, int]
    ) -> Macro | None:
        if not self.auto_talon:
            return None
        if self.sound:
            # Draw-one with a recycle allowed: every talon card is reachable, so which one goes
            # home does not depend on the pointer (the transposition table ignores it there).
            if not self.can_recycle(progress):
                return None
            rel = self.rel
            for q, card in enumerate(talon, start=1):
                if found[card // 13] == rel[card] and self.safe(card, found):
                    return (_TALON, card, _TO_FOUNDATION, q)
            return None
        if (
            pointer
            and found[talon[pointer - 1] // 13] == self.rel[talon[pointer - 1]]
            and self.safe(talon[pointer - 1], found)
        ):
            return (_TALON, talon[pointer - 1], _TO_FOUNDATION, pointer)
        return None

    def moves(self, position: Position) -> list[Macro]:
        """Every macro move, in the order tried: to foundations, off the reserve, tableau moves that
        empty a column or free a card that goes home; then talon moves; then the other splits of
        runs and foundation returns."""
        reserve, found, columns, _talon, _pointer, progress = position
        rel = self.rel
        hosts, empty_column = _hosts(columns)
        first: list[Macro] = [  # to foundations, off the reserve, emptying columns
            (_TABLEAU, columns[index][-1], _TO_FOUNDATION, index)
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
                first.append((_RESERVE, card, _TO_FOUNDATION, 0))
            first.extend((_RESERVE, card, target, 0) for target in hosts.get(card, [])[:hosts_used])
            if empty_column >= 0:
                first.append((_RESERVE, card, empty_column, 0))
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
                    move = (_TABLEAU, card, target, index)
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
                first.append((_TALON, card, _TO_FOUNDATION, q))
            if card in hosts:
                then.extend((_TALON, card, target, q) for target in hosts[card][:hosts_used])
            if empty_column >= 0:
                then.append((_TALON, card, empty_column, q))
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
                returns.extend((_FOUNDATION, card, target, 0) for target in hosts.get(card, ()))
                if empty_column >= 0:
                    returns.append((_FOUNDATION, card, empty_column, 0))
        return returns

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
                extra.append((_TABLEAU, host, _TO_FOUNDATION, first + host_index))
            other = TWIN[child]
            for kind, card, target, detail in moves:
                if card == other and target == end_index and not (kind == _TABLEAU and detail == host_index):
                    extra.append((kind, card, host_index, first + detail))
        return extra

    # -------------------------------------------------------------- search

    def visited(self, position: Position) -> bool:
        """Seen before, or dominated by a position seen before; otherwise remember it.

        With a recycle allowed, a pointer p reaches p + k*draw, the end, 0 and every multiple of
        draw; whatever a reachable pointer reaches, p reaches too. So the same cards with a
        pointer of a seen one's residue and no smaller, a multiple of draw or the end need no
        search of their own. Without a recycle (draw-one before any real move) the exact
        pointer counts. The columns are taken merged (``merged``, see the class docstring), and
        the talon is left out: the cards neither home nor in the reserve nor in the columns are
        the talon's, in the order they started in.
        """
        reserve, found, columns, talon, pointer, progress = position
        can_recycle = self.free_recycle or progress
        if self.twins and can_recycle:
            columns = self.merged(columns)
        # No talon: the cards not home, in the reserve or the columns are the talon's, in their first order.
        cards: tuple[object, ...] = (reserve, found, tuple(sorted(columns)), can_recycle)
        if not can_recycle:
            cards = (*cards, pointer)  # only forward draws: keep the exact pointer
            pointer = 0
        lowest = self.seen.get(cards)
        if lowest is None:
            lowest = self.seen[cards] = [_NEVER] * self.draw
            self.searched_from = 0
        elif pointer % self.draw == 0 or pointer == len(talon) or lowest[pointer % self.draw] <= pointer:
            return True
        else:
            self.searched_from = lowest[pointer % self.draw]
        residue = pointer % self.draw
        lowest[residue] = min(lowest[residue], pointer)
        return False

    def enter(self, position: Position, path: list[Macro]) -> tuple[bool, Position | None, int]:
        """(won, the position to search from or None if seen, how many automatic moves were added)."""
        self.states += 1
        if self.states % self.budget.check_every == 0 and (
            (self.max_states is not None and self.states >= self.max_states) or self.budget.out_of_time()
        ):
            raise OutOfBudget()
        before = len(path)
        if self.auto_home:
            position = self.auto(position, path)
        added = len(path) - before
        found = position[1]
        if found[0] + found[1] + found[2] + found[3] == 52:
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
            path.append(move)
            won, child, child_added = self.enter(self.play(position, move), path)
            if won:
                return path
            if child is None:
                path.pop()
                continue
            moves = self.moves(child)
            if self.searched_from:
                moves = self.new_moves(child, moves, self.searched_from)
            stack.append((child, iter(moves), child_added))
        return None

    def run_native(self, start: Position) -> list[Macro] | None:
        """``run`` in C (``domain/_sound.c``), for the ``SOUND`` stage only: the same moves in the same
        order, the same table and budget checks (``out_of_time`` asked every ``check_every``
        positions), so the same answer (won with the same line, lost, or ``OutOfBudget``) after
        the same ``states``. The transposition table stays in C (``seen`` is left empty). Out of
        budget, the C search is kept: ``resume_native`` goes on with it."""
        if not self.sound or native.module is None:
            raise RuntimeError("the C search is built for the sound stage only, and only where domain._sound is")
        self._native = native.module.start(
            self.reserve,
            self.base,
            self.draw,
            self.free_recycle,
            self.any_run,
            self.returns,
            self.auto_home,
            self.auto_talon,
            self.twins,
            start,
            self.states,
        )
        return self.resume_native()

    def resume_native(self) -> list[Macro] | None:
        """Go on with the C search that ``run_native`` (or this) stopped out of budget, with the
        limits as they are now (``max_states``, the budget's clock): it makes the moves it would
        have made had it not stopped, so a search stopped and resumed answers what one search with
        the last limits answers, after the same ``states``, without searching anything twice."""
        if native.module is None or self._native is None:
            raise RuntimeError("no C search stopped out of budget to go on with")
        answer: tuple[int, int, list[Macro] | None] = native.module.resume(
            self._native,
            -1 if self.max_states is None else self.max_states,
            self.budget.check_every,
            self.budget.out_of_time,
        )
        status, self.states, line = answer
        if status == 2:
            raise OutOfBudget()
        self._native = None  # ended: its table is freed
        return line

    @property
    def resumable(self) -> bool:
        """Whether a C search stopped out of budget is kept for ``resume_native``."""
        return self._native is not None

    def new_moves(self, position: Position, moves: list[Macro], searched_from: int) -> list[Macro]:
        """The moves of cards searched before (``visited``) that the earlier searches did not make.

        Its cards were searched from pointers of every residue (at least the multiples of the draw
        and the end, which every pointer reaches after a recycle) and, of this pointer's residue,
        from ``searched_from`` (``_NEVER``: none). A talon move depends on the card's place in the
        talon alone, not on the pointer it is made from, and the talon is the same for the same
        cards; so a talon move to a place those pointers reach was made there already, and only
        the talon places of this residue below ``searched_from`` are new. Every other move is made
        (from this pointer, it can lead to more).
        """
        pointer, size, draw = position[4], len(position[3]), self.draw
        residue = pointer % draw
        return [
            move
            for move in moves
            if move[0] != _TALON
            or (
                (q := move[3] % TWIN_FIRST) % draw == residue and q < searched_from and q != size
            )
        ]


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


def twin_move(detail: int) -> Macro:
    """The twin move carried in a macro move's detail (``Search.twin_moves``)."""
    code = detail // TWIN_FIRST - 1
    child, source, target = code // 16, code // 4 % 4, code % 4
    return (_TABLEAU, child, target, source)


def plain(line: Iterable[Macro]) -> Iterator[Macro]:
    """The macro moves of a line with every twin move made a move of its own."""
    for kind, card, target, detail in line:
        if detail >= TWIN_FIRST:
            yield twin_move(detail)
        yield (kind, card, target, detail % TWIN_FIRST)


def _bump(found: tuple[int, int, int, int], suit: int, delta: int) -> tuple[int, int, int, int]:
    counts = list(found)
    counts[suit] += delta
    return (counts[0], counts[1], counts[2], counts[3])


def start_position(state: GameState) -> Position:
    talon = state.waste + tuple(reversed(state.stock))
    return (len(state.reserve), state.foundations, state.tableau, talon, len(state.waste), state.progress)


def to_commands(state: GameState, line: list[Macro]) -> Iterator[Command]:
    """The API moves of a macro line: draws (and recycles) until the card shows, then the move."""
    for kind, card, target, _ in plain(line):
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
