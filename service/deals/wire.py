"""Where a game's cards came from, on the wire: the deal source Structs (tagged by ``source``), a
lesson game's progress (``lessons.lesson_progress`` makes it) and the prepared lessons as ``GET
/lessons`` shows them (``lessons.lesson_list``, ``lessons.find_lesson``), and how a verified pool was
made (``choice.pool_summary``).
``daily.source_view`` is the one function that turns a stored deal source into one: a game's view,
its ``GameDealt`` event and the lists of games show a deal source this way."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Union
from uuid import UUID

from msgspec import Meta

from ..wire import Body, LessonId, RulesetRef, Seed


class SeedSource(Body, tag_field="source", tag="seed"):
    """Dealt by seed."""

    seed: Seed


class DeckSource(Body, tag_field="source", tag="deck"):
    """Dealt from an explicit deck (not echoed)."""


class PoolSource(Body, tag_field="source", tag="pool"):
    """A deal of the ruleset's verified pool."""

    pool: Annotated[int, Meta(ge=1)]


class DailySource(Body, tag_field="source", tag="daily"):
    """The shared deal of a UTC date: never named by seed or pool number."""

    date: date
    practice: Annotated[
        bool, Meta(description="true for a player's second and later game of that date's deal (not ranked)")
    ]


class LessonSource(Body, tag_field="source", tag="lesson"):
    """A prepared lesson's deck (GET /lessons)."""

    lesson: LessonId


class RaceSource(Body, tag_field="source", tag="race"):
    """An entrant's game of a race: the race's deck (never its seed or pool number, see GET /races/{id})."""

    race: UUID


class TournamentSource(Body, tag_field="source", tag="tournament"):
    """An entrant's game of a tournament's deal ``deal`` (1 ..): never its deck (GET /tournaments/{id})."""

    tournament: UUID
    deal: Annotated[int, Meta(ge=1)]


# Where a game's cards came from, tagged by ``source``.
DealSource = Union[  # noqa: UP007 (see Body)
    SeedSource, DeckSource, PoolSource, DailySource, LessonSource, RaceSource, TournamentSource
]


class LessonProgress(Body):
    """In the view of a lesson game: its lesson, the goal, and whether it has been reached."""

    id: LessonId
    goal: str
    done: bool


class LessonInfo(Body):
    id: LessonId
    title: str
    teaches: Annotated[str, Meta(description="what the lesson is about")]
    goal: Annotated[str, Meta(description="the goal in words; reaching it records a LessonCompleted event")]
    ruleset: Annotated[RulesetRef, Meta(description="the ruleset a lesson game is dealt under (classic)")]


class LessonList(Body):
    lessons: list[LessonInfo]


class LineLength(Body):
    median: float
    q1: float
    q3: float


class PoolSummary(Body):
    ruleset: RulesetRef
    size: int
    seeds_tried: int
    won: int
    lost: int
    undecided: int
    budget_seconds: float
    line_length: LineLength
    verification: str
