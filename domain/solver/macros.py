"""The vocabulary the solver's searches share: positions, macro moves, the stages, the card tables.

A position is compact: the reserve a count (its order is fixed), foundations four counts, columns
tuples of card ints, the talon (waste + stock in draw order) a tuple and a pointer; every waste
card that further draws (and recycles, where allowed) reach is one macro move (``talon.talon_positions``),
so the search never branches on single draws. A macro move may carry a twin move made first
(``TWIN_FIRST``, ``twin_move``; see ``twins``). ``start_position`` turns a game state into a
position, ``to_commands`` a line of macro moves into the API's commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..commands import Command, Draw, MoveCard, Recycle
from ..piles import FOUNDATION, TABLEAU
from ..rules import apply
from ..state import GameState

RANK = tuple(card % 13 for card in range(52))
SUIT = tuple(card // 13 for card in range(52))
OPPOSITE_SUITS = ((1, 2), (0, 3), (0, 3), (1, 2))  # suits of the other colour
# Each card's twin: the same rank and colour, the other suit (S <-> C, H <-> D). A card fits on a
# card exactly when it fits on that card's twin.
TWIN = tuple((3 - SUIT[card]) * 13 + RANK[card] for card in range(52))
# A macro move's detail above this carries a twin move made first (``Search.play``).
TWIN_FIRST = 64

# Where a macro move takes its card from.
FROM_RESERVE, FROM_TALON, FROM_TABLEAU, FROM_FOUNDATION = 0, 1, 2, 3
TO_FOUNDATION = -1


# The stages of a solve, in order (WIDE in classic only; SOUND_FIRST, the sound stage with a
# position limit, only with ``Budget.sound_first_states`` and the C search).
NARROW, NARROW_BEST, BEST, WIDE, SOUND = "narrow", "narrow-best", "best", "wide", "sound"
SOUND_FIRST = "sound-first"


# A position: (reserve count, foundations, columns, talon, pointer, progress)
Position = tuple[int, tuple[int, int, int, int], tuple[tuple[int, ...], ...], tuple[int, ...], int, bool]
# A macro move: (source kind, card, target column or TO_FOUNDATION, detail): detail is the
# talon position for talon moves, the column index for tableau moves, else 0.
Macro = tuple[int, int, int, int]


def twin_move(detail: int) -> Macro:
    """The twin move carried in a macro move's detail (``Search.twin_moves``)."""
    code = detail // TWIN_FIRST - 1
    child, source, target = code // 16, code // 4 % 4, code % 4
    return (FROM_TABLEAU, child, target, source)


def plain(line: Iterable[Macro]) -> Iterator[Macro]:
    """The macro moves of a line with every twin move made a move of its own."""
    for kind, card, target, detail in line:
        if detail >= TWIN_FIRST:
            yield twin_move(detail)
        yield (kind, card, target, detail % TWIN_FIRST)


def start_position(state: GameState) -> Position:
    talon = state.waste + tuple(reversed(state.stock))
    return (len(state.reserve), state.foundations, state.tableau, talon, len(state.waste), state.progress)


def to_commands(state: GameState, line: list[Macro]) -> Iterator[Command]:
    """The API moves of a macro line: draws (and recycles) until the card shows, then the move."""
    for kind, card, target, _ in plain(line):
        if kind == FROM_TALON:
            for _ in range(2 * 52):
                if state.waste and state.waste[-1] == card:
                    break
                command: Command = Draw() if state.stock else Recycle()
                state, _events = apply(state, command)
                yield command
        command = MoveCard(card, FOUNDATION if target == TO_FOUNDATION else TABLEAU[target])
        state, _events = apply(state, command)
        yield command
