"""Events: facts in the past tense. ``evolve`` applies them without re-checking any rule."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import Card


@dataclass(frozen=True, slots=True)
class GameDealt:
    ruleset_id: str
    ruleset_version: int
    deck: tuple[Card, ...]
    # where the deal came from, as the API shows it: {"source": "seed", "seed": 7}, ...
    source: dict[str, str | int] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class StockDrawn:
    cards: tuple[Card, ...]  # in the order they were turned; the last is the new waste top


@dataclass(frozen=True, slots=True)
class WasteRecycled:
    count: int


@dataclass(frozen=True, slots=True)
class CardsMoved:
    cards: tuple[Card, ...]  # the card named in the move, then the run that went with it
    source: str
    target: str


@dataclass(frozen=True, slots=True)
class ReserveRefilled:
    card: Card
    column: int  # 0..3


@dataclass(frozen=True, slots=True)
class MoveUndone:
    reverted: tuple[Event, ...]  # the events of the move taken back, in the order they happened


@dataclass(frozen=True, slots=True)
class SolverHintUsed:
    pass


@dataclass(frozen=True, slots=True)
class GameWon:
    pass


@dataclass(frozen=True, slots=True)
class GameStalled:
    pass


@dataclass(frozen=True, slots=True)
class GameResigned:
    pass


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The service ended the game: nobody moved it for ``idle_days`` days. It ends like a
    resignation (status resigned: played, not won)."""

    idle_days: int


@dataclass(frozen=True, slots=True)
class LessonCompleted:
    """A lesson game reached its lesson's goal (domain.lessons); decided with the move that did it."""

    lesson: str


Event = (
    GameDealt
    | StockDrawn
    | WasteRecycled
    | CardsMoved
    | ReserveRefilled
    | MoveUndone
    | SolverHintUsed
    | GameWon
    | GameStalled
    | GameResigned
    | GameAbandoned
    | LessonCompleted
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        GameDealt,
        StockDrawn,
        WasteRecycled,
        CardsMoved,
        ReserveRefilled,
        MoveUndone,
        SolverHintUsed,
        GameWon,
        GameStalled,
        GameResigned,
        GameAbandoned,
        LessonCompleted,
    )
}


def event_type(event: Event) -> str:
    return type(event).__name__
