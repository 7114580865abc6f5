"""GET /games/{id}/stream: Server-Sent Events, in-process and across two real server processes."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from service.settings import Settings
from tests.support import assert_problem

from ..live import ServerProcess
from .conftest import Player, free_port, running_server

KEEPALIVE = 0.25  # seconds, for these servers
CAP = 2  # open streams per player, for these servers
WAIT = 5.0  # the longest any message may take to arrive


@dataclass
class Message:
    event: str | None = None
    id: str | None = None
    data: str | None = None
    comments: list[str] = field(default_factory=list)

    def json(self) -> Any:
        import json

        assert self.data is not None
        return json.loads(self.data)


class EventStream:
    """An open SSE response, read one message at a time (httpx's read timeout bounds each wait)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lines = response.iter_lines()

    def next(self) -> Message | None:
        """The next message or comment block; None once the server has closed the stream."""
        message = Message()
        seen = False
        for line in self.lines:
            if line == "":
                if seen:
                    return message
                continue
            seen = True
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "":
                message.comments.append(value)
            elif name == "event":
                message.event = value
            elif name == "id":
                message.id = value
            elif name == "data":
                message.data = value if message.data is None else message.data + "\n" + value
        return message if seen else None

    def next_event(self) -> Message:
        """The next message that is not a keep-alive."""
        while True:
            message = self.next()
            assert message is not None, "the stream ended"
            if message.event is not None:
                return message

    def assert_closed(self) -> None:
        deadline = time.monotonic() + WAIT  # keep-alives never stop on a stream left open
        while (message := self.next()) is not None:
            assert message.event is None, f"expected the end of the stream, got {message}"
            assert time.monotonic() < deadline, "the stream was not closed"


@contextmanager
def open_stream(client: httpx.Client, game_id: str, **kwargs: Any) -> Iterator[EventStream]:
    with client.stream("GET", f"/games/{game_id}/stream", timeout=httpx.Timeout(WAIT), **kwargs) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        yield EventStream(response)


def public_event(client: httpx.Client, game_id: str, version: int) -> dict[str, Any]:
    events = client.get(f"/games/{game_id}/events", params={"after": version - 1, "limit": 1}).json()["events"]
    assert events
    assert events[0]["version"] == version
    event: dict[str, Any] = events[0]
    return event


@pytest.fixture(scope="module")
def stream_server(database_url: str) -> Iterator[str]:
    settings = Settings(
        database_url=database_url, port=free_port(), stream_keepalive_seconds=KEEPALIVE, streams_per_player=CAP
    )
    with running_server(settings) as url:  # it also checks that open streams let the server stop
        yield url


@pytest.fixture
def http(stream_server: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stream_server, timeout=10) as client:
        yield client


@pytest.fixture
def ann(http: httpx.Client) -> Player:
    return Player(http, "Ann")


# ---------------------------------------------------------------- one process


def test_the_view_then_each_new_event_redacted_with_keepalives(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 7})
    with open_stream(http, game["id"]) as stream:
        first = stream.next_event()
        assert (first.event, first.id) == ("view", "1")
        assert first.json() == http.get(f"/games/{game['id']}").json()

        started = time.monotonic()
        keepalive = stream.next()
        assert keepalive is not None
        assert keepalive.event is None
        assert keepalive.comments == ["keep-alive"]
        assert time.monotonic() - started < KEEPALIVE + 2

        assert ann.move(game["id"], {"type": "draw"}).status_code == 200
        drawn = stream.next_event()
        assert (drawn.event, drawn.id) == ("game-event", "2")
        assert drawn.json() == public_event(http, game["id"], 2)
        assert drawn.json()["type"] == "StockDrawn"
        assert len(drawn.json()["data"]["cards"]) == 3
        after_draw = stream.next_event()
        assert (after_draw.event, after_draw.id) == ("view", "2")
        assert after_draw.json() == http.get(f"/games/{game['id']}").json()

        moved = ann.move(game["id"], {"type": "draw"}).json()["events"]
        assert [stream.next_event().json() for _ in moved] == [
            public_event(http, game["id"], e["version"]) for e in moved
        ]
        assert stream.next_event().event == "view"


@pytest.mark.smoke
def test_each_change_is_followed_by_the_new_view_undo_included(http: httpx.Client, ann: Player) -> None:
    """A client keeps its table from the stream alone: after an undone draw the view says what
    the waste shows now (the MoveUndone event alone does not)."""
    game = ann.new_game(ruleset="classic", deal={"seed": 17})
    with open_stream(http, game["id"]) as stream:
        assert stream.next_event().event == "view"
        for move in ({"type": "draw"}, {"type": "draw"}, {"type": "undo"}):
            reply = ann.move(game["id"], move).json()
            for event in reply["events"]:
                message = stream.next_event()
                assert (message.event, message.id) == ("game-event", str(event["version"]))
            view = stream.next_event()
            assert (view.event, view.id) == ("view", str(reply["game"]["version"]))
            assert view.json() == reply["game"] == http.get(f"/games/{game['id']}").json()
        assert len(view.json()["table"]["waste"]) == 3, "after the undo the first packet shows again"


def test_resume_with_last_event_id_or_after_gives_only_later_events(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 3})
    for _ in range(3):
        assert ann.move(game["id"], {"type": "draw"}).status_code == 200  # versions 2, 3, 4
    with open_stream(http, game["id"], headers={"Last-Event-ID": "2"}) as stream:
        caught_up = [stream.next_event() for _ in range(3)]
        assert [(m.event, m.id) for m in caught_up] == [("game-event", "3"), ("game-event", "4"), ("view", "4")]
        quiet = stream.next()
        assert quiet is not None
        assert quiet.comments == ["keep-alive"]
        assert ann.move(game["id"], {"type": "draw"}).status_code == 200
        assert stream.next_event().id == "5"
    with open_stream(http, game["id"], params={"after": 4}) as stream:
        assert stream.next_event().json() == public_event(http, game["id"], 5)
    with open_stream(http, game["id"], params={"after": 0}, headers={"Last-Event-ID": "4"}) as stream:
        assert stream.next_event().id == "5"  # the header wins

    for headers, params in (({"Last-Event-ID": "x"}, {}), ({"Last-Event-ID": "6"}, {}), ({}, {"after": -1})):
        response = http.get(f"/games/{game['id']}/stream", headers=headers, params=params)
        assert_problem(response, 400, "invalid_request")


def test_resigning_sends_the_last_events_and_the_end_then_closes(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 5})
    with open_stream(http, game["id"]) as stream:
        assert stream.next_event().event == "view"
        assert ann.move(game["id"], {"type": "resign"}).status_code == 200
        resigned = stream.next_event()
        assert (resigned.event, resigned.id) == ("game-event", "2")
        assert resigned.json() == public_event(http, game["id"], 2)
        end = stream.next_event()
        assert (end.event, end.id) == ("end", "2")
        assert end.json() == http.get(f"/games/{game['id']}").json()
        assert end.json()["status"] == "resigned"
        stream.assert_closed()

    with open_stream(http, game["id"]) as stream:  # a finished game: its view and the end
        assert [(m.event, m.id) for m in (stream.next_event(), stream.next_event())] == [("view", "2"), ("end", "2")]
        stream.assert_closed()
    with open_stream(http, game["id"], headers={"Last-Event-ID": "1"}) as stream:
        assert [m.event for m in (stream.next_event(), stream.next_event())] == ["game-event", "end"]
        stream.assert_closed()
    # EventSource reconnecting after the end: 204 makes it stop
    assert http.get(f"/games/{game['id']}/stream", headers={"Last-Event-ID": "2"}).status_code == 204


def test_unknown_game_is_a_404_problem(http: httpx.Client) -> None:
    response = http.get("/games/00000000-0000-4000-8000-000000000000/stream")
    assert_problem(response, 404, "not_found")


def test_open_streams_are_capped_per_player(http: httpx.Client, ann: Player) -> None:
    game = ann.new_game(deal={"seed": 9})
    with open_stream(http, game["id"], headers=ann.auth), open_stream(http, game["id"], headers=ann.auth) as second:
        refused = http.get(f"/games/{game['id']}/stream", headers=ann.auth)
        assert_problem(refused, 429, "rate_limited")
        assert int(refused.headers["retry-after"]) >= 1
        with open_stream(http, game["id"]) as anonymous:  # without a token: this address's own slots
            assert anonymous.next_event().event == "view"
        assert second.next_event().event == "view"
    # closing a stream gives its slot back (once the server has seen the disconnect)
    deadline = time.monotonic() + WAIT
    while True:
        with http.stream("GET", f"/games/{game['id']}/stream", headers=ann.auth) as response:
            if response.status_code == 200:
                assert EventStream(response).next_event().event == "view"
                break
            assert response.status_code == 429
            assert time.monotonic() < deadline
        time.sleep(0.05)
    bad = http.get(f"/games/{game['id']}/stream", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401


def test_a_stream_survives_the_listening_connection_dropping(
    http: httpx.Client, ann: Player, database_url: str
) -> None:
    game = ann.new_game(deal={"seed": 11})
    with open_stream(http, game["id"]) as stream:
        assert stream.next_event().event == "view"
        with psycopg.connect(database_url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'canfield-streams' AND datname = current_database()"
            ).fetchone()
        assert killed is not None
        assert killed[0] >= 1
        assert ann.move(game["id"], {"type": "draw"}).status_code == 200  # maybe while nobody listens
        assert stream.next_event().json() == public_event(http, game["id"], 2)


# ---------------------------------------------------------------- two processes


def test_a_move_through_one_process_reaches_a_stream_on_another(clean_database: str, tmp_path: Path) -> None:
    fast = {"STREAM_KEEPALIVE_SECONDS": "0.5"}
    a = ServerProcess(clean_database, tmp_path / "a.log", env=fast)
    b = ServerProcess(clean_database, tmp_path / "b.log", env=fast)
    try:
        a.wait_until_up()
        b.wait_until_up()
        with httpx.Client(base_url=a.url, timeout=10) as on_a, httpx.Client(base_url=b.url, timeout=10) as on_b:
            ann = Player(on_b, "Ann")
            game = ann.new_game(deal={"seed": 21})
            with open_stream(on_a, game["id"]) as stream:
                assert stream.next_event().id == "1"
                assert ann.move(game["id"], {"type": "draw"}).status_code == 200  # through B
                delivered = stream.next_event()
                assert (delivered.event, delivered.id) == ("game-event", "2")
                assert delivered.json() == public_event(on_a, game["id"], 2) == public_event(on_b, game["id"], 2)
                assert stream.next_event().json() == on_b.get(f"/games/{game['id']}").json()  # then the new view

                # Asked to stop, A ends its open streams instead of waiting for them forever: with a
                # last message that says so.
                a.process.send_signal(signal.SIGTERM)
                last = stream.next_event()
                assert (last.event, last.id) == ("shutdown", None)
                stream.assert_closed()
            # uvicorn re-raises the signal once it has shut down gracefully
            assert a.process.wait(timeout=10) in (0, -signal.SIGTERM), a.log.read_text(errors="replace")
    finally:
        a.kill()
        b.kill()


def test_open_streams_are_capped_per_address_whatever_the_accounts(database_url: str, clean_database: str) -> None:
    settings = Settings(database_url=database_url, port=free_port(), stream_keepalive_seconds=KEEPALIVE,
                        streams_per_player=CAP, streams_per_address=CAP + 1)
    with running_server(settings) as url, httpx.Client(base_url=url, timeout=10) as client:
        fresh = [Player(client, f"Fresh {number}") for number in range(3)]
        game = fresh[0].new_game(deal={"seed": 9})["id"]
        with open_stream(client, game, headers=fresh[0].auth), open_stream(client, game, headers=fresh[1].auth), \
                open_stream(client, game, headers=fresh[2].auth):
            refused = client.get(f"/games/{game}/stream", headers=fresh[2].auth)
            assert_problem(refused, 429, "rate_limited")
            assert "per client address" in refused.json()["detail"]
            anonymous = client.get(f"/games/{game}/stream")
            assert_problem(anonymous, 429, "rate_limited")
