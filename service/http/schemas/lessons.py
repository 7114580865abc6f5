"""The prepared lessons (service/deals/lessons.py, domain/lessons.py): ``GET /lessons`` and a lesson game's progress."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from msgspec import Meta

from domain.lessons import BY_ID as LESSONS

from .common import Body, RulesetRef


# A new lesson of domain/lessons.py is a new member here too (checked below).
class LessonId(StrEnum):
    """A prepared lesson, by id (GET /lessons lists them)."""

    BASE_RANK = "base-rank"
    WRAPPING = "wrapping"
    RESERVE_REFILL = "reserve-refill"
    DRAW_THREE_STOCK = "draw-three-stock"


assert {lesson.value for lesson in LessonId} == set(LESSONS), (
    "LessonId names every lesson of domain/lessons.py"
)


class LessonInfo(Body):
    id: LessonId
    title: str
    teaches: Annotated[str, Meta(description="what the lesson is about")]
    goal: Annotated[str, Meta(description="the goal in words; reaching it records a LessonCompleted event")]
    ruleset: Annotated[RulesetRef, Meta(description="the ruleset a lesson game is dealt under (classic)")]


class LessonList(Body):
    lessons: list[LessonInfo]


class LessonProgress(Body):
    """In the view of a lesson game: its lesson, the goal, and whether it has been reached."""

    id: LessonId
    goal: str
    done: bool
