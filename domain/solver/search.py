"""The solver's depth-first search (``Search``) over macro moves, with a transposition table.

Positions and macro moves are ``macros``'; ``Search`` builds on ``position_rules`` (each stage's
rules, playing a move), ``twins`` (twin merging) and ``moves`` (the move generator), and adds the
transposition table (``visited``) and the search itself (``run``). The ``SOUND`` stage's search
also exists in C (``native``): ``Search.run_native`` makes exactly the moves of ``Search.run`` in
the same order. Cutting detours out of a line found is ``shorten``'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..state import GameState
from . import native
from .budget import Budget, OutOfBudget
from .macros import FROM_TALON, TWIN_FIRST, Macro, Position
from .moves import MoveGeneration

_NEVER = 1 << 30


class Search(MoveGeneration):
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
        super().__init__(state, stage)
        self.budget = budget
        self.max_states = max_states
        self.states = 0
        self.seen: dict[tuple[object, ...], list[int]] = {}
        # Set by ``visited`` for a position it lets through: 0 if its cards are new, else the lowest
        # pointer of its residue they were searched from before (``_NEVER``: none of that residue).
        self.searched_from = 0
        self._native: object | None = None  # a C search stopped out of budget (``resume_native``)

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
            if move[0] != FROM_TALON
            or (
                (q := move[3] % TWIN_FIRST) % draw == residue and q < searched_from and q != size
            )
        ]
