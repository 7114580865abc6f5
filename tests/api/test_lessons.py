"""Seed 000's four lessons over HTTP: GET /lessons, lesson deals, the goal reached by a scripted line
(and not before), recorded as an event that replays, and lesson games kept out of every stat."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from domain import command_to_api
from service.stats.rebuild import rebuild_projections
from tests.support import LESSON_SCRIPTS, assert_problem

from .conftest import Player

LESSON_IDS = ["base-rank", "wrapping", "reserve-refill", "draw-three-stock"]


# Each line reaches its lesson's goal on its last move, and only there (tests.support), as API moves.
SCRIPTS = {lesson: [command_to_api(c) for c in line] for lesson, line in LESSON_SCRIPTS.items()}


def test_the_lessons_are_listed_with_what_they_teach_their_goal_and_ruleset(client: httpx.Client) -> None:
    response = client.get("/lessons")
    assert response.status_code == 200, response.text
    lessons = response.json()["lessons"]
    assert [lesson["id"] for lesson in lessons] == LESSON_IDS
    for lesson in lessons:
        assert lesson["ruleset"] == "classic"
        assert lesson["rulesetVersion"] == 1
        assert all(isinstance(lesson[key], str) and len(lesson[key]) > 10 for key in ("title", "teaches", "goal"))
        one = client.get(f"/lessons/{lesson['id']}")
        assert one.status_code == 200
        assert one.json() == lesson
    missing = client.get("/lessons/knitting")
    assert_problem(missing, 404, "not_found")
    assert "wrapping" in missing.json()["detail"]


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_a_lesson_game_reaches_done_by_its_scripted_line_and_not_before(
    client: httpx.Client, ann: Player, lesson_id: str
) -> None:
    game = ann.new_game(deal={"lesson": lesson_id})  # no ruleset: the lesson's own
    goal = client.get(f"/lessons/{lesson_id}").json()["goal"]
    assert game["ruleset"] == {"id": "classic", "version": 1}
    assert game["deal"] == {"source": "lesson", "lesson": lesson_id}
    assert game["lesson"] == {"id": lesson_id, "goal": goal, "done": False}
    script = SCRIPTS[lesson_id]
    for index, step in enumerate(script):
        played = ann.move(game["id"], step)
        assert played.status_code == 200, (index, step, played.text)
        body = played.json()
        last = index == len(script) - 1
        assert body["game"]["lesson"]["done"] is last, (index, step)
        completed = [e for e in body["events"] if e["type"] == "LessonCompleted"]
        assert completed == (
            [
                {
                    "version": body["game"]["version"],
                    "type": "LessonCompleted",
                    "data": {"lesson": lesson_id},
                    "recordedAt": completed[0]["recordedAt"],
                }
            ]
            if last
            else []
        )
    view = client.get(f"/games/{game['id']}").json()
    assert view["lesson"]["done"] is True
    assert view["status"] == "playing"
    version = view["version"]
    assert client.get(f"/games/{game['id']}/states/{version}").json()["lesson"]["done"] is True  # a replay
    assert client.get(f"/games/{game['id']}/states/{version - 1}").json()["lesson"]["done"] is False
    events = client.get(f"/games/{game['id']}/events").json()["events"]
    assert [e["type"] for e in events].count("LessonCompleted") == 1


def test_a_goal_stays_reached_after_an_undo(ann: Player) -> None:
    game = ann.new_game(deal={"lesson": "wrapping"})
    for step in SCRIPTS["wrapping"]:
        assert ann.move(game["id"], step).status_code == 200
    undone = ann.move(game["id"], {"type": "undo"})
    assert undone.status_code == 200
    assert undone.json()["game"]["lesson"]["done"] is True
    assert [e["type"] for e in undone.json()["events"]] == ["MoveUndone"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"ruleset": "open-runs", "deal": {"lesson": "wrapping"}}, "lessons are played under classic"),
        (
            {"deal": {"lesson": "juggling"}},
            (
                "'deal.lesson' must be one of base-rank, wrapping, reserve-refill, draw-three-stock (GET /lessons), "
                "not 'juggling'"
            ),
        ),
        (
            {"deal": {"lesson": "wrapping", "seed": 4}},
            "'deal' names exactly one source (seed, pool, daily, deck or lesson), not lesson and seed",
        ),
        (
            {"deal": {"lesson": 7}},
            "'deal.lesson' must be one of base-rank, wrapping, reserve-refill, draw-three-stock (GET /lessons), not 7",
        ),
    ],
)
def test_bad_lesson_deals_are_refused_and_change_nothing(
    client: httpx.Client, ann: Player, body: dict[str, Any], reason: str
) -> None:
    response = client.post("/games", json=body, headers=ann.auth)
    assert reason in assert_problem(response, 400)["detail"]
    assert client.get(f"/players/{ann.id}/games").json()["games"] == []


def test_other_games_carry_no_lesson(ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 3})
    assert "lesson" not in game


def test_lesson_games_count_in_no_stats(client: httpx.Client, clean_database: str, ann: Player) -> None:
    before = client.get("/stats").json()
    lessons = [ann.new_game(deal={"lesson": lesson_id})["id"] for lesson_id in LESSON_IDS]
    for game_id in lessons:
        for step in SCRIPTS["base-rank"] if game_id == lessons[0] else []:
            assert ann.move(game_id, step).status_code == 200
        assert ann.move(game_id, {"type": "resign"}).status_code == 200  # finished: would count as played
    counted = ann.new_game(ruleset="classic", deal={"seed": 9})  # a game that does count, for contrast
    assert ann.move(counted["id"], {"type": "resign"}).status_code == 200

    def figures() -> tuple[Any, Any]:
        mine = {r["ruleset"]: r for r in client.get(f"/players/{ann.id}/stats").json()["rulesets"]}["classic"]
        overall = client.get("/stats").json()
        return mine, overall

    mine, overall = figures()
    assert (mine["played"], mine["won"]) == (1, 0)  # the seed game only
    assert {s["source"]: s["played"] for s in overall["sources"]} == {
        s["source"]: s["played"] + (s["source"] == "seed") for s in before["sources"]
    }
    assert "lesson" not in {s["source"] for s in overall["sources"]}
    rebuild_projections(clean_database)  # rebuilt from the event log alone: the same
    assert figures() == (mine, overall)
