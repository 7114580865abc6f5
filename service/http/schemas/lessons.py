"""The prepared lessons (service/deals/lessons.py, domain/lessons.py): ``GET /lessons`` (a lesson game's progress
is in its view: service.deals.wire)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from .common import Body, LessonId, RulesetRef


class LessonInfo(Body):
    id: LessonId
    title: str
    teaches: Annotated[str, Meta(description="what the lesson is about")]
    goal: Annotated[str, Meta(description="the goal in words; reaching it records a LessonCompleted event")]
    ruleset: Annotated[RulesetRef, Meta(description="the ruleset a lesson game is dealt under (classic)")]


class LessonList(Body):
    lessons: list[LessonInfo]
