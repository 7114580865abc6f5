"""Abandoned games: a game with no move for ABANDON_AFTER_DAYS is ended by the service with a
GameAbandoned event (never deleted), replays, shows as ended with the reason, counts in the stats
like a resignation; a game moved recently is left alone; two server processes end a game once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import psycopg
import pytest

from service.deals.deal_pools import decode_line, load_deal_pool
from tests.live import log_problems, stored
from tests.support import assert_problem

from .conftest import Clock, Player, play_line, running_server, server_settings

POOL = load_deal_pool("open-runs")
assert POOL is not None
DAYS = 30


@pytest.fixture
def abandon_clock() -> Clock:
    return Clock()


@pytest.fixture
def servers(clean_database: str, abandon_clock: Clock) -> Iterator[list[httpx.Client]]:
    """Two server processes' worth of apps on one database and one clock, each looking for idle
    games every 0.1 s."""
    with ExitStack() as stack:
        clients = []
        for _ in range(2):
            settings = server_settings(clean_database, abandon_after_days=DAYS, abandon_check_seconds=0.1)
            url = stack.enter_context(running_server(settings, clock=abandon_clock))
            clients.append(stack.enter_context(httpx.Client(base_url=url, timeout=10)))
        yield clients


def wait_for(check: Any, what: str, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def game(client: httpx.Client, game_id: str) -> dict[str, Any]:
    response = client.get(f"/games/{game_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_an_idle_game_is_ended_with_an_event_and_a_recent_one_is_not(
    servers: list[httpx.Client], abandon_clock: Clock, clean_database: str
) -> None:
    first, second = servers
    ann, bob = Player(first, "Ann"), Player(second, "Bob")
    idle = ann.new_game(ruleset="classic", deal={"seed": 5})
    assert ann.move(idle["id"], {"type": "draw"}).status_code == 200
    recent = bob.new_game(ruleset="classic", deal={"seed": 6})
    won = bob.new_game(deal={"pool": 2})
    play_line(bob, won["id"], decode_line(POOL.deal(2).line))
    lapsed = bob.new_game(deal={"pool": 3})  # after a win: its end breaks Bob's streak

    abandon_clock.advance(days=DAYS - 1)
    assert bob.move(recent["id"], {"type": "draw"}).status_code == 200  # 29 days in: moved
    time.sleep(0.5)  # several rounds: nothing is idle long enough yet
    assert game(first, idle["id"])["status"] == "playing"
    abandon_clock.advance(days=2)  # the idle games: 31 days without a move; the recent one: 2

    wait_for(lambda: game(first, idle["id"])["status"] != "playing", "the idle game to end")
    wait_for(lambda: game(second, lapsed["id"])["status"] != "playing", "Bob's idle game to end")
    ended = game(second, idle["id"])
    assert (ended["status"], ended["abandoned"], ended["version"]) == ("resigned", {"idleDays": 31}, 3)
    assert ended["finishedAt"] is not None
    assert ended["table"]["stock"]["cards"]  # ended: the hidden cards may show now
    events = first.get(f"/games/{idle['id']}/events").json()["events"]
    assert [(e["type"], e["data"]) for e in events[-1:]] == [("GameAbandoned", {"idleDays": 31})]
    assert len(events) == 3  # nothing deleted: the deal, the draw, the end
    assert first.get(f"/games/{idle['id']}/states/2").json()["status"] == "playing"  # the past replays
    logs = stored(clean_database, [idle["id"], lapsed["id"], recent["id"]])
    assert [p for game_id, log in logs.items() for p in log_problems(game_id, log)] == []

    still = game(first, recent["id"])
    assert (still["status"], still["version"], "abandoned" in still) == ("playing", 2, False)
    assert_problem(ann.move(idle["id"], {"type": "draw"}), 409, "game_over")

    ann_stats = {r["ruleset"]: r for r in first.get(f"/players/{ann.id}/stats").json()["rulesets"]}
    assert (ann_stats["classic"]["played"], ann_stats["classic"]["won"]) == (1, 0)
    bob_stats = {r["ruleset"]: r for r in second.get(f"/players/{bob.id}/stats").json()["rulesets"]}["open-runs"]
    assert (bob_stats["played"], bob_stats["won"], bob_stats["currentStreak"], bob_stats["bestStreak"]) == (2, 1, 0, 1)


def test_two_processes_end_each_idle_game_once(
    servers: list[httpx.Client], abandon_clock: Clock, clean_database: str
) -> None:
    first, second = servers
    players = [Player(first, "Cid"), Player(second, "Dee")]
    ids = [players[i % 2].new_game(ruleset="draw-one", deal={"seed": i})["id"] for i in range(24)]
    abandon_clock.advance(days=DAYS + 5)
    wait_for(lambda: all(game(first, game_id)["status"] == "resigned" for game_id in ids), "every game to end")
    time.sleep(0.3)  # more rounds in both processes: nothing more may be appended
    with psycopg.connect(clean_database) as conn:
        ends = conn.execute(
            "SELECT game_id::text, count(*) FROM events WHERE type = 'GameAbandoned' GROUP BY game_id"
        ).fetchall()
        played = conn.execute("SELECT sum(played), sum(won) FROM player_stats WHERE ruleset_id = 'draw-one'").fetchone()
    assert dict(ends) == dict.fromkeys(ids, 1)
    assert played == (24, 0)
    logs = stored(clean_database, ids)
    assert {game_id: log.version for game_id, log in logs.items()} == dict.fromkeys(ids, 2)
