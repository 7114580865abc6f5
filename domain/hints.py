"""Heuristic hints: the legal moves ranked by usefulness, from visible information only."""

from __future__ import annotations

from dataclasses import dataclass

from .cards import SUIT_NAMES, code, rank_after, rank_of, suit_of
from .commands import Command, Draw, MoveCard, Recycle, Resign, Undo
from .piles import COLUMN_OF, FOUNDATION, RESERVE, WASTE
from .rules import _sources, legal_moves
from .rulesets import RecyclePolicy
from .state import GameState


@dataclass(frozen=True, slots=True)
class Hint:
    move: Command
    reason: str
    score: int


def hints(state: GameState) -> list[Hint]:
    """Every legal move but undo and resign, most useful first (ties keep the generator's order)."""
    found = [_rate(state, move) for move in legal_moves(state) if not isinstance(move, Undo | Resign)]
    return sorted(found, key=lambda hint: -hint.score)


def _rate(state: GameState, move: Command) -> Hint:
    if isinstance(move, Draw):
        count = min(state.ruleset.draw_count, len(state.stock))
        return Hint(move, f"draw {count} from the stock for new cards", 30)
    if isinstance(move, Recycle):
        if state.ruleset.recycle is RecyclePolicy.AFTER_PROGRESS and not state.progress:
            return Hint(move, "ends the game as stalled: no card has moved since the last recycle", -100)
        return Hint(move, "turn the waste over to go through the stock again", 20)
    assert isinstance(move, MoveCard)
    source = next(s for s in _sources(state) if s.card == move.card)
    card = code(move.card)
    column = COLUMN_OF.get(source.pile)
    empties = column is not None and len(state.tableau[column]) == len(source.run)
    if move.to == FOUNDATION:
        suit = SUIT_NAMES[suit_of(move.card)]
        if source.pile == RESERVE:
            reason = f"play {card} from the reserve to the {suit} foundation and turn up the next reserve card"
            return Hint(move, reason, 100)
        if empties and state.reserve:
            return Hint(move, f"play {card} to the {suit} foundation; the reserve refills {source.pile}", 95)
        return Hint(move, f"build the {suit} foundation with {card}", 90)
    destination = state.tableau[COLUMN_OF[move.to]]
    if source.pile == RESERVE:
        return Hint(move, f"move {card} off the reserve onto {move.to} and turn up the next reserve card", 80)
    if source.pile == FOUNDATION:
        return Hint(move, f"bring {card} back from its foundation to {move.to}", 5)
    if source.pile == WASTE:
        return Hint(move, f"play {card} from the waste onto {move.to}", 60)
    if empties and not destination:
        return Hint(move, f"moves all of {source.pile} to the empty {move.to}: nothing changes", -50)
    if empties:
        if state.reserve:
            return Hint(move, f"empty {source.pile} so the reserve refills it", 70)
        return Hint(move, f"empty {source.pile}, which then takes any card or run", 50)
    assert column is not None
    uncovered = state.tableau[column][-len(source.run) - 1]
    if state.foundations[suit_of(uncovered)] < 13 and _next_on_foundation(state, uncovered):
        return Hint(move, f"uncover {code(uncovered)}, which can go to its foundation", 75)
    return Hint(move, f"move {card} onto {move.to}", 10)


def _next_on_foundation(state: GameState, card: int) -> bool:
    count = state.foundations[suit_of(card)]
    return rank_of(card) == rank_after(state.base_rank, count)
