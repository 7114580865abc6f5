"""``GET /tournaments`` over HTTP: every tournament, newest first, a page at a time in the newest list
style (``limit``, ``cursor``; ``items``, ``next``, ``Link``), and ``?status=`` for one status. Born in
2026-12-05 and added to 2026-12-04 as it is, like the other tournament endpoints."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import psycopg

from tests.support import assert_problem

from .conftest import Clock, Player
from .tournament_support import NEWEST, create_tournament, enter, ready, tournament

OLDEST = {"Api-Version": "2026-12-04"}


def listed(client: httpx.Client, headers: dict[str, str] = NEWEST, **params: Any) -> httpx.Response:
    return client.get("/tournaments", params=params, headers=headers)


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


def made(host: Player, clock: Clock, starts_in: int, minutes: int) -> str:
    """A tournament of two deals starting ``starts_in`` minutes from now, its deals proven; the
    clock then moves on a minute, so each one is made at an instant of its own."""
    view = create_tournament(host, clock, deals=2, minutes=minutes,
                             startsAt=(clock.now + timedelta(minutes=starts_in)).isoformat())
    ready(host.client, view["id"])
    clock.advance(minutes=1)
    return str(view["id"])


def test_every_status_is_listed_newest_first_and_each_filter_keeps_its_own(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    ann = Player(clocked, "Ann")
    ended = made(ann, clock, 0, 10)  # made 9:00, over at 9:10
    running = made(ann, clock, 0, 60)  # made 9:01, runs until 10:01
    upcoming = made(ann, clock, 60, 30)  # made 9:02, starts at 10:02
    preparing = made(ann, clock, 90, 30)  # made 9:03
    with psycopg.connect(clean_database) as conn:  # as if its deals were still being proven
        conn.execute("UPDATE tournaments SET prepared_at = NULL WHERE id = %s", (preparing,))
    assert enter(Player(clocked, "Bob"), running).status_code == 201
    clock.advance(minutes=16)  # 9:20

    every = listed(clocked)
    assert ids(every) == [preparing, upcoming, running, ended]
    assert every.json()["next"] is None
    assert "link" not in every.headers
    statuses = {item["id"]: item["status"] for item in every.json()["items"]}
    assert statuses == {preparing: "preparing", upcoming: "upcoming", running: "running", ended: "finished"}
    shown = {item["id"]: item for item in every.json()["items"]}
    for tournament_id in (upcoming, running):  # a summary is the view without its standings
        view = tournament(clocked, tournament_id)
        assert shown[tournament_id] == {key: value for key, value in view.items() if key != "standings"}
    assert (shown[running]["entrants"], shown[ended]["entrants"]) == (1, 0)
    assert shown[running]["creator"] == {"id": ann.id, "name": "Ann", "bot": False}
    for status, expected in (("preparing", preparing), ("upcoming", upcoming), ("running", running),
                             ("finished", ended)):
        assert ids(listed(clocked, status=status)) == [expected], status
    assert listed(clocked, OLDEST).json() == every.json(), "2026-12-04 lists them in the same shapes"
    assert ids(listed(clocked, OLDEST, status="running")) == [running]

    clock.advance(minutes=45)  # 10:05: the running one is over, the upcoming one runs
    assert ids(listed(clocked, status="finished")) == [running, ended]
    assert ids(listed(clocked, status="running")) == [upcoming]
    assert ids(listed(clocked, status="upcoming")) == []


def test_a_status_it_does_not_know_is_a_400_with_its_own_code(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    made(Player(clocked, "Ann"), clock, 0, 30)
    for headers in (NEWEST, OLDEST):
        for status in ("open", "", "RUNNING", "running,finished", "x" * 300):
            problem = assert_problem(listed(clocked, headers, status=status), 400, "unknown_tournament_status")
            assert "preparing, upcoming, running, finished" in problem["detail"]
            assert "x" * 300 not in problem["detail"]
    assert len(ids(listed(clocked))) == 1


def test_pages_follow_their_cursor_and_a_new_tournament_shifts_no_later_page(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    ann = Player(clocked, "Ann")
    first, second, third = (made(ann, clock, 30, 30) for _ in range(3))
    page = listed(clocked, limit=2)
    assert ids(page) == [third, second]
    cursor = page.json()["next"]
    assert isinstance(cursor, str)
    assert cursor
    assert page.headers["link"] == f'</tournaments?cursor={cursor}&limit=2>; rel="next"'
    newer = made(ann, clock, 30, 30)  # made during the walk: it heads the first page, not the next one
    rest = listed(clocked, limit=2, cursor=cursor)
    assert ids(rest) == [first]
    assert rest.json()["next"] is None
    assert "link" not in rest.headers
    assert ids(listed(clocked, OLDEST, limit=2, cursor=cursor)) == [first], "a cursor works in either version"
    assert ids(listed(clocked, limit=1)) == [newer]
    assert ids(listed(clocked)) == [newer, third, second, first]

    filtered = listed(clocked, status="upcoming", limit=3)
    assert ids(filtered) == [newer, third, second]
    following = filtered.json()["next"]
    assert filtered.headers["link"] == f'</tournaments?status=upcoming&cursor={following}&limit=3>; rel="next"'
    assert ids(listed(clocked, status="upcoming", limit=3, cursor=following)) == [first]
    for headers in (NEWEST, OLDEST):
        for params in ({"cursor": following}, {"cursor": cursor, "status": "upcoming"},
                       {"cursor": "bm9uc2Vuc2U"}, {"cursor": "!"}):
            assert_problem(listed(clocked, headers, **params), 400, "cursor_invalid")
        for limit in (0, 201, -1):
            assert_problem(listed(clocked, headers, limit=limit), 400, "limit_out_of_range")
    assert ids(listed(clocked, limit=200)) == [newer, third, second, first]


def test_options_names_both_methods_of_the_path(client: httpx.Client) -> None:
    assert client.options("/tournaments").headers["allow"] == "GET, OPTIONS, POST"
