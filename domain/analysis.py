"""Game analysis: a verdict for every position of a finished game, and the move that lost it.

A game's positions are the deal (named 0) and the table after each move, undos included, each
named by the game's version after its move (a solver hint changes no table and is no position).
The service's end of a game nobody moved (``GameAbandoned``) is a position of its own, the last,
as a resignation is: the table the player left keeps a verdict of its own. Each position gets a
verdict about lines of moves without undo:

- ``won``: a line from it wins; the line replays through the rules (``Analysis.line``);
- ``lost``: no line wins. The solver proved it; or the position is reached by moves from one
  proven lost (a win from it would be a win from that one); or it is the table of a proven-lost
  position again (after an undo); or the game is over there (resigned, stalled or abandoned);
- ``unknown``: the solver reached its time there (or the job's budget was spent before the
  solver was asked: ``give_up``), and nothing else settles it.

``Analysis`` decides which position the solver takes next and reuses every answer along the game:
a won line from position i+1, with the game's move from i to i+1 first, wins from i (when that
move is not an undo); a loss at i holds for every position the game's moves reach from it; a table
seen again has the same verdict. Along a stretch of moves the won positions therefore come first
and the lost ones last, so the solver is asked about the ends of an unsettled stretch, then about
its middle, as in a binary search. The solving itself happens elsewhere (``record`` takes its
answers), so the service can run it in worker processes, keep the answers and resume.

The turning point is the move from the last won position to the next one, when that one is lost:
a move that threw a win away, or the resignation, stall or abandonment of a game that could still
be won.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .commands import Command, Undo
from .events import (
    CardsMoved,
    Event,
    GameAbandoned,
    GameDealt,
    GameResigned,
    GameStalled,
    MoveUndone,
    StockDrawn,
    WasteRecycled,
)
from .rules import evolve, with_undo_history
from .rulesets import RecyclePolicy
from .state import GameState, Status, initial_state
from .verify import command_of, line_wins

WON, LOST, UNKNOWN = "won", "lost", "unknown"
# How a verdict was reached
SOLVER = "solver"  # the solver's answer for this position
END = "end"  # the game is over here: won, or resigned, stalled or abandoned (lost)
PREFIX = "prefix"  # won: the next position's line, with the game's move to it first
FOLLOWS = "follows"  # lost: the game's move here came from a lost position
REPEAT = "repeat"  # the same table as the position ``source``
BUDGET = "budget"  # unknown: the job's solver time was spent before the solver was asked

# Where an answer came from (``Analysis.record``)
FROM_SOLVER = "solver"  # a search made for this job
FROM_CACHE = "cache"  # a search of an earlier job on the same table (``position_key``)
FROM_BUDGET = "budget"  # no search: the job's budget was spent (always ``unknown``)
POSITION_KEY_VERSION = b"canfield-position-v1"
"""Part of every ``position_key``: a change to the rules or to what the solver proves changes it,
and every verdict kept under the old keys stops matching."""

STARTS_A_MOVE = (StockDrawn, WasteRecycled, GameStalled, CardsMoved, MoveUndone, GameResigned, GameAbandoned)
"""The events that start a move: a game has one position more than it has of them (the deal).
``GameAbandoned`` is the service's, not the player's, but it ends the game as a resignation does:
a position of its own, never part of the player's last move."""


@dataclass(frozen=True, slots=True)
class Position:
    version: int  # 0 for the deal, else the game's version after the move
    state: GameState
    move: Command | None  # the move that made it from the position before (None: the deal)

    @property
    def forward(self) -> bool:
        """Whether the move here is a rules move (not an undo): every line from here, with it
        first, is a line from the position before."""
        return self.move is not None and not isinstance(self.move, Undo)


@dataclass(frozen=True, slots=True)
class Answer:
    """The solver's answer for one position: ``won`` with its line, ``lost`` (proven) or ``unknown``."""

    result: str
    line: tuple[Command, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    result: str  # WON, LOST or UNKNOWN
    how: str  # SOLVER, END, PREFIX, FOLLOWS or REPEAT
    source: int | None = None  # PREFIX: the next position; FOLLOWS: the one before; REPEAT: the one repeated
    line: tuple[Command, ...] = ()  # SOLVER and won: the solver's line


@dataclass(frozen=True, slots=True)
class TurningPoint:
    before: int  # the version of the last won position
    after: int  # the version of the lost position the move made
    move: Command
    line: tuple[Command, ...]  # a winning line from ``before``


class Contradiction(ValueError):
    """Two answers that cannot both be true (a won position reached from a proven-lost one)."""


def positions(events: Sequence[Event]) -> list[Position]:
    """The positions of a game from its events: the deal, then one after each move."""
    if not events or not isinstance(events[0], GameDealt):
        raise ValueError("a game's events start with GameDealt")
    state = initial_state(events[0])
    found = [Position(0, state, None)]
    for index in range(1, len(events)):
        event = events[index]
        if isinstance(event, MoveUndone) and not state.undo and state.undo_depth:
            state = with_undo_history(state, events[:index])  # an undo below the window, as ``replay`` does
        state = evolve(state, event)
        if isinstance(event, STARTS_A_MOVE):
            found.append(Position(state.version, state, command_of(event)))
        elif len(found) > 1 and found[-1].version == state.version - 1:  # part of the move: a refill, the win
            found[-1] = replace(found[-1], version=state.version, state=state)
    return found


def table_key(state: GameState) -> tuple[object, ...]:
    """What the verdict of a position depends on: its cards, its status and, where a recycle needs
    progress (draw-one), whether the pass has made any."""
    progress = state.progress if state.ruleset.recycle is RecyclePolicy.AFTER_PROGRESS else False
    return (state.reserve, state.stock, state.waste, state.foundations, state.tableau, state.status, progress)


def position_key(state: GameState) -> str:
    """A canonical key of what the solver's verdict on a position depends on, across games: the
    ruleset and its version, the base rank and ``table_key`` (the cards where they lie, the status,
    draw-one's progress). Equal keys, equal verdicts; the tableau columns are not reordered, because
    a won line names them. A SHA-256 in hex."""
    progress = state.progress if state.ruleset.recycle is RecyclePolicy.AFTER_PROGRESS else False
    text = "|".join((
        state.ruleset.key, str(state.base_rank), _cards(state.reserve), _cards(state.stock), _cards(state.waste),
        ",".join(map(str, state.foundations)), "/".join(_cards(column) for column in state.tableau),
        str(state.status), "1" if progress else "0",
    ))
    return hashlib.sha256(POSITION_KEY_VERSION + b"|" + text.encode()).hexdigest()


def _cards(cards: tuple[int, ...]) -> str:
    return ".".join(map(str, cards))


class Analysis:
    """The verdicts of a game's positions so far; ``next_position`` says which one the solver takes
    next (None: every position is settled), ``record`` takes its answer."""

    def __init__(self, found: Sequence[Position]) -> None:
        self.positions = list(found)
        self.verdicts: list[Verdict | None] = [None] * len(self.positions)
        self.solved = 0  # answers of searches made for this job
        self.cached = 0  # answers taken from searches of earlier jobs
        self.given_up = 0  # positions left unknown because the job's budget was spent
        self._keys = [table_key(position.state) for position in self.positions]
        self._same: dict[tuple[object, ...], list[int]] = {}
        for index, key in enumerate(self._keys):
            self._same.setdefault(key, []).append(index)
        for index, position in enumerate(self.positions):
            if not position.state.playing:
                self._settle(index, Verdict(WON if position.state.status is Status.WON else LOST, END))

    @property
    def settled(self) -> int:
        return sum(verdict is not None for verdict in self.verdicts)

    @property
    def done(self) -> bool:
        return all(verdict is not None for verdict in self.verdicts)

    def next_position(self) -> int | None:
        """The position to solve next: in the last unsettled stretch of moves, its last position
        unless the move after it is proven to lose (if it is won, so is the whole stretch), else its
        first unless the one before it is won (if it is lost, so is the whole stretch), else its
        middle: the boundary between won and lost lies inside, found as by binary search."""
        run = self._last_run()
        if run is None:
            return None
        first, last = run
        if not self._lost_after(last):
            return last
        if not self._won_before(first):
            return first
        return (first + last) // 2

    def _last_run(self) -> tuple[int, int] | None:
        """The last stretch of unsettled positions joined by rules moves."""
        last = next((i for i in range(len(self.verdicts) - 1, -1, -1) if self.verdicts[i] is None), None)
        if last is None:
            return None
        first = last
        while first > 0 and self.positions[first].forward and self.verdicts[first - 1] is None:
            first -= 1
        return first, last

    def _lost_after(self, index: int) -> bool:
        """Whether the game's rules move from ``index`` led to a position proven lost (a game that
        ends there, resigned, stalled or abandoned, says nothing about the position before it)."""
        after = index + 1
        if after >= len(self.positions) or not self.positions[after].forward:
            return False
        verdict = self.verdicts[after]
        return verdict is not None and verdict.result == LOST and verdict.how != END

    def _won_before(self, index: int) -> bool:
        """Whether ``index`` was reached by a rules move from a won position."""
        verdict = self.verdicts[index - 1] if index > 0 and self.positions[index].forward else None
        return verdict is not None and verdict.result == WON

    def record(self, index: int, answer: Answer, source: str = FROM_SOLVER) -> None:
        """The solver's answer for position ``index``; a won line must replay to a win from it.
        ``source``: a search of this job's (``FROM_SOLVER``), an earlier job's (``FROM_CACHE``), or
        none because the budget was spent (``FROM_BUDGET``, which must be ``unknown``)."""
        position = self.positions[index]
        if source == FROM_BUDGET:
            if answer.result != UNKNOWN:
                raise ValueError(f"a position given up for the budget is unknown, not {answer.result!r}")
            self.given_up += 1
            self._settle(index, Verdict(UNKNOWN, BUDGET))
            return
        if answer.result == WON:
            check = line_wins(position.state, answer.line)
            if not check.won:
                raise Contradiction(f"the line for position {position.version} does not win: {check.problem}")
            verdict = Verdict(WON, SOLVER, line=answer.line)
        elif answer.result in (LOST, UNKNOWN):
            verdict = Verdict(answer.result, SOLVER)
        else:
            raise ValueError(f"not a solver result: {answer.result!r}")
        if source == FROM_CACHE:
            self.cached += 1
        elif source == FROM_SOLVER:
            self.solved += 1
        else:
            raise ValueError(f"not a source of answers: {source!r}")
        self._settle(index, verdict)

    def give_up(self) -> list[int]:
        """The job's budget is spent: every position still unsettled is ``unknown`` (its table's
        repeats with it), and nothing else is searched. The positions given up, in the order
        ``next_position`` named them."""
        given: list[int] = []
        while (index := self.next_position()) is not None:
            self.record(index, Answer(UNKNOWN), FROM_BUDGET)
            given.append(index)
        return given

    def _settle(self, index: int, verdict: Verdict) -> None:
        """Give ``index`` its verdict, then every position it settles: won backwards along rules
        moves, lost forwards, and both (and unknown) to the positions with the same table."""
        work = [(index, verdict)]
        while work:
            at, given = work.pop()
            current = self.verdicts[at]
            if current is not None and (current.result != UNKNOWN or given.result == UNKNOWN):
                if UNKNOWN not in (current.result, given.result) and current.result != given.result:
                    raise Contradiction(f"position {self.positions[at].version} is both {current.result} and "
                                        f"{given.result}")
                continue
            self.verdicts[at] = given
            if given.result == WON and self.positions[at].forward:
                work.append((at - 1, Verdict(WON, PREFIX, at)))
            if given.result == LOST and at + 1 < len(self.positions) and self.positions[at + 1].forward:
                work.append((at + 1, Verdict(LOST, FOLLOWS, at)))
            work += [(other, Verdict(given.result, REPEAT, at)) for other in self._same[self._keys[at]] if other != at]

    def line(self, index: int) -> tuple[Command, ...]:
        """A winning line from won position ``index``: the game's own moves while its verdict came
        from the next position, then the solver's line where it ends."""
        moves: list[Command] = []
        while True:
            verdict = self.verdicts[index]
            if verdict is None or verdict.result != WON:
                raise ValueError(f"position {self.positions[index].version} is not won")
            if verdict.how == PREFIX:
                assert verdict.source is not None
                index = verdict.source
                move = self.positions[index].move
                assert move is not None  # a prefix comes from a position with a rules move
                moves.append(move)
            elif verdict.how == REPEAT:
                assert verdict.source is not None
                index = verdict.source
            else:
                return (*moves, *verdict.line)

    def moves_to_win(self) -> list[int | None]:
        """The length of each won position's line (``line``), None for the others."""
        lengths: list[int | None] = [None] * len(self.positions)
        for start, verdict in enumerate(self.verdicts):
            if verdict is None or verdict.result != WON or lengths[start] is not None:
                continue
            path: list[tuple[int, Verdict]] = []
            index = start
            while lengths[index] is None:
                found = self.verdicts[index]
                assert found is not None
                path.append((index, found))
                if found.how in (PREFIX, REPEAT):
                    assert found.source is not None
                    index = found.source
                else:
                    lengths[index] = len(found.line)
                    break
            total = lengths[index] or 0
            for at, found in reversed(path):
                total += 1 if found.how == PREFIX else 0
                lengths[at] = total
        return lengths

    def turning_point(self) -> TurningPoint | None:
        """The move from the last won position to a lost one (None: the game was won, no position
        is won, or the one after the last won position is not proven lost)."""
        won = [i for i, verdict in enumerate(self.verdicts) if verdict is not None and verdict.result == WON]
        if not won or won[-1] + 1 >= len(self.positions):
            return None
        before, after = won[-1], won[-1] + 1
        verdict = self.verdicts[after]
        move = self.positions[after].move
        if verdict is None or verdict.result != LOST or move is None:
            return None
        return TurningPoint(self.positions[before].version, self.positions[after].version, move, self.line(before))
