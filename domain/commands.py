"""Commands: what a player asks for, imperative. ``decide`` turns one into events or refuses it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .cards import Card, code, parse_card
from .errors import InvalidRequest
from .piles import parse_target


@dataclass(frozen=True, slots=True)
class Draw:
    pass


@dataclass(frozen=True, slots=True)
class Recycle:
    pass


@dataclass(frozen=True, slots=True)
class MoveCard:
    card: Card
    to: str  # "foundation" or "tableau-1" .. "tableau-4"


@dataclass(frozen=True, slots=True)
class Undo:
    pass


@dataclass(frozen=True, slots=True)
class Resign:
    pass


@dataclass(frozen=True, slots=True)
class UseSolverHint:
    """Not a move: the player asked the solver for help, which marks the game assisted."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """Not a player's move: the service ends a game nobody has moved for ``idle_days`` days."""

    idle_days: int


Command = Draw | Recycle | MoveCard | Undo | Resign | UseSolverHint | Abandon

MOVE_TYPES = ("draw", "recycle", "move", "undo", "resign")
_SIMPLE: dict[str, Command] = {"draw": Draw(), "recycle": Recycle(), "undo": Undo(), "resign": Resign()}


def parse_command(move: Mapping[str, object]) -> Command:
    """A command from the API's move form, e.g. ``{"type": "move", "card": "7H", "to": "tableau-3"}``."""
    kind = move.get("type")
    if kind == "move":
        if "card" not in move:
            raise InvalidRequest("a move needs 'card', the code of the card to move, e.g. '7H'")
        if "to" not in move:
            raise InvalidRequest("a move needs 'to': 'foundation' or 'tableau-1' .. 'tableau-4'")
        extra = set(move) - {"type", "card", "to"}
        if extra:
            raise InvalidRequest(f"a move takes only 'type', 'card' and 'to', not {', '.join(sorted(map(str, extra)))}")
        return MoveCard(parse_card(move["card"]), parse_target(move["to"]))
    if isinstance(kind, str) and kind in _SIMPLE:
        extra = set(move) - {"type"}
        if extra:
            raise InvalidRequest(f"a {kind} takes no fields besides 'type', not {', '.join(sorted(map(str, extra)))}")
        return _SIMPLE[kind]
    shown = repr(kind) if not isinstance(kind, str) or len(kind) <= 20 else repr(kind[:20] + "...")
    raise InvalidRequest(f"'type' must be one of {', '.join(MOVE_TYPES)}, not {shown}")


def command_to_api(command: Command) -> dict[str, str]:
    if isinstance(command, MoveCard):
        return {"type": "move", "card": code(command.card), "to": command.to}
    if isinstance(command, Draw):
        return {"type": "draw"}
    if isinstance(command, Recycle):
        return {"type": "recycle"}
    if isinstance(command, Undo):
        return {"type": "undo"}
    if isinstance(command, UseSolverHint):
        return {"type": "solver-hint"}
    if isinstance(command, Abandon):
        return {"type": "abandon"}
    return {"type": "resign"}
