"""Seed 000's four prepared lessons: fixed decks arranged so that the lesson's point comes up in
the first moves, each with a goal in words and a goal the rules engine checks.

A lesson game is dealt ``lesson_deal(id)`` (the deal source ``{"source": "lesson", "lesson": id}``,
which ``initial_state`` reads into ``GameState.lesson``). ``rules.decide`` asks ``goal_reached`` after
every move of a lesson game whose goal is not yet reached, and adds a ``LessonCompleted`` event to
the move that reaches it, so a replay rebuilds ``lesson_done`` like any other fact. Once reached, a
goal stays reached (undoing the move that reached it does not take the lesson back).

The decks: the cards a lesson is about are placed by hand (``Placed``: deal-order position ->
code, see API.md's deck layout); every other position takes the remaining cards in the order of
the documented shuffle of seed 0, so the rest of the table looks like an ordinary deal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from .cards import Card, parse_card, rank_of
from .deal import STOCK_SLICE, shuffled_deck
from .events import Event, GameDealt, ReserveRefilled, WasteRecycled
from .rulesets import Ruleset, get_ruleset
from .state import GameState

ACE, KING = 0, 12
STOCK_SIZE = len(range(52)[STOCK_SLICE])
FILLER_SEED = 0

Goal = Callable[[GameState, Sequence[Event], GameState], bool]
"""Whether a move reached the goal: the state before it, its events, the state after them."""


@dataclass(frozen=True, slots=True)
class Lesson:
    id: str
    title: str
    teaches: str  # what the lesson is about, in a sentence or two
    goal: str  # the goal in words
    deck: tuple[Card, ...]  # deal order
    reached: Goal
    ruleset_id: str = "classic"

    @property
    def ruleset(self) -> Ruleset:
        return get_ruleset(self.ruleset_id)


def _arranged(placed: Mapping[int, str]) -> tuple[Card, ...]:
    """52 cards in deal order: ``placed`` (position -> code) by hand, the rest in seed 0's order."""
    fixed = {position: parse_card(text) for position, text in placed.items()}
    assert len(set(fixed.values())) == len(fixed), "a card placed twice"
    rest = iter(card for card in shuffled_deck(FILLER_SEED) if card not in set(fixed.values()))
    return tuple(fixed[position] if position in fixed else next(rest) for position in range(52))


# Deal-order positions (API.md): 0..12 reserve bottom to top, 13 the foundation card,
# 14..17 tableau-1..4, 18.. the stock in draw order (a draw of three turns up 18, 19, 20).
RESERVE_TOP, BASE, T1, T2, T3, T4, FIRST_DRAW_TOP = 12, 13, 14, 15, 16, 17, 20


def _wrapped_foundation(state: GameState) -> bool:
    """A foundation has gone past its king to the ace (it holds more cards than base..K)."""
    return any(count > 13 - state.base_rank for count in state.foundations)


def _king_on_ace(state: GameState) -> bool:
    """A tableau column with a king lying on an ace."""
    return any(
        rank_of(lower) == ACE and rank_of(upper) == KING
        for column in state.tableau
        for lower, upper in pairwise(column)
    )


def _base_rank_goal(before: GameState, events: Sequence[Event], after: GameState) -> bool:
    return _wrapped_foundation(after)


def _wrapping_goal(before: GameState, events: Sequence[Event], after: GameState) -> bool:
    return _wrapped_foundation(after) and _king_on_ace(after)


def _refill_goal(before: GameState, events: Sequence[Event], after: GameState) -> bool:
    return any(isinstance(event, ReserveRefilled) for event in events)


def _stock_goal(before: GameState, events: Sequence[Event], after: GameState) -> bool:
    """A recycle after a card of the stock has been played from the waste (the talon is short)."""
    return any(isinstance(event, WasteRecycled) for event in events) and len(after.stock) < STOCK_SIZE


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        id="base-rank",
        title="A different start: the foundation base rank",
        teaches=(
            "The first foundation card sets the base rank for all four foundations: here a queen. Every "
            "foundation starts with a queen and builds up in suit through the king to the ace, then 2 to jack."
        ),
        goal="Build spades past the king: play KS, then AS, onto the QS foundation.",
        deck=_arranged({BASE: "QS", T1: "KS", T2: "5H", T3: "AS", T4: "9C", RESERVE_TOP: "QH"}),
        reached=_base_rank_goal,
    ),
    Lesson(
        id="wrapping",
        title="Wrapping ranks: king on ace, ace on king",
        teaches=(
            "Ranks wrap around. In the tableau a king may go on an ace of the other colour; on a foundation "
            "the ace follows the king of its suit."
        ),
        goal="Put KD on AC in the tableau, and AH on the KH foundation.",
        deck=_arranged({BASE: "KH", T1: "AC", T2: "KD", T3: "AH", T4: "7S"}),
        reached=_wrapping_goal,
    ),
    Lesson(
        id="reserve-refill",
        title="Reserve refills: no empty column while the reserve lasts",
        teaches=(
            "When a move leaves a tableau column empty while the reserve has cards, the reserve's top card fills "
            "it at once and the next reserve card turns face up. Playing the reserve top elsewhere is allowed too, "
            "but only an emptied column is refilled."
        ),
        goal="Empty a tableau column (send 7S to the foundation) and watch the reserve's top card fill it.",
        deck=_arranged({BASE: "5S", RESERVE_TOP: "6S", T1: "7S", T2: "9H", T3: "2D", T4: "JC"}),
        reached=_refill_goal,
    ),
    Lesson(
        id="draw-three-stock",
        title="The draw-three stock: draw, play the top, recycle",
        teaches=(
            "A draw turns up to three stock cards onto the waste; only the waste top plays. When the stock is "
            "empty, recycle turns the waste back into the stock in the same order, without shuffling, as often "
            "as you like: the cards you played are missing from the next pass, so other cards come up."
        ),
        goal="Play a card from the waste (5C after the first draw), draw through the stock, then recycle the waste.",
        deck=_arranged({BASE: "4C", FIRST_DRAW_TOP: "5C", T1: "QD", T2: "8S", T3: "3H", T4: "TD"}),
        reached=_stock_goal,
    ),
)
BY_ID: dict[str, Lesson] = {lesson.id: lesson for lesson in LESSONS}
SOURCE = "lesson"


def lesson_deal(lesson: Lesson) -> GameDealt:
    """The first event of a game of ``lesson``."""
    ruleset = lesson.ruleset
    return GameDealt(ruleset.id, ruleset.version, lesson.deck, {"source": SOURCE, "lesson": lesson.id})


def goal_reached(before: GameState, events: Sequence[Event], after: GameState) -> bool:
    """Whether this move of a lesson game reached its lesson's goal for the first time."""
    lesson = BY_ID.get(before.lesson)
    return lesson is not None and not before.lesson_done and lesson.reached(before, events, after)
