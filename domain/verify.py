"""Checking play against the rules: a move line to a win, and a stored log re-decided.

``line_wins`` replays a move line from its deal and says whether it wins, and if not how far it
got and the first refused move (pools, the daily deal and the solver's own lines use it).
A log passes when, from its deal, every move is legal and ``decide`` makes exactly the stored
events of it (type and data). Replaying with ``evolve`` alone would accept any event a hand
could write; this re-decides each one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .codec import event_from_data
from .commands import Abandon, Command, Draw, MoveCard, Recycle, Resign, Undo, UseSolverHint
from .errors import DomainError
from .events import (
    CardsMoved,
    Event,
    GameAbandoned,
    GameDealt,
    GameResigned,
    GameStalled,
    MoveUndone,
    SolverHintUsed,
    StockDrawn,
    WasteRecycled,
    event_type,
)
from .rules import ReplayReport, apply, replay_commands
from .state import GameState, Status, initial_state
from .view import event_data


@dataclass(frozen=True, slots=True)
class LineCheck:
    """A move line replayed from its deal: ``replay`` says how far it got (the state reached,
    the moves applied, the first refused one and why)."""

    replay: ReplayReport

    @property
    def won(self) -> bool:
        return self.replay.ok and self.replay.state.status is Status.WON

    @property
    def problem(self) -> str | None:
        """None when the line wins, else why not: the first refused move, or how the line ends."""
        if not self.replay.ok:
            return f"move {self.replay.failed_at} refused: {self.replay.reason}"
        if self.replay.state.status is not Status.WON:
            return f"the line ends {self.replay.state.status.value}, not won"
        return None


def line_wins(start: GameState, commands: Sequence[Command]) -> LineCheck:
    """Replay ``commands`` from ``start`` through the rules engine: does the line win, and if not,
    where does it first fail."""
    return LineCheck(replay_commands(start, commands))


class Unverified(Exception):
    """A stored log that the rules did not make; ``reason`` says where it parts from them."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def command_of(event: Event) -> Command:
    """The move whose decision starts with this event (``decide`` then checks it whole)."""
    if isinstance(event, StockDrawn):
        return Draw()
    if isinstance(event, (WasteRecycled, GameStalled)):
        return Recycle()
    if isinstance(event, CardsMoved):
        return MoveCard(event.cards[0], event.target)
    if isinstance(event, MoveUndone):
        return Undo()
    if isinstance(event, SolverHintUsed):
        return UseSolverHint()
    if isinstance(event, GameResigned):
        return Resign()
    if isinstance(event, GameAbandoned):
        return Abandon(event.idle_days)
    raise Unverified(f"a {event_type(event)} event does not start any move")


def redecide(log: Sequence[tuple[str, Mapping[str, Any]]]) -> GameState:
    """Re-decide a stored log ``[(type, data), ...]`` move by move from its deal; the end state.
    Raises ``Unverified`` at the first event the rules would not have made."""
    if not log:
        raise Unverified("the log is empty")
    try:
        events = [event_from_data(kind, data) for kind, data in log]
    except Exception as error:  # a hand-edited event may not even decode
        raise Unverified(f"an event does not decode ({type(error).__name__})") from None
    first = events[0]
    if not isinstance(first, GameDealt):
        raise Unverified("the log does not start with GameDealt")
    if (event_type(first), event_data(first)) != (log[0][0], dict(log[0][1])):
        raise Unverified("event 1 is not the deal it claims to be")
    state = initial_state(first)
    index = 1
    while index < len(events):
        try:
            # the events so far serve an undo that reaches below the state's undo window
            after, expected = apply(state, command_of(events[index]), events[:index])
        except DomainError as error:
            raise Unverified(f"event {index + 1}: {error.reason}") from None
        stored = [(kind, dict(data)) for kind, data in log[index : index + len(expected)]]
        if not expected or [(event_type(e), event_data(e)) for e in expected] != stored:
            raise Unverified(f"event {index + 1} is not what the rules make of that move")
        state = after
        index += len(expected)
    return state
