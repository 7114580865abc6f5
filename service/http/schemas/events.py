"""A game's events as its log shows them (domain/events.py, domain/view.py event_data)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Union

from msgspec import UNSET, Meta, UnsetType

from .common import Body, CardCode, Column, Pile, RulesetRef, Target, Version
from .deals import DealSource
from .lessons import LessonId


class GameDealtData(Body, omit_defaults=True):
    ruleset: RulesetRef
    deal: DealSource
    base_card: CardCode
    reserve_top: CardCode
    reserve_count: int
    tableau: Annotated[list[CardCode], Meta(description="the first card of tableau-1 .. tableau-4")]
    stock_count: int
    deck: Annotated[
        list[CardCode],
        Meta(description="only once the game has ended: all 52 cards in deal order, to replay it offline"),
    ] | UnsetType = UNSET


class StockDrawnData(Body):
    count: int
    waste_top: CardCode
    cards: Annotated[
        list[CardCode], Meta(description="the cards turned up, in the order they landed; the last is the new top")
    ]


class WasteRecycledData(Body):
    count: Annotated[int, Meta(description="the cards turned back into the stock")]


class CardsMovedData(Body):
    card: Annotated[CardCode, Meta(description="the card named in the move")]
    cards: Annotated[list[CardCode], Meta(description="that card, then the run that went with it")]
    from_: Pile
    to: Target


class ReserveRefilledData(Body):
    card: CardCode
    to: Column


class NoData(Body):
    """An event that carries no data."""


class StockDrawnReverted(Body, tag_field="type", tag="StockDrawn"):
    data: StockDrawnData


class WasteRecycledReverted(Body, tag_field="type", tag="WasteRecycled"):
    data: WasteRecycledData


class CardsMovedReverted(Body, tag_field="type", tag="CardsMoved"):
    data: CardsMovedData


class ReserveRefilledReverted(Body, tag_field="type", tag="ReserveRefilled"):
    data: ReserveRefilledData


# An event of the move an undo took back, tagged by ``type``.
RevertedEvent = Union[StockDrawnReverted, WasteRecycledReverted, CardsMovedReverted, ReserveRefilledReverted]  # noqa: UP007 (see Body)


class MoveUndoneData(Body):
    reverted: Annotated[
        list[RevertedEvent], Meta(description="the events of the move taken back, in the order they happened")
    ]


class EventBase(Body, tag_field="type"):
    """What every event of a game's log has besides its ``data``."""

    version: Version
    recorded_at: datetime


class GameDealtEvent(EventBase, tag="GameDealt"):
    """The first event: the deal (its deck withheld until the game has ended)."""

    data: GameDealtData


class StockDrawnEvent(EventBase, tag="StockDrawn"):
    data: StockDrawnData


class WasteRecycledEvent(EventBase, tag="WasteRecycled"):
    data: WasteRecycledData


class CardsMovedEvent(EventBase, tag="CardsMoved"):
    data: CardsMovedData


class ReserveRefilledEvent(EventBase, tag="ReserveRefilled"):
    """The reserve's top card filled a column a move emptied (part of that move)."""

    data: ReserveRefilledData


class MoveUndoneEvent(EventBase, tag="MoveUndone"):
    data: MoveUndoneData


class SolverHintUsedEvent(EventBase, tag="SolverHintUsed"):
    """The player asked the solver (the game is assisted from here on)."""

    data: NoData


class GameWonEvent(EventBase, tag="GameWon"):
    data: NoData


class GameStalledEvent(EventBase, tag="GameStalled"):
    """draw-one: a recycle after a pass without progress ends the game."""

    data: NoData


class GameResignedEvent(EventBase, tag="GameResigned"):
    data: NoData


class GameAbandonedData(Body):
    idle_days: Annotated[int, Meta(ge=1, description="how many days the game went without a move")]


class GameAbandonedEvent(EventBase, tag="GameAbandoned"):
    """The service ended a game nobody had moved for ABANDON_AFTER_DAYS: it ends like a
    resignation (status resigned; played, not won)."""

    data: GameAbandonedData


class LessonCompletedData(Body):
    lesson: LessonId


class LessonCompletedEvent(EventBase, tag="LessonCompleted"):
    """A lesson game reached its lesson's goal, with the move that did it (recorded once; an undo
    does not take it back)."""

    data: LessonCompletedData


# One event of a game's log, tagged by ``type``; hidden cards withheld while the game is in progress.
EventView = Union[  # noqa: UP007 (see Body)
    GameDealtEvent,
    StockDrawnEvent,
    WasteRecycledEvent,
    CardsMovedEvent,
    ReserveRefilledEvent,
    MoveUndoneEvent,
    SolverHintUsedEvent,
    GameWonEvent,
    GameStalledEvent,
    GameResignedEvent,
    GameAbandonedEvent,
    LessonCompletedEvent,
]


class EventPage(Body):
    items: Annotated[list[EventView], Meta(description="oldest first")]
    next: Annotated[
        str, Meta(description="pass as ?cursor= for the next page (the version of this page's last event); null "
                  "at the end")
    ] | None
