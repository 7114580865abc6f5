"""Seed 000's prepared lessons as the API shows them, and how a lesson deal is made (domain.lessons)."""

from __future__ import annotations

from typing import Any

from domain import GameState, Ruleset
from domain.lessons import BY_ID, LESSONS, SOURCE, Lesson

from ..errors import BadRequest, NotFound
from ..wire import LessonId, ruleset_ref
from .wire import LessonInfo, LessonList, LessonProgress

JSON = dict[str, Any]


def lesson_info(lesson: Lesson) -> LessonInfo:
    ruleset = lesson.ruleset
    return LessonInfo(LessonId(lesson.id), lesson.title, lesson.teaches, lesson.goal,
                      ruleset_ref(ruleset.id, ruleset.version))


def lesson_list() -> LessonList:
    return LessonList([lesson_info(lesson) for lesson in LESSONS])


def find_lesson(lesson_id: str) -> LessonInfo:
    lesson = BY_ID.get(lesson_id)
    if lesson is None:
        raise NotFound(f"no lesson {lesson_id[:40]!r}: the lessons are {', '.join(BY_ID)}")
    return lesson_info(lesson)


def lesson_ruleset_id(lesson_id: str | None) -> str | None:
    """The ruleset a lesson deal is played under when the request names none."""
    lesson = None if lesson_id is None else BY_ID.get(lesson_id)
    return None if lesson is None else lesson.ruleset_id


def lesson_deal(ruleset: Ruleset, lesson_id: str) -> tuple[tuple[int, ...], JSON]:
    """The deck and deal source of a lesson game, or a 400 saying why not."""
    lesson = BY_ID.get(lesson_id)
    if lesson is None:
        shown = lesson_id if len(lesson_id) <= 40 else lesson_id[:40] + "..."
        raise BadRequest(f"no lesson {shown!r}: the lessons are {', '.join(BY_ID)} (GET /lessons)")
    if ruleset != lesson.ruleset:
        raise BadRequest(f"the lessons are played under {lesson.ruleset.id}, not {ruleset.id}")
    return lesson.deck, {"source": SOURCE, "lesson": lesson.id}


def lesson_progress(state: GameState) -> LessonProgress | None:
    """The view's ``lesson`` of a lesson game: its id, the goal and whether it has been reached."""
    lesson = BY_ID.get(state.lesson) if state.lesson else None
    if lesson is None:
        return None
    return LessonProgress(LessonId(lesson.id), lesson.goal, state.lesson_done)
