"""The rules of the solver's searches on positions: each stage's shortcuts, safe cards, playing a move.

``PositionRules`` is the base of ``search.Search``: what the ruleset and the stage allow (split
runs, foundation returns, which cards go home automatically), which talon positions draws reach
(``talon.talon_positions``, cached), and playing a macro move (``play``) or the safe cards home
(``auto``) on a position.
"""

from __future__ import annotations

from ..rulesets import RecyclePolicy, TableauMoves
from ..state import GameState
from .macros import (
    BEST,
    FROM_FOUNDATION,
    FROM_RESERVE,
    FROM_TABLEAU,
    FROM_TALON,
    NARROW,
    NARROW_BEST,
    OPPOSITE_SUITS,
    RANK,
    SOUND,
    SUIT,
    TO_FOUNDATION,
    TWIN_FIRST,
    WIDE,
    Macro,
    Position,
    twin_move,
)
from .talon import talon_positions


class PositionRules:
    """A stage's rules on positions (see ``search.Search`` for what each stage may cut)."""

    def __init__(self, state: GameState, stage: str) -> None:
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
        self.rel = tuple((RANK[card] - self.base) % 13 for card in range(52))
        self._reachable: dict[tuple[int, int, bool], tuple[int, ...]] = {}

    def safe(self, card: int, found: tuple[int, int, int, int]) -> bool:
        """Nothing can still be built on ``card`` in the tableau: the cards that would go on it are home."""
        relative = (RANK[card] - self.base) % 13
        need = relative if relative else 13
        first, second = OPPOSITE_SUITS[SUIT[card]]
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

    def play(self, position: Position, move: Macro) -> Position:
        kind, card, target, detail = move
        if detail >= TWIN_FIRST:  # a twin move first (``twin_moves``), then the move itself
            position = self.play(position, twin_move(detail))
            detail %= TWIN_FIRST
        reserve, found, columns, talon, pointer, _progress = position
        moved: tuple[int, ...] = (card,)
        column_list = list(columns)
        if kind == FROM_RESERVE:
            reserve -= 1
        elif kind == FROM_TALON:
            talon = talon[: detail - 1] + talon[detail:]
            pointer = detail - 1
        elif kind == FROM_FOUNDATION:
            found = _bump(found, SUIT[card], -1)
        else:
            source = column_list[detail]
            index = source.index(card)
            moved = source[index:]
            column_list[detail] = source[:index]
            if index == 0 and reserve:
                column_list[detail] = (self.reserve[reserve - 1],)
                reserve -= 1
        if target == TO_FOUNDATION:
            found = _bump(found, SUIT[card], 1)
        else:
            column_list[target] = column_list[target] + moved
        return reserve, found, tuple(column_list), talon, pointer, True

    def auto(self, position: Position, path: list[Macro]) -> Position:
        """Play every safe card to its foundation (see ``search.Search`` for which)."""
        if not self.auto_home:
            return position
        rel, safe, reserve_cards, auto_talon = self.rel, self.safe, self.reserve, self.auto_talon
        while True:
            reserve, found, columns, talon, pointer, progress = position
            move: Macro | None = None
            card = reserve_cards[reserve - 1] if reserve else -1
            if reserve and found[card // 13] == rel[card] and safe(card, found):
                move = (FROM_RESERVE, card, TO_FOUNDATION, 0)
            else:
                for index, column in enumerate(columns):
                    if column and found[column[-1] // 13] == rel[column[-1]] and safe(column[-1], found):
                        move = (FROM_TABLEAU, column[-1], TO_FOUNDATION, index)
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
                    return (FROM_TALON, card, TO_FOUNDATION, q)
            return None
        if (
            pointer
            and found[talon[pointer - 1] // 13] == self.rel[talon[pointer - 1]]
            and self.safe(talon[pointer - 1], found)
        ):
            return (FROM_TALON, talon[pointer - 1], TO_FOUNDATION, pointer)
        return None


def _bump(found: tuple[int, int, int, int], suit: int, delta: int) -> tuple[int, int, int, int]:
    counts = list(found)
    counts[suit] += delta
    return (counts[0], counts[1], counts[2], counts[3])
