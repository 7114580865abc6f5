"""The undo stack: the top of it as one compact string (the *window*), the rest in the event log.

A game's state keeps only the last ``WINDOW`` moves that can be taken back, so its snapshot stays
the same size however long the game runs; ``GameState.undo_depth`` counts them all (undo depth is
unlimited). A move pushes its entry and drops the oldest one past ``WINDOW``; an undo pops the
top. When an undo finds the window empty while older moves remain, ``decide`` raises
``UndoHistoryNeeded`` and the caller refills the window from the game's events
(``rules.with_undo_history``); ``rules.replay`` does the same at the same moment, so a replay
rebuilds every state exactly, window included.

Each entry is one move that can be taken back: the draw-one progress flag before it ('0' or '1')
and its events, ',' between events and ';' between entries. Only the top entry is ever decoded.
Events: ``D<codes>`` stock drawn, ``R<count>`` waste recycled, ``M<from><to><codes>`` cards
moved, ``F<column><code>`` reserve refilled; piles are ``r`` reserve, ``w`` waste, ``f``
foundation, ``1``..``4`` tableau.
"""

from __future__ import annotations

from .cards import CODES, Card
from .events import CardsMoved, Event, MoveUndone, ReserveRefilled, StockDrawn, WasteRecycled
from .piles import FOUNDATION, RESERVE, TABLEAU, WASTE

EMPTY = ""
WINDOW = 64
"""Entries kept in the state (about 10 bytes each); deeper undos read the event log."""

_PILE_TO_CHAR = {RESERVE: "r", WASTE: "w", FOUNDATION: "f", **{name: str(i + 1) for i, name in enumerate(TABLEAU)}}
_CHAR_TO_PILE = {char: pile for pile, char in _PILE_TO_CHAR.items()}
_BY_CODE = {code: card for card, code in enumerate(CODES)}


class UndoHistoryNeeded(Exception):
    """An undo reaches below the moves the state keeps: refill them from the game's events
    (``rules.with_undo_history``) and decide again. Not a refusal: the undo is legal."""

    def __init__(self, version: int) -> None:
        super().__init__(f"the undo at version {version} needs the game's older moves from its events")
        self.version = version


def _cards(text: str) -> tuple[Card, ...]:
    return tuple(_BY_CODE[text[i : i + 2]] for i in range(0, len(text), 2))


def _encode_event(event: Event) -> str:
    if isinstance(event, CardsMoved):
        return "M" + _PILE_TO_CHAR[event.source] + _PILE_TO_CHAR[event.target] + "".join(CODES[c] for c in event.cards)
    if isinstance(event, StockDrawn):
        return "D" + "".join(CODES[c] for c in event.cards)
    if isinstance(event, ReserveRefilled):
        return "F" + str(event.column + 1) + CODES[event.card]
    if isinstance(event, WasteRecycled):
        return "R" + str(event.count)
    raise TypeError(f"{type(event).__name__} is not part of an undoable move")


def _decode_event(text: str) -> Event:
    kind, rest = text[0], text[1:]
    if kind == "M":
        return CardsMoved(_cards(rest[2:]), _CHAR_TO_PILE[rest[0]], _CHAR_TO_PILE[rest[1]])
    if kind == "D":
        return StockDrawn(_cards(rest))
    if kind == "F":
        return ReserveRefilled(_BY_CODE[rest[1:]], int(rest[0]) - 1)
    return WasteRecycled(int(rest))


def push(stack: str, progress: bool, event: Event) -> str:
    """A new entry on top for the move that ``event`` starts; past ``WINDOW`` entries the oldest goes."""
    entry = ("1" if progress else "0") + _encode_event(event)
    if stack and stack.count(";") + 1 >= WINDOW:  # full: the oldest entry goes
        cut = stack.find(";")
        stack = stack[cut + 1 :] if cut >= 0 else EMPTY
    return stack + ";" + entry if stack else entry


def join(stack: str, event: Event) -> str:
    """Add an automatic event (the reserve refill) to the move on top."""
    return stack + "," + _encode_event(event)


def top(stack: str) -> tuple[bool, tuple[Event, ...]]:
    """The top entry: the progress flag before that move and its events."""
    entry = stack[stack.rfind(";") + 1 :]
    return entry[0] == "1", tuple(_decode_event(text) for text in entry[1:].split(","))


def pop(stack: str) -> str:
    cut = stack.rfind(";")
    return stack[:cut] if cut >= 0 else EMPTY


def depth(stack: str) -> int:
    """Entries in ``stack`` (a window holds at most ``WINDOW``)."""
    return 0 if not stack else stack.count(";") + 1


def window(entries: list[str]) -> str:
    """The window over a whole stack given as its entries, oldest first."""
    return ";".join(entries[-WINDOW:])


def track(entries: list[str], event: Event, after: str) -> None:
    """Keep ``entries`` (the whole stack, oldest first) in step with a window: ``after`` is the
    window once ``event`` was applied, so its top entry is the one ``event`` pushed or joined."""
    if isinstance(event, CardsMoved | StockDrawn | WasteRecycled):
        entries.append(after[after.rfind(";") + 1 :])
    elif isinstance(event, ReserveRefilled):
        entries[-1] = after[after.rfind(";") + 1 :]
    elif isinstance(event, MoveUndone):
        entries.pop()
