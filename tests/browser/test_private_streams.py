"""Private games live: a daily game during its date answers only to its player's token, reads and
stream alike, so the page reads its stream with fetch and the token (EventSource cannot send one),
and resumes it with Last-Event-ID after the server went away. A stream refused because the player's
streams are all in use is tried again after Retry-After; the challenges notice, refused, reads its
list instead and leaves the streams to games."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.live import ServerProcess

from .accounts import Account
from .conftest import DEFAULT_LIMITS, PageOpener
from .pages import Page


@pytest.fixture
def restartable(open_page: PageOpener, database_url: str, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    """A server of this test's own (default limits), which the test may kill and start again on its port."""
    servers = [ServerProcess(database_url, tmp_path / "server.log", env=DEFAULT_LIMITS)]
    try:
        servers[0].wait_until_up()
        yield servers
        open_page.check_consoles_before_a_server_stops()
    finally:
        for server in servers:
            server.stop()


def test_a_private_daily_game_streams_to_its_players_pages_and_resumes_after_a_restart(
    open_page: Callable[..., Page], restartable: list[ServerProcess], database_url: str, tmp_path: Path
) -> None:
    server = restartable[0]
    first = open_page(server=server)
    first.register("Private Player")
    first.open("#/daily")
    first.click("[data-action=play-daily]")
    game_id = first.wait_for_game()
    assert httpx.get(f"{server.url}/games/{game_id}", timeout=10).status_code == 401, "a daily game is private today"

    second = open_page(server=server)
    second.adopt(first.player())  # the same player in another window
    second.open(f"#/game/{game_id}")
    second.wait_for(lambda: second.table() == first.table(), "the second page to show the game")
    second.record_stream_requests()

    first.click(".table button[data-pile=stock]")
    version = first.wait_version(1)
    second.wait_for(lambda: second.table() == first.table(), "the draw to reach the other page by its stream")

    second.expect_network_errors()  # the stream breaks off and reconnecting fails while the server is down
    first.expect_network_errors()
    server.kill()
    restartable.append(ServerProcess(database_url, tmp_path / "server-again.log", env=DEFAULT_LIMITS, port=server.port))
    restartable[-1].wait_until_up()

    first.click(".table button[data-pile=stock]")
    first.wait_version(version)
    second.wait_for(lambda: second.table() == first.table(), "the next draw, after the stream reconnected", timeout=40)
    requests = game_streams(second, game_id)  # (the page's account stream reconnects on its own)
    token = first.player()["token"]
    assert requests, "the page opened its stream again"
    assert all(r["headers"].get("Authorization") == f"Bearer {token}" for r in requests), "every attempt sent the token"
    assert {r["headers"].get("Last-Event-ID") for r in requests} == {str(version)}, (
        "each resumed after the last version seen"
    )
    assert "Live updates stopped" not in second.status_text()


def game_streams(page: Page, game_id: str) -> list[dict[str, Any]]:
    """The page's requests of the game's stream (``record_stream_requests``), leaving out its account stream."""
    return [r for r in page.stream_requests() if r["url"].endswith(f"/games/{game_id}/stream")]


@pytest.fixture
def one_stream_each(open_page: PageOpener, database_url: str, tmp_path: Path) -> Iterator[ServerProcess]:
    """A server that lets each player hold two open streams, and says so with Retry-After: 2: a page's
    account stream (its challenges notice) and one game stream."""
    env = {**DEFAULT_LIMITS, "STREAMS_PER_PLAYER": "2", "STREAM_KEEPALIVE_SECONDS": "2"}
    server = ServerProcess(database_url, tmp_path / "server.log", env=env)
    try:
        server.wait_until_up()
        yield server
        open_page.check_consoles_before_a_server_stops()
    finally:
        server.stop()


def test_a_stream_refused_with_429_is_tried_again_after_retry_after(
    open_page: Callable[..., Page], one_stream_each: ServerProcess
) -> None:
    first = open_page(server=one_stream_each)
    first.register("One Stream")
    game_id = first.deal("classic", "seed", 11)
    second = open_page(server=one_stream_each)
    second.adopt(first.player())
    second.record_stream_requests()
    second.open(f"#/game/{game_id}")  # the first page holds the player's streams: its account's and the game's
    second.wait_for(lambda: [r["status"] for r in game_streams(second, game_id)][:1] == [429], "a refusal")

    first.open("#/stats")  # the first page lets its game's stream go
    second.wait_for(
        lambda: 200 in [r["status"] for r in game_streams(second, game_id)], "the stream, tried again", timeout=30
    )
    statuses = [r["status"] for r in game_streams(second, game_id)]
    assert statuses[0] == 429, statuses
    assert statuses[-1] == 200, statuses
    assert set(statuses) <= {429, 200}, statuses

    first.open(f"#/game/{game_id}")  # now this page waits for a stream; its moves still go through
    first.click(".table button[data-pile=stock]")
    first.wait_version(1)
    second.wait_for(lambda: second.table() == first.table(), "the draw, by the stream that got its turn")


def test_the_challenges_notice_gives_way_when_the_players_streams_are_all_in_use(
    open_page: Callable[..., Page], one_stream_each: ServerProcess
) -> None:
    first = open_page(server=one_stream_each)
    first.register("Two Streams")
    first.deal("classic", "seed", 11)  # the page holds the player's two streams: its account's and the game's
    cy = Account.register(one_stream_each.url, "Cy Waiting")
    cy.post("/challenges", {"to": first.player()["id"]})
    second = open_page(server=one_stream_each)
    second.adopt(first.player())
    second.record_stream_requests()
    second.driver.refresh()  # another page of the same player: its account stream is refused (429)
    notice = "#challenges li[data-direction=received]"
    second.wait_for(lambda: second.js("return !!document.querySelector(arguments[0])", notice),
                    "Cy's challenge, read from GET /challenges instead")
    assert second.text(notice).startswith("Cy Waiting challenges you")
    time.sleep(3)  # past the Retry-After (2 s) the refused stream would have been tried again
    accounts = [r["status"] for r in second.stream_requests() if r["url"].endswith("/players/me/stream")]
    assert accounts == [429], "refused once, the notice reads its list from then on: it never takes a game's stream"
