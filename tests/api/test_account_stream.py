"""GET /players/me/stream as a bot uses it: its races, games and analyses as they happen, resumed
with Last-Event-ID across a cut and a server restart, nothing missed or repeated."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from tests.support import assert_problem

from .conftest import Clock, Player, play, running_server, server_settings
from .race_support import create_race, game_of, join, start
from .test_streams import EventStream

WAIT = 20.0  # the longest any event may take to arrive (an analysis runs in between; a loaded machine)
KEEPALIVE = 0.3


def settings_for(database_url: str, **changes: Any) -> Any:
    return server_settings(database_url, stream_keepalive_seconds=KEEPALIVE, account_events_sweep_seconds=0.2,
                           **changes)


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def feed_server(database_url: str, clock: Clock) -> Iterator[str]:
    with running_server(settings_for(database_url), clock=clock) as url:
        yield url


@pytest.fixture
def http(feed_server: str, clean_database: str, clock: Clock) -> Iterator[httpx.Client]:
    clock.now = Clock.START
    with httpx.Client(base_url=feed_server, timeout=30) as client:
        yield client


@contextmanager
def sse(client: httpx.Client, player: Player, last_id: str | None = None) -> Iterator[EventStream]:
    headers = {**player.auth, **({"Last-Event-ID": last_id} if last_id is not None else {})}
    with client.stream("GET", "/players/me/stream", headers=headers, timeout=httpx.Timeout(WAIT)) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield EventStream(response)


class Lines:
    """An NDJSON account stream, one object a line; empty lines keep it alive."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.iter_lines()
        self.keepalives = 0

    def next_event(self) -> dict[str, Any]:
        for line in self.lines:
            if line == "":
                self.keepalives += 1
                continue
            event: dict[str, Any] = json.loads(line)
            return event
        raise AssertionError("the stream ended")


@contextmanager
def ndjson(client: httpx.Client, player: Player, last_id: str | None = None) -> Iterator[Lines]:
    headers = {**player.auth, "Accept": "application/x-ndjson",
               **({"Last-Event-ID": last_id} if last_id is not None else {})}
    with client.stream("GET", "/players/me/stream", headers=headers, timeout=httpx.Timeout(WAIT)) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("application/x-ndjson")
        yield Lines(response)


def event_of(stream: EventStream) -> dict[str, Any]:
    message = stream.next_event()
    body: dict[str, Any] = message.json()
    assert message.event == body["type"]
    assert message.id == str(body["id"])
    return body


def raced(ann: Player, bot: Player, **body: Any) -> dict[str, Any]:
    race = create_race(ann, ruleset="classic", deal={"seed": 90210}, maxEntrants=2, **body)
    assert join(bot, race["id"]).status_code == 201
    response = start(ann, race["id"])
    assert response.status_code == 200, response.text
    started: dict[str, Any] = response.json()
    return started


def test_a_bot_hears_its_race_start_and_finish_its_game_end_and_its_analysis(http: httpx.Client) -> None:
    ann, bot = Player(http, "Ann"), Player(http, "Robo")
    with ndjson(http, bot) as stream:
        race = raced(ann, bot)
        started = stream.next_event()
        assert started["type"] == "raceStarted"
        assert started["data"]["race"] == race["id"]
        assert started["data"]["game"] == game_of(race, bot)  # its own game, and only its own
        mine = game_of(race, bot)
        play(bot, mine, [{"type": "draw"}, {"type": "draw"}])  # moves that do not end a game: no event
        play(bot, mine, [{"type": "resign"}])
        ended = stream.next_event()
        assert ended["type"] == "gameEnded"
        assert ended["data"] == {"game": mine, "status": "resigned", "reason": "resigned", "moveCount": 2,
                                 "race": race["id"]}
        play(ann, game_of(race, ann), [{"type": "resign"}])
        finished = stream.next_event()
        assert finished["type"] == "raceFinished"
        assert finished["data"]["race"] == race["id"]
        assert finished["data"]["entrants"] == 2
        assert finished["data"]["timeUp"] is False
        assert finished["data"]["place"] == http.get(f"/races/{race['id']}").json()["entrants"][1]["place"]
        assert http.post(f"/games/{mine}/analysis", headers=bot.auth).status_code in (200, 202)
        done = stream.next_event()
        assert done == {**done, "type": "analysisDone", "data": {"game": mine, "status": "done"}}
        assert [started["id"], ended["id"], finished["id"], done["id"]] == [1, 2, 3, 4]


def test_a_bot_hears_it_was_challenged_and_the_race_the_acceptance_started(http: httpx.Client) -> None:
    ann, bot = Player(http, "Ann"), Player(http, "Robo")
    with sse(http, bot) as stream, sse(http, ann) as sender:
        made = http.post("/challenges", json={"to": bot.id, "ruleset": "classic"}, headers=ann.auth)
        assert made.status_code == 201, made.text
        received = event_of(stream)
        assert received["type"] == "challenge"
        assert received["data"]["challenge"] == made.json()["id"]
        assert received["data"]["action"] == "created"
        assert received["data"]["from"] == {"id": ann.id, "name": "Ann", "bot": False}
        accepted = http.post(f"/challenges/{made.json()['id']}/accept", headers=bot.auth)
        assert accepted.status_code == 201, accepted.text
        race = accepted.json()
        told = [event_of(stream), event_of(stream)]
        assert {e["type"] for e in told} == {"raceStarted", "challenge"}  # one transaction: the race, and why
        started = next(e for e in told if e["type"] == "raceStarted")
        assert started["data"]["game"] == game_of(race, bot)
        assert next(e for e in told if e["type"] == "challenge")["data"]["action"] == "accepted"
        assert [e["id"] for e in [received, *told]] == [1, 2, 3]
        # the sender hears the acceptance and its own race, never the making of its own challenge
        assert {event_of(sender)["type"], event_of(sender)["type"]} == {"raceStarted", "challenge"}


def test_a_race_whose_time_runs_out_finishes_on_its_own_and_says_so(http: httpx.Client, clock: Clock) -> None:
    ann, bot = Player(http, "Ann"), Player(http, "Robo")
    with sse(http, bot) as stream:
        race = raced(ann, bot, timeLimitSeconds=60)
        assert event_of(stream)["type"] == "raceStarted"
        clock.advance(seconds=61)  # nobody looks at the race: the periodic job finishes it
        finished = event_of(stream)
        assert finished["type"] == "raceFinished"
        assert finished["data"]["race"] == race["id"]
        assert finished["data"]["timeUp"] is True


def test_both_players_hear_a_challenge_expire_and_it_stays_expired(http: httpx.Client, clock: Clock) -> None:
    ann, bot = Player(http, "Ann"), Player(http, "Robo")
    with sse(http, bot) as stream, sse(http, ann) as sender:
        made = http.post("/challenges", json={"to": bot.id, "ruleset": "classic"}, headers=ann.auth).json()
        assert event_of(stream)["data"]["action"] == "created"
        clock.advance(seconds=601)  # CHALLENGE_EXPIRY_SECONDS (600): nobody answers, the periodic job expires it
        for told in (event_of(stream), event_of(sender)):
            assert told["type"] == "challenge"
            assert told["data"]["challenge"] == made["id"]
            assert told["data"]["action"] == "expired"
    for player in (ann, bot):
        shown = http.get("/challenges", headers=player.auth).json()["items"]
        assert shown == []
    assert_problem(http.post(f"/challenges/{made['id']}/accept", headers=bot.auth), 409, "challenge_expired")
    assert_problem(http.post(f"/challenges/{made['id']}/decline", headers=bot.auth), 409, "challenge_expired")
    # told once: a later round finds nothing to expire, and the sender's stream holds just the one event
    clock.advance(seconds=5)
    with ndjson(http, ann, last_id="0") as lines:
        assert lines.next_event()["data"]["action"] == "expired"
        for line in lines.lines:  # three keep-alives (several rounds of the job) and no second event
            assert line == "", line
            lines.keepalives += 1
            if lines.keepalives == 3:
                break


def test_idle_streams_keep_alive(http: httpx.Client) -> None:
    bot = Player(http, "Robo")
    with ndjson(http, bot) as lines:
        deadline = time.monotonic() + WAIT
        for line in lines.lines:
            if line == "":
                break
            assert time.monotonic() < deadline
    with sse(http, bot) as stream:
        message = stream.next()
        assert message is not None
        assert message.comments == ["keep-alive"]


def test_a_cut_stream_resumes_with_last_event_id_across_a_restart(database_url: str, clean_database: str) -> None:
    seen: list[int] = []
    with running_server(settings_for(database_url)) as url, httpx.Client(base_url=url, timeout=30) as client:
        bot = Player(client, "Robo")
        with sse(client, bot) as stream:
            for seed in (1, 2):
                play(bot, bot.new_game(ruleset="classic", deal={"seed": seed})["id"], [{"type": "resign"}])
                seen.append(event_of(stream)["id"])
        missed = [bot.new_game(ruleset="classic", deal={"seed": seed})["id"] for seed in (3, 4)]
        for game_id in missed:  # while the bot is away
            play(bot, game_id, [{"type": "resign"}])
    # the server stopped; a new one starts on the same database
    with running_server(settings_for(database_url)) as url, httpx.Client(base_url=url, timeout=30) as client:
        bot.client = client
        with sse(client, bot, last_id=str(seen[-1])) as stream:
            replayed = [event_of(stream) for _ in missed]
            assert [e["data"]["game"] for e in replayed] == missed
            seen.extend(e["id"] for e in replayed)
            play(bot, bot.new_game(ruleset="classic", deal={"seed": 5})["id"], [{"type": "resign"}])
            seen.append(event_of(stream)["id"])
    assert seen == [1, 2, 3, 4, 5]  # nothing missed, nothing twice


def test_resuming_past_the_retention_starts_with_events_dropped(database_url: str, clean_database: str) -> None:
    settings = settings_for(database_url, account_events_retention_seconds=1.0)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=30) as client:
        bot = Player(client, "Robo")
        for seed in (1, 2):
            play(bot, bot.new_game(ruleset="classic", deal={"seed": seed})["id"], [{"type": "resign"}])
        deadline = time.monotonic() + WAIT
        while _kept(database_url, bot.id):  # the periodic job removes them after a second
            assert time.monotonic() < deadline, "old account events were not removed"
            time.sleep(0.1)
        with sse(client, bot, last_id="1") as stream:
            dropped = event_of(stream)
            assert dropped["type"] == "eventsDropped"
            assert dropped["data"]["after"] == 1
            assert dropped["id"] == dropped["data"]["resumedAfter"] == 2
            play(bot, bot.new_game(ruleset="classic", deal={"seed": 3})["id"], [{"type": "resign"}])
            assert event_of(stream)["id"] == 3
        with sse(client, bot, last_id="3") as stream:  # up to date: nothing dropped, nothing replayed
            play(bot, bot.new_game(ruleset="classic", deal={"seed": 4})["id"], [{"type": "resign"}])
            assert event_of(stream)["id"] == 4


def _kept(database_url: str, player_id: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM account_events WHERE player_id = %s", (player_id,)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("last_id", ["7", "abc", "-1", "1.0"])
def test_a_last_event_id_that_is_not_ours_is_400_unknown_event_id(http: httpx.Client, last_id: str) -> None:
    bot = Player(http, "Robo")
    response = http.get("/players/me/stream", headers={**bot.auth, "Last-Event-ID": last_id})
    assert_problem(response, 400, "unknown_event_id")


def test_the_stream_needs_a_token(http: httpx.Client) -> None:
    assert_problem(http.get("/players/me/stream"), 401, "unauthorized")


def test_a_move_writes_no_account_event_and_the_end_of_a_game_one(http: httpx.Client, database_url: str) -> None:
    bot = Player(http, "Robo")
    game = bot.new_game(ruleset="classic", deal={"seed": 7})
    play(bot, game["id"], [{"type": "draw"}] * 6 + [{"type": "undo"}])
    assert _kept(database_url, bot.id) == 0
    play(bot, game["id"], [{"type": "resign"}])
    assert _kept(database_url, bot.id) == 1
