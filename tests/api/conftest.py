"""A real server for API tests: uvicorn on a free port in a thread, talked to over HTTP with httpx."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import uvicorn
from litestar import Litestar

from domain import Command, command_to_api
from service.clock import utc_now
from service.http.app import create_app
from service.http.server import uvicorn_options
from service.settings import Settings
from tests.live import free_port


@contextmanager
def running_server(
    settings: Settings, clock: Callable[[], datetime] = utc_now, app: Litestar | None = None
) -> Iterator[str]:
    """A real uvicorn server for ``settings`` (its port) in a thread, served as in production
    (``service.http.server``); yields its base URL. ``clock`` is the service's clock (``Clock`` lets a
    test move it); ``app``, one the test made from ``settings`` (to look inside it)."""
    config = uvicorn.Config(
        app or create_app(settings, clock), host="127.0.0.1", port=settings.port, log_level="critical", lifespan="on",
        **uvicorn_options(),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{settings.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive(), "the test server did not stop (an open stream?)"


TEST_DAILY_SECRET = "the-api-tests-deal-secret"
"""The test servers' DAILY_SECRET (tests/integration/test_deal_secret.py covers a server without one)."""


def server_settings(database_url: str, **changes: Any) -> Settings:
    """The settings of a test server: a small body limit, rate limits (solver hints' too) on but never
    reached (every test comes from 127.0.0.1; tests/api/test_rate_limits.py and test_solver_limits.py
    have their own), on a free port."""
    defaults: dict[str, Any] = {
        "database_url": database_url,
        "daily_secret": TEST_DAILY_SECRET,
        "solver_hints_per_minute": 100_000,
        "solver_hint_burst": 100_000,
        "solver_hints_per_minute_per_address": 100_000,
        "solver_hint_address_burst": 100_000,
        "port": free_port(),
        "max_body_bytes": 16 * 1024,
        "rate_limit_writes_per_second": 100_000,
        "rate_limit_write_burst": 100_000,
        "rate_limit_reads_per_second": 100_000,
        "rate_limit_read_burst": 100_000,
        # The account events' round also finishes races whose time is up by the server's clock: a
        # session server whose clock a test moved must not finish another test's races meanwhile
        # (tests/api/test_account_stream.py runs it often, on a server of its own).
        "account_events_sweep_seconds": 3600.0,
    }
    return Settings(**{**defaults, **changes})


@pytest.fixture(scope="session")
def server_url(database_url: str) -> Iterator[str]:
    with running_server(server_settings(database_url)) as url:
        yield url


@pytest.fixture
def client(server_url: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server_url, timeout=10) as http:
        yield http


class Player:
    def __init__(self, client: httpx.Client, name: str) -> None:
        response = client.post("/players", json={"name": name})
        assert response.status_code == 201, response.text
        body = response.json()
        self.id: str = body["id"]
        self.token: str = body["token"]
        self.client = client

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def new_game(self, **body: Any) -> dict[str, Any]:
        response = self.client.post("/games", json=body, headers=self.auth)
        assert response.status_code == 201, response.text
        game: dict[str, Any] = response.json()
        return game

    def move(self, game_id: str, move: dict[str, Any], **headers: str) -> httpx.Response:
        return self.client.post(f"/games/{game_id}/moves", json=move, headers={**self.auth, **headers})


def play(player: Player, game_id: str, moves: list[dict[str, Any]]) -> dict[str, Any]:
    """Send each of ``moves`` (API bodies), each accepted; the last reply."""
    body: dict[str, Any] = {}
    for move in moves:
        response = player.move(game_id, move)
        assert response.status_code == 200, (move, response.text)
        body = response.json()
    return body


def play_line(player: Player, game_id: str, line: list[Command]) -> dict[str, Any]:
    """``play`` for a line of domain commands."""
    return play(player, game_id, [command_to_api(command) for command in line])


@pytest.fixture
def ann(client: httpx.Client) -> Player:
    return Player(client, "Ann")


@pytest.fixture
def bob(client: httpx.Client) -> Player:
    return Player(client, "Bob")


# ---------------------------------------------------------------- a server whose clock a test moves


class Clock:
    """The service's clock in tests: an instant that stands still until a test moves it (no sleeps)."""

    START = datetime(2030, 6, 15, 9, 0, tzinfo=UTC)

    def __init__(self) -> None:
        self.now = self.START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(scope="session")
def _session_clock() -> Clock:
    return Clock()


@pytest.fixture(scope="session")
def clocked_server_url(database_url: str, _session_clock: Clock) -> Iterator[str]:
    with running_server(server_settings(database_url), clock=_session_clock) as url:
        yield url


@pytest.fixture
def clock(_session_clock: Clock) -> Clock:
    """The clock of ``clocked``'s server, set back to ``Clock.START`` for this test."""
    _session_clock.now = Clock.START
    return _session_clock


@pytest.fixture
def clocked(clocked_server_url: str, clean_database: str, clock: Clock) -> Iterator[httpx.Client]:
    """A client of the server whose clock is ``clock``."""
    with httpx.Client(base_url=clocked_server_url, timeout=30) as http:
        yield http
