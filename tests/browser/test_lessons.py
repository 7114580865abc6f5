"""Lessons on the page: the list from GET /lessons, a lesson dealt and played by clicks to its goal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from domain import apply, initial_state
from domain.lessons import BY_ID, LESSONS, lesson_deal
from tests.support import LESSON_SCRIPTS

from .conftest import PHONE
from .pages import Page, expected_table


def test_a_lesson_is_played_by_clicks_to_its_goal_and_marked_done(
    open_page: Callable[..., Page], screenshots: Path
) -> None:
    page = open_page()
    page.register("Learner")
    page.click("header.site a[data-nav=lessons]")
    page.wait_for(
        lambda: page.js("return document.querySelectorAll('.lesson-list > li').length") == len(LESSONS), "the lessons"
    )
    listed = page.js("return [...document.querySelectorAll('.lesson-list > li')].map((li) => li.dataset.lesson)")
    assert listed == [lesson.id for lesson in LESSONS]
    wrapping = BY_ID["wrapping"]
    assert page.text("li[data-lesson=wrapping] h2") == wrapping.title
    assert wrapping.goal in page.text("li[data-lesson=wrapping] .goal")

    page.click("li[data-lesson=wrapping] [data-action=start-lesson]")
    page.wait_for_game()
    state = initial_state(lesson_deal(wrapping))
    page.wait_table(expected_table(state))
    page.wait_for(lambda: page.text(".lesson-panel h2") == f"Lesson: {wrapping.title}", "the lesson's title")
    assert wrapping.goal in page.text(".lesson-panel .goal")
    assert page.js("return document.querySelector('.lesson-panel').dataset.done") == "false"
    assert page.text(".lesson-panel .done-line") == ""

    # docs/api.md's line for this lesson: KD onto AC (a king on an ace), then AH onto the KH foundation.
    for command in LESSON_SCRIPTS["wrapping"]:
        state, _ = apply(state, command)
        page.play(command)
        page.wait_table(expected_table(state))
        shown_done = page.js("return document.querySelector('.lesson-panel').dataset.done") == "true"
        assert shown_done == state.lesson_done, f"after {command}: the page and the rules engine agree on done"
    assert state.lesson_done, "the rules engine says the goal is reached"
    assert page.text(".lesson-panel .done-line").startswith("✓ Lesson done.")
    page.screenshot(screenshots / "lesson-desktop.png")

    following = LESSONS[[lesson.id for lesson in LESSONS].index("wrapping") + 1]
    page.click("[data-action=next-lesson]")
    page.wait_for(
        lambda: page.js("return document.querySelector('.lesson-panel')?.dataset.lesson") == following.id,
        "the next lesson",
    )
    page.wait_table(expected_table(initial_state(lesson_deal(following))))


def test_the_lesson_list_and_a_lesson_fit_a_phone(open_page: Callable[..., Page], screenshots: Path) -> None:
    page = open_page(*PHONE)
    page.register("Pocket Learner")
    page.open("#/lessons")
    page.wait_for(
        lambda: page.js("return !!document.querySelector('.lesson-list [data-action=start-lesson]')"), "the lessons"
    )
    assert page.fits()
    page.screenshot(screenshots / "lessons-phone.png")
    page.click("li[data-lesson=base-rank] [data-action=start-lesson]")
    page.wait_for_game()
    page.wait_for(lambda: "Goal:" in page.text(".lesson-panel .goal"), "the goal")
    page.wait_table(expected_table(initial_state(lesson_deal(BY_ID["base-rank"]))))
    assert page.fits()
    page.screenshot(screenshots / "lesson-phone.png")
