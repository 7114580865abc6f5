"""GET and POST /watch: many games on one Server-Sent Events connection, over HTTP with a real server."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from service.settings import Settings
from tests.support import assert_problem

from .conftest import Clock, Player, free_port, running_server, server_settings
from .race_support import game_of, started_race
from .test_streams import EventStream, Message

KEEPALIVE = 0.25  # seconds, for this server: also how often a watch checks for missed new games
WAIT = 5.0  # the longest any message may take to arrive
PER_ADDRESS = 3  # open streams per client address, for this server


@pytest.fixture(scope="module")
def watch_server(database_url: str) -> Iterator[str]:
    settings = server_settings(
        database_url, port=free_port(), stream_keepalive_seconds=KEEPALIVE, streams_per_player=PER_ADDRESS,
        streams_per_address=PER_ADDRESS,
    )
    with running_server(settings, clock=Clock()) as url:  # a clock that stands still: the daily deal of one date
        yield url


@pytest.fixture
def client(watch_server: str, clean_database: str) -> Iterator[httpx.Client]:
    """This module's server for conftest's players (``ann``, ``bob``)."""
    with httpx.Client(base_url=watch_server, timeout=10) as http:
        yield http


@pytest.fixture
def http(client: httpx.Client) -> httpx.Client:
    return client


@pytest.fixture
def cid(client: httpx.Client) -> Player:
    return Player(client, "Cid")


@contextmanager
def watching(client: httpx.Client, method: str = "GET", **kwargs: Any) -> Iterator[tuple[EventStream, Any]]:
    """An open watch and its first message's data (``watching``)."""
    with client.stream(method, "/watch", timeout=httpx.Timeout(WAIT), **kwargs) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        stream = EventStream(response)
        first = next_event(stream)
        assert first.event == "watching"
        assert first.id is None
        yield stream, first.json()


def refused(client: httpx.Client, method: str = "GET", **kwargs: Any) -> httpx.Response:
    """The answer to a watch request that must be refused (a stream opened by mistake fails, never hangs)."""
    with client.stream(method, "/watch", timeout=httpx.Timeout(WAIT), **kwargs) as response:
        assert response.status_code != 200, "a watch was opened"
        response.read()
        return response


def next_event(stream: EventStream) -> Message:
    """The next message that is not a keep-alive, within ``WAIT`` (keep-alives never stop)."""
    deadline = time.monotonic() + WAIT
    while True:
        message = stream.next()
        assert message is not None, "the stream ended"
        if message.event is not None:
            return message
        assert time.monotonic() < deadline, "no message came"


def ids(*games: dict[str, Any] | str) -> str:
    return ",".join(game if isinstance(game, str) else game["id"] for game in games)


def named(message: Message) -> tuple[str | None, str, int]:
    """(event, game, version) of a watch message, checking that its id names the same game and version."""
    data = message.json()
    assert message.id is not None
    game, _, version = message.id.partition(":")
    assert data["game"] == game
    inner = data["view"] if "view" in data else data["event"]
    assert inner["version"] == int(version)
    return message.event, game, int(version)


def until(stream: EventStream, wanted: tuple[str, str, int]) -> list[tuple[str | None, str, int]]:
    """Messages up to and including ``wanted``, in order."""
    seen = []
    while True:
        got = named(next_event(stream))
        seen.append(got)
        if got == wanted:
            return seen


DRAW = {"type": "draw"}


# ---------------------------------------------------------------- following games and players


def test_a_watch_follows_three_games_and_a_players_new_game(http: httpx.Client, ann: Player, bob: Player) -> None:
    games = [ann.new_game(deal={"seed": seed}) for seed in (7, 8, 9)]
    with watching(http, params={"games": ids(*games), "players": bob.id}) as (stream, first):
        assert first == {"games": sorted(g["id"] for g in games), "players": [bob.id], "unavailable": []}
        views = {named(next_event(stream)) for _ in games}
        assert views == {("view", g["id"], 1) for g in games}
        for game in games:
            assert ann.move(game["id"], DRAW).status_code == 200
            message = next_event(stream)
            assert named(message) == ("game-event", game["id"], 2)
            assert message.json()["event"] == public_event(http, game["id"], 2)
            view = next_event(stream)
            assert named(view) == ("view", game["id"], 2)
            assert view.json()["view"] == http.get(f"/games/{game['id']}").json()

        new = bob.new_game(deal={"seed": 10})  # started while the watch is open
        assert named(next_event(stream)) == ("view", new["id"], 1)
        assert bob.move(new["id"], DRAW).status_code == 200
        assert until(stream, ("view", new["id"], 2)) == [("game-event", new["id"], 2), ("view", new["id"], 2)]

        assert ann.move(games[1]["id"], {"type": "resign"}).status_code == 200
        assert until(stream, ("end", games[1]["id"], 3))[-2:] == [("game-event", games[1]["id"], 3),
                                                                ("end", games[1]["id"], 3)]
        assert ann.move(games[2]["id"], DRAW).status_code == 200  # the watch goes on with the others
        assert named(next_event(stream)) == ("game-event", games[2]["id"], 3)


def public_event(client: httpx.Client, game_id: str, version: int) -> dict[str, Any]:
    events = client.get(f"/games/{game_id}/events", params={"after": version - 1, "limit": 1}).json()["events"]
    assert events[0]["version"] == version
    event: dict[str, Any] = events[0]
    return event


def test_players_games_in_progress_are_followed_from_the_start(http: httpx.Client, ann: Player, bob: Player) -> None:
    playing = bob.new_game(deal={"seed": 7})
    over = bob.new_game(deal={"seed": 8})
    assert bob.move(over["id"], {"type": "resign"}).status_code == 200
    with watching(http, params={"players": bob.id}) as (stream, first):
        assert first == {"games": [playing["id"]], "players": [bob.id], "unavailable": []}
        assert named(next_event(stream)) == ("view", playing["id"], 1)
        assert ann.new_game(deal={"seed": 9})  # another player's new game is not on the watch
        assert bob.move(playing["id"], DRAW).status_code == 200
        assert named(next_event(stream)) == ("game-event", playing["id"], 2)


def test_a_new_game_without_its_notification_is_found_by_the_periodic_check(
    http: httpx.Client, bob: Player, clean_database: str
) -> None:
    """A game dealt by a process of the previous release sends no notification on canfield_games:
    the watch's check at each keep-alive interval finds it."""
    source = bob.new_game(deal={"seed": 7})
    copy = str(uuid.uuid4())
    with watching(http, params={"players": bob.id}) as (stream, first):
        assert first["games"] == [source["id"]]
        assert named(next_event(stream)) == ("view", source["id"], 1)
        with psycopg.connect(clean_database, autocommit=True) as conn, conn.transaction():
            # the game written as the previous release writes it: the same rows, no NOTIFY
            for table, key in (("games", "id"), ("game_snapshots", "game_id")):
                conn.execute(f"CREATE TEMP TABLE copied AS SELECT * FROM {table} WHERE {key} = %s", (source["id"],))
                conn.execute(f"UPDATE copied SET {key} = %s", (copy,))
                conn.execute(f"INSERT INTO {table} SELECT * FROM copied")
                conn.execute("DROP TABLE copied")
            conn.execute("INSERT INTO events (game_id, version, type, data, recorded_at) SELECT %s, version, type, "
                         "data, recorded_at FROM events WHERE game_id = %s", (copy, source["id"]))
        started = time.monotonic()
        assert named(next_event(stream)) == ("view", copy, 1)
        assert time.monotonic() - started < KEEPALIVE + 2


def test_the_post_form_takes_the_ids_in_a_body_and_resumes_each_game_after_its_version(
    http: httpx.Client, ann: Player
) -> None:
    games = [ann.new_game(deal={"seed": seed}) for seed in (7, 8, 9)]
    for game in games[:2]:
        assert ann.move(game["id"], DRAW).status_code == 200
    body = {"games": [g["id"] for g in games] + [games[0]["id"]], "after": {games[0]["id"]: 1, games[1]["id"]: 2}}
    with watching(http, "POST", json=body) as (stream, first):
        assert first["games"] == sorted(g["id"] for g in games)  # the duplicate counts once
        got = [named(next_event(stream)) for _ in range(3)]
        # game 0 resumes after version 1 (its event 2, then its view); game 1 is caught up (nothing);
        # game 2 was given no version (its view)
        assert sorted(got) == sorted([("view", games[2]["id"], 1), ("game-event", games[0]["id"], 2),
                                      ("view", games[0]["id"], 2)])
        assert ann.move(games[1]["id"], DRAW).status_code == 200
        assert named(next_event(stream)) == ("game-event", games[1]["id"], 3)


def test_last_event_id_resumes_its_game_and_the_others_start_with_their_view(http: httpx.Client, ann: Player) -> None:
    one, two = ann.new_game(deal={"seed": 7}), ann.new_game(deal={"seed": 8})
    for _ in range(2):
        assert ann.move(one["id"], DRAW).status_code == 200
    headers = {"Last-Event-ID": f"{one['id']}:2"}
    with watching(http, params={"games": ids(one, two)}, headers=headers) as (stream, _):
        got = [named(next_event(stream)) for _ in range(3)]
        assert sorted(got) == sorted([("view", two["id"], 1), ("game-event", one["id"], 3), ("view", one["id"], 3)])


def test_resuming_an_ended_game_after_its_end_sends_nothing_and_past_its_version_its_view(
    http: httpx.Client, ann: Player
) -> None:
    ended, playing, fresh = (ann.new_game(deal={"seed": seed}) for seed in (7, 8, 9))
    assert ann.move(ended["id"], {"type": "resign"}).status_code == 200
    body = {"games": [ended["id"], playing["id"], fresh["id"]], "after": {ended["id"]: 2, playing["id"]: 99}}
    with watching(http, "POST", json=body) as (stream, first):
        assert first["games"] == sorted(g["id"] for g in (ended, playing, fresh))  # the ended one sends nothing
        assert {named(next_event(stream)) for _ in range(2)} == {("view", playing["id"], 1), ("view", fresh["id"], 1)}
        assert ann.move(fresh["id"], DRAW).status_code == 200
        assert named(next_event(stream)) == ("game-event", fresh["id"], 2)  # nothing of the ended game came first
    with watching(http, params={"games": ended["id"]}) as (stream, first):  # without a position: its end
        assert first["games"] == [ended["id"]]
        message = next_event(stream)
        assert named(message) == ("end", ended["id"], 2)
        assert message.json()["view"]["status"] == "resigned"


# ---------------------------------------------------------------- private games


def test_a_running_races_game_is_never_shown_to_another_watcher_and_shown_to_its_player(
    http: httpx.Client, ann: Player, bob: Player, cid: Player
) -> None:
    public = cid.new_game(deal={"seed": 3})
    race = started_race(ann, [bob], ruleset="classic", deal={"seed": 42})
    anns, bobs = game_of(race, ann), game_of(race, bob)
    params = {"games": ids(anns, public), "players": ids(ann.id, bob.id)}
    with watching(http, params=params, headers=cid.auth) as (other, first), \
            watching(http, params={"games": anns}, headers=ann.auth) as (own, own_first):
        assert first == {"games": [public["id"]], "players": [ann.id, bob.id], "unavailable": [anns]}
        assert own_first == {"games": [anns], "players": [], "unavailable": []}
        assert named(next_event(other)) == ("view", public["id"], 1)
        assert named(next_event(own)) == ("view", anns, 1)

        assert ann.move(anns, DRAW).status_code == 200
        assert named(next_event(own)) == ("game-event", anns, 2)
        assert cid.move(public["id"], DRAW).status_code == 200
        # the next thing the other watcher hears of is the public game: nothing of the race's games
        message = next_event(other)
        assert named(message) == ("game-event", public["id"], 2)
        time.sleep(3 * KEEPALIVE)  # a few periodic checks of private games and new games go by
        assert cid.move(public["id"], DRAW).status_code == 200
        assert until(other, ("game-event", public["id"], 3)) == [("view", public["id"], 2),
                                                               ("game-event", public["id"], 3)]

        # the race finishes (both resign): its games are public now and start appearing
        assert ann.move(anns, {"type": "resign"}).status_code == 200
        assert bob.move(bobs, {"type": "resign"}).status_code == 200
        ends = set()
        while len(ends) < 2:
            event, game, _ = named(next_event(other))
            assert game in (anns, bobs, public["id"])
            if event == "end":
                ends.add(game)
        assert ends == {anns, bobs}


def test_a_daily_game_in_its_date_is_never_shown_to_another_watcher(
    http: httpx.Client, ann: Player, cid: Player
) -> None:
    daily = ann.new_game(deal={"daily": "today"})
    public = ann.new_game(deal={"seed": 5})
    with watching(http, "POST", json={"games": [daily["id"], public["id"]], "players": [ann.id]}) as (other, first), \
            watching(http, "POST", json={"players": [ann.id]}, headers=ann.auth) as (own, own_first):
        assert first == {"games": [public["id"]], "players": [ann.id], "unavailable": [daily["id"]]}
        assert own_first["games"] == sorted([daily["id"], public["id"]])
        assert {named(next_event(own)) for _ in range(2)} == {("view", daily["id"], 1), ("view", public["id"], 1)}
        assert named(next_event(other)) == ("view", public["id"], 1)

        second = ann.new_game(deal={"seed": 6})  # a public game of ann's, after her private one
        assert ann.move(daily["id"], DRAW).status_code == 200
        assert until(own, ("game-event", daily["id"], 2))[-1] == ("game-event", daily["id"], 2)
        assert ann.move(public["id"], DRAW).status_code == 200
        seen = until(other, ("game-event", public["id"], 2))
        assert all(game != daily["id"] for _, game, _ in seen)
        assert ("view", second["id"], 1) in seen
    with watching(http, params={"games": daily["id"]}, headers=cid.auth) as (_, first):
        assert first["unavailable"] == [daily["id"]]  # another player's token changes nothing


def test_an_unknown_game_looks_like_a_private_one(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 7})
    unknown = "00000000-0000-4000-8000-000000000000"
    with watching(http, params={"games": ids(game, unknown)}) as (stream, first):
        assert first == {"games": [game["id"]], "players": [], "unavailable": [unknown]}
        assert named(next_event(stream)) == ("view", game["id"], 1)


def test_hidden_cards_stay_hidden(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 7})
    with watching(http, params={"games": game["id"]}) as (stream, _):
        view = next_event(stream).json()["view"]
        assert view == http.get(f"/games/{game['id']}").json()
        assert ann.move(game["id"], DRAW).status_code == 200
        event = next_event(stream).json()["event"]
        assert event == public_event(http, game["id"], 2)
        dealt = json.dumps(public_event(http, game["id"], 1))
        assert "deck" not in json.loads(dealt)["data"]  # the public log withholds the deck while playing


# ---------------------------------------------------------------- bad input and the cap


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"games": "not-a-uuid"}, "watch_bad_id"),
        ({"games": "00000000-0000-4000-8000-000000000000,"}, "watch_bad_id"),
        ({"players": "{00000000-0000-4000-8000-000000000000}"}, "watch_bad_id"),
        ({}, "watch_nothing_to_watch"),
        ({"games": ",".join(f"00000000-0000-4000-8000-{n:012d}" for n in range(301))}, "watch_too_many_ids"),
    ],
)
def test_bad_query_is_a_400_with_its_own_code(http: httpx.Client, params: dict[str, str], code: str) -> None:
    assert_problem(refused(http, params=params), 400, code)


def test_three_hundred_ids_are_taken_and_duplicates_count_once(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 7})
    others = [f"00000000-0000-4000-8000-{n:012d}" for n in range(299)]
    body = {"games": [game["id"], *others, game["id"]]}
    with watching(http, "POST", json=body) as (stream, first):
        assert first["games"] == [game["id"]]
        assert len(first["unavailable"]) == 299
        assert named(next_event(stream)) == ("view", game["id"], 1)
    body["games"].append("00000000-0000-4000-8000-999999999999")
    assert_problem(refused(http, "POST", json=body), 400, "watch_too_many_ids")


GAME = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ([GAME], "watch_bad_body"),
        ({"games": GAME}, "watch_bad_body"),
        ({"games": [GAME], "colour": "red"}, "watch_bad_body"),
        ({"games": [GAME], "after": [1]}, "watch_bad_body"),
        ({"games": [7]}, "watch_bad_id"),
        ({"players": ["nobody"]}, "watch_bad_id"),
        ({"games": [], "players": []}, "watch_nothing_to_watch"),
        ({"games": [GAME], "after": {"x": 1}}, "watch_bad_position"),
        ({"games": [GAME], "after": {GAME: -1}}, "watch_bad_position"),
        ({"games": [GAME], "after": {GAME: "1"}}, "watch_bad_position"),
    ],
)
def test_bad_body_is_a_400_with_its_own_code(http: httpx.Client, body: Any, code: str) -> None:
    assert_problem(refused(http, "POST", json=body), 400, code)


@pytest.mark.parametrize("header", ["7", f"{GAME}:x", f"{GAME}:99999999999", "x:1"])
def test_a_bad_last_event_id_is_a_400(http: httpx.Client, header: str) -> None:
    assert_problem(refused(http, params={"games": GAME}, headers={"Last-Event-ID": header}), 400,
                   "watch_bad_position")
    assert_problem(refused(http, "POST", json={"games": [GAME]}, headers={"Last-Event-ID": header}), 400,
                   "watch_bad_position")


def test_one_watch_takes_one_stream_slot_of_its_address(http: httpx.Client, ann: Player) -> None:
    games = [ann.new_game(deal={"seed": seed}) for seed in (7, 8, 9, 10)]
    with watching(http, params={"games": ids(*games)}), watching(http, "POST", json={"games": [games[0]["id"]]}), \
            http.stream("GET", f"/games/{games[0]['id']}/stream", timeout=WAIT) as third:
        assert third.status_code == 200  # two watches of 4 and 1 games, and a game stream: 3 slots
        assert_problem(refused(http, params={"games": games[1]["id"]}), 429, "rate_limited")
    # closing a stream gives its slot back (once the server has seen the disconnect)
    deadline = time.monotonic() + WAIT
    while True:
        with http.stream("GET", "/watch", params={"players": ann.id}, timeout=WAIT) as response:
            if response.status_code == 200:
                assert EventStream(response).next_event().event == "watching"
                break
            assert response.status_code == 429
            assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_watch_counts_once_for_its_player_too(database_url: str, clean_database: str) -> None:
    settings = Settings(database_url=database_url, port=free_port(), stream_keepalive_seconds=KEEPALIVE,
                        streams_per_player=1, streams_per_address=10)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=10) as client:
        ann = Player(client, "Ann")
        games = [ann.new_game(deal={"seed": seed}) for seed in (7, 8)]
        with watching(client, params={"games": ids(*games)}, headers=ann.auth):
            assert_problem(refused(client, params={"games": games[0]["id"]}, headers=ann.auth), 429,
                           "rate_limited")
