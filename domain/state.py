"""The game state: compact and immutable (cards as ints, piles as tuples)."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from .cards import Card, make_card, rank_after, rank_of, suit_of
from .deal import FOUNDATION_INDEX, RESERVE_SLICE, STOCK_SLICE, TABLEAU_SLICE
from .events import GameDealt
from .rulesets import Ruleset, get_ruleset


class Status(StrEnum):
    PLAYING = "playing"
    WON = "won"
    STALLED = "stalled"
    RESIGNED = "resigned"


class GameState(NamedTuple):
    """Immutable; a named tuple because evolve makes one per event and that must be cheap."""

    ruleset: Ruleset
    deck: tuple[Card, ...]  # deal order, kept so a finished game can show every card
    base_rank: int
    reserve: tuple[Card, ...]  # bottom .. top; the top is face up
    stock: tuple[Card, ...]  # bottom .. top; stock[-1] is drawn next
    waste: tuple[Card, ...]  # bottom .. top; waste[-1] plays
    foundations: tuple[int, int, int, int]  # how many cards each suit's foundation holds
    tableau: tuple[tuple[Card, ...], ...]  # four columns, deepest card .. exposed end card
    status: Status
    progress: bool  # a move other than draw/recycle since the last recycle (draw-one's stall rule)
    move_count: int
    undo_count: int
    assisted: bool
    version: int  # events applied so far
    undo: str  # the last moves that can be taken back (domain.undo_stack's window), "" when none
    undo_depth: int = 0  # how many moves can be taken back: the window's and the older ones
    lesson: str = ""  # a lesson game's lesson id (domain.lessons), "" for any other game
    lesson_done: bool = False  # its goal has been reached (a LessonCompleted event)
    abandoned_after: int = 0  # the service ended the game after this many idle days (GameAbandoned); 0: it did not

    @property
    def playing(self) -> bool:
        return self.status is Status.PLAYING

    def foundation_top(self, suit: int) -> Card | None:
        count = self.foundations[suit]
        if count == 0:
            return None
        return make_card(rank_after(self.base_rank, count - 1), suit)

    def foundation_cards(self, suit: int) -> tuple[Card, ...]:
        return tuple(make_card(rank_after(self.base_rank, i), suit) for i in range(self.foundations[suit]))

    @property
    def cards_on_foundations(self) -> int:
        return sum(self.foundations)


def initial_state(event: GameDealt) -> GameState:
    """The table right after the deal (API.md's deck layout)."""
    deck = event.deck
    base_card = deck[FOUNDATION_INDEX]
    foundations = [0, 0, 0, 0]
    foundations[suit_of(base_card)] = 1
    return GameState(
        ruleset=get_ruleset(event.ruleset_id, event.ruleset_version),
        deck=deck,
        base_rank=rank_of(base_card),
        reserve=deck[RESERVE_SLICE],
        stock=tuple(reversed(deck[STOCK_SLICE])),
        waste=(),
        foundations=(foundations[0], foundations[1], foundations[2], foundations[3]),
        tableau=tuple((card,) for card in deck[TABLEAU_SLICE]),
        status=Status.PLAYING,
        progress=False,
        move_count=0,
        undo_count=0,
        assisted=False,
        version=1,
        undo="",
        lesson=str(event.source.get("lesson", "")) if event.source.get("source") == "lesson" else "",
    )
