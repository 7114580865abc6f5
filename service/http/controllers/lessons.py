"""``GET /lessons``: seed 000's four prepared lessons (service/deals/lessons.py). A lesson game is dealt by
``POST /games`` with ``{"deal": {"lesson": "<id>"}}``."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import PathParameter

from ...deals.lessons import find_lesson, lesson_list
from ..problems import documented
from ..schemas import LessonInfo, LessonList


class LessonController(Controller):
    path = "/lessons"
    tags = ("lessons",)

    @get("/", operation_id="listLessons", summary="The prepared lessons: what each teaches and its goal",
         responses=documented(429))
    async def lessons(self) -> LessonList:
        return lesson_list()

    @get("/{lesson_id:str}", operation_id="getLesson", summary="One prepared lesson",
         responses=documented(400, 404, 429))
    async def lesson(
        self,
        lesson_id: Annotated[str, PathParameter(description="base-rank, wrapping, reserve-refill or draw-three-stock")],
    ) -> LessonInfo:
        return find_lesson(lesson_id)
