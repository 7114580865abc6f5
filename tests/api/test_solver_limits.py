"""Solver hints are bounded: per-player and per-address budgets (429), a bounded queue (503
solver_busy), and work whose client has gone is dropped. A refused or abandoned hint records nothing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from service.http.app import create_app
from tests.support import assert_problem

from .conftest import Player, running_server, server_settings

HARD_SEED = 7  # open-runs: the solver decides nothing within a second (so a hint takes its whole budget)
EASY_SEED = 1


def new_game(player: Player, seed: int) -> str:
    response = player.client.post("/games", json={"ruleset": "open-runs", "deal": {"seed": seed}},
                                  headers=player.auth)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def solver_hint(player: Player, game: str, timeout: float = 30) -> httpx.Response:
    return player.client.get(f"/games/{game}/hints", params={"solver": "true"}, headers=player.auth,
                             timeout=timeout)


def event_types(client: httpx.Client, game: str) -> list[str]:
    return [event["type"] for event in client.get(f"/games/{game}/events").json()["events"]]


@contextmanager
def server(database_url: str, **settings: Any) -> Iterator[tuple[httpx.Client, Any]]:
    """A server with ``settings`` (over the tests' defaults), its client and its Games facade."""
    chosen = server_settings(database_url, **settings)
    app = create_app(chosen)
    with running_server(chosen, app=app) as url, httpx.Client(base_url=url, timeout=30) as http:
        yield http, app


def test_a_burst_beyond_the_players_budget_is_429_and_records_nothing(database_url: str, clean_database: str) -> None:
    with server(database_url, solver_hints_per_minute=1, solver_hint_burst=2, solver_hint_seconds=0.2) as (http, _):
        ann = Player(http, "Ann")
        games = [new_game(ann, EASY_SEED) for _ in range(3)]
        assert [solver_hint(ann, game).status_code for game in games[:2]] == [200, 200]
        refused = solver_hint(ann, games[2])
        body = assert_problem(refused, 429, "rate_limited")
        assert "solver hints" in body["detail"]
        assert int(refused.headers["retry-after"]) >= 1
        assert [event_types(http, game)[-1] for game in games] == ["SolverHintUsed", "SolverHintUsed", "GameDealt"]
        # plain hints are not solver hints: still answered
        assert http.get(f"/games/{games[2]}/hints").status_code == 200


def test_every_token_of_a_player_spends_one_hint_budget(database_url: str, clean_database: str) -> None:
    with server(database_url, solver_hints_per_minute=1, solver_hint_burst=2, solver_hint_seconds=0.2) as (http, _):
        ann, bob = Player(http, "Ann"), Player(http, "Bob")
        tokens = [ann.token]
        for name in ("phone", "bot"):
            minted = http.post("/players/me/tokens", json={"name": name, "scopes": ["play"]}, headers=ann.auth)
            assert minted.status_code == 201, minted.text
            tokens.append(minted.json()["token"])
        games = [new_game(ann, EASY_SEED) for _ in tokens]
        answers = [http.get(f"/games/{game}/hints", params={"solver": "true"},
                            headers={"Authorization": f"Bearer {token}"}) for game, token in
                   zip(games, tokens, strict=True)]
        assert [answer.status_code for answer in answers] == [200, 200, 429], "one budget for the three tokens"
        assert "solver hints" in assert_problem(answers[2], 429, "rate_limited")["detail"]
        assert event_types(http, games[2]) == ["GameDealt"]
        bobs = new_game(bob, EASY_SEED)
        assert solver_hint(bob, bobs).status_code == 200, "another player keeps their own budget"


def test_the_address_budget_covers_every_token_from_it(database_url: str, clean_database: str) -> None:
    with server(database_url, solver_hints_per_minute_per_address=1, solver_hint_address_burst=3,
                solver_hint_seconds=0.2) as (http, _):
        players = [Player(http, name) for name in ("Ann", "Bob")]
        games = [new_game(players[i % 2], EASY_SEED) for i in range(4)]
        answers = [solver_hint(players[i % 2], games[i]).status_code for i in range(4)]
        assert answers == [200, 200, 200, 429]  # two tokens, one address
        assert event_types(http, games[3]) == ["GameDealt"]


def test_a_full_queue_is_503_and_records_nothing(database_url: str, clean_database: str) -> None:
    with server(database_url, solver_queue_max=0, solver_hint_seconds=1.0) as (http, app):
        ann, bob = Player(http, "Ann"), Player(http, "Bob")
        busy, waiting = new_game(ann, HARD_SEED), new_game(bob, EASY_SEED)
        first: list[httpx.Response] = []
        thread = threading.Thread(target=lambda: first.append(solver_hint(ann, busy)))
        thread.start()
        solver = app.state.services.solver
        deadline = time.monotonic() + 10
        while solver.started == 0 and time.monotonic() < deadline:  # the worker is Ann's now
            time.sleep(0.01)
        refused = solver_hint(bob, waiting)
        thread.join()
        assert_problem(refused, 503, "solver_busy")
        assert int(refused.headers["retry-after"]) >= 1
        assert first[0].status_code == 200
        assert event_types(http, waiting) == ["GameDealt"]
        assert event_types(http, busy)[-1] == "SolverHintUsed"


def test_abandoned_hints_never_run_and_do_not_delay_a_later_one(database_url: str, clean_database: str) -> None:
    with server(database_url, solver_queue_max=20, solver_hint_seconds=1.0) as (http, app):
        ann, bob = Player(http, "Ann"), Player(http, "Bob")
        hard, easy = new_game(ann, HARD_SEED), new_game(bob, EASY_SEED)
        solver = app.state.services.solver

        def abandoned() -> None:
            try:
                solver_hint(ann, hard, timeout=0.3)
            except httpx.TimeoutException:
                pass  # the client gives up and closes its connection
            else:
                raise AssertionError("the hint was expected to take longer than the client waited")

        threads = [threading.Thread(target=abandoned) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        later = solver_hint(bob, easy)
        assert later.status_code == 200
        assert later.json()["solver"]["result"] in {"won", "lost", "unknown"}  # answered (a busy machine: unknown)
        # the one job running when its client left, and Bob's: the other seven never ran
        assert solver.started == 2
        assert solver.waiting == 0
        assert event_types(http, hard) == ["GameDealt"]  # abandoned: nothing recorded
