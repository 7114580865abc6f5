"""The analysis queue under a flood, over HTTP: a player past their cap of queued-or-running analyses
(and an address past its cap) is ``429 analysis_queue_full`` with ``Retry-After`` and nothing is
queued, while asking about a job already there still answers; a table searched by one job is not
searched again by the next (the verdict cache), and a cached won line still replays.

The claim order and the budget are tested on the queue and the runner themselves against PostgreSQL
(tests/integration/test_analysis_fairness.py): no wall time here."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from domain import Draw, Resign, line_wins, parse_command, replay
from domain.analysis import WON, position_key, positions
from domain.codec import event_from_data
from tests.support import LEAKS, WON_DEAL, thrown_away

from .conftest import Player, play_line, running_server, server_settings

HARD_DEAL = 7  # open-runs seed 7: the solver does not decide it within a second, so a job stays waiting
LOST_DEAL = 4


@pytest.fixture(scope="module")
def capped_url(database_url: str) -> Iterator[str]:
    """A server that takes jobs and runs none, with small caps: 2 per player, 3 per address."""
    settings = server_settings(database_url, analysis_workers=0, analysis_jobs_per_player=2,
                               analysis_jobs_per_address=3, analysis_job_seconds=20.0)
    with running_server(settings) as url:
        yield url


@pytest.fixture
def capped(capped_url: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=capped_url, timeout=10) as http:
        yield http


def _ended_game(player: Player, seed: int, draws: int = 1) -> str:
    game_id: str = player.new_game(ruleset="open-runs", deal={"seed": seed})["id"]
    play_line(player, game_id, [*[Draw()] * draws, Resign()])
    return game_id


def _jobs(database_url: str) -> set[str]:
    with psycopg.connect(database_url) as conn:
        return {str(row[0]) for row in conn.execute("SELECT game_id FROM analysis_jobs").fetchall()}


def _refused(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert int(response.headers["retry-after"]) >= 1
    body: dict[str, Any] = response.json()
    assert body["code"] == "analysis_queue_full"
    assert not any(leak in body["detail"] for leak in LEAKS)
    return body


def test_a_player_past_their_cap_is_429_analysis_queue_full_and_nothing_is_queued(
    capped: httpx.Client, database_url: str
) -> None:
    ann = Player(capped, "Ann")
    games = [_ended_game(ann, HARD_DEAL) for _ in range(3)]
    for game_id in games[:2]:
        assert capped.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    refused = _refused(capped.post(f"/games/{games[2]}/analysis", headers=ann.auth))
    assert "you already have 2 analyses queued or running" in refused["detail"]
    assert _jobs(database_url) == set(games[:2])
    assert capped.get(f"/games/{games[2]}/analysis").status_code == 404
    # asking about a job already there queues nothing and is never refused
    again = capped.post(f"/games/{games[0]}/analysis", headers=ann.auth)
    assert again.status_code == 202
    assert again.json()["status"] in {"queued", "running"}
    # once one of them is done, there is a place again
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE analysis_jobs SET status = 'done', result = '{\"positions\": []}', finished_at = now()"
                     " WHERE game_id = %s", (games[0],))
    assert capped.post(f"/games/{games[2]}/analysis", headers=ann.auth).status_code == 202
    assert _jobs(database_url) == set(games)


def test_an_address_past_its_cap_is_429_whoever_asks(capped: httpx.Client, database_url: str) -> None:
    ann, bob, cat = Player(capped, "Ann"), Player(capped, "Bob"), Player(capped, "Cat")
    for player in (ann, ann, bob):
        game_id = _ended_game(player, HARD_DEAL)
        assert capped.post(f"/games/{game_id}/analysis", headers=player.auth).status_code == 202
    game_id = _ended_game(cat, HARD_DEAL)
    refused = _refused(capped.post(f"/games/{game_id}/analysis", headers=cat.auth))
    assert "from your network address" in refused["detail"]
    assert game_id not in _jobs(database_url)


def _analysis(client: httpx.Client, game_id: str, seconds: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        body: dict[str, Any] = client.get(f"/games/{game_id}/analysis").json()
        if body["status"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def _result(database_url: str, game_id: str) -> dict[str, Any]:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT result FROM analysis_jobs WHERE game_id = %s", (game_id,)).fetchone()
    assert row is not None
    result: dict[str, Any] = row[0]
    return result


def test_a_table_searched_by_one_job_is_not_searched_again_by_the_next(
    client: httpx.Client, ann: Player, bob: Player, database_url: str
) -> None:
    along, wrong = thrown_away()
    first, second = (player.new_game(ruleset="open-runs", deal={"seed": WON_DEAL})["id"] for player in (ann, bob))
    for player, game_id in ((ann, first), (bob, second)):  # the same moves on the same deal: the same tables
        play_line(player, game_id, [*along, wrong, Resign()])
    assert client.post(f"/games/{first}/analysis", headers=ann.auth).status_code == 202
    body = _analysis(client, first)
    assert body["status"] == "done", body
    searched = _result(database_url, first)
    assert searched["solved"] >= 1
    assert searched["cached"] == 0
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT type, data FROM events WHERE game_id = %s ORDER BY version", (first,)).fetchall()
        keys = sorted({position_key(p.state) for p in positions([event_from_data(*row) for row in rows])})
        kept = conn.execute("SELECT count(*) FROM analysis_verdicts WHERE position_key = ANY(%s)", (keys,)).fetchone()
    assert kept == (searched["solved"],)  # each search's verdict kept, under its table's key

    assert client.post(f"/games/{second}/analysis", headers=bob.auth).status_code == 202
    again = _analysis(client, second)
    assert again["status"] == "done", again
    reused = _result(database_url, second)
    assert (reused["solved"], reused["cached"]) == (0, searched["solved"])  # no search at all
    assert again["positions"] == body["positions"]
    assert again["turningPoint"] == body["turningPoint"]
    assert again["budgetSpent"] is False
    with psycopg.connect(database_url) as conn:  # the cached won line, replayed from the position before the turn
        rows = conn.execute("SELECT type, data FROM events WHERE game_id = %s ORDER BY version", (second,)).fetchall()
    point = again["turningPoint"]
    start = replay(event_from_data(kind, data) for kind, data in rows[: point["before"]])
    assert line_wins(start, [parse_command(move) for move in point["winningLineBefore"]]).won
    assert WON in {p["verdict"] for p in again["positions"]}


def test_a_kept_won_line_that_does_not_replay_is_searched_again(
    client: httpx.Client, ann: Player, database_url: str
) -> None:
    game_id = _ended_game(ann, LOST_DEAL, draws=0)
    first = ann.new_game(ruleset="open-runs", deal={"seed": LOST_DEAL})["id"]
    play_line(ann, first, [Resign()])
    assert client.post(f"/games/{first}/analysis", headers=ann.auth).status_code == 202
    assert _analysis(client, first)["status"] == "done"
    with psycopg.connect(database_url, autocommit=True) as conn:  # a kept verdict made wrong: won, by a non-line
        conn.execute("UPDATE analysis_verdicts SET verdict = 'won', line = 'D D', budget_ms = NULL")
    assert client.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    body = _analysis(client, game_id)
    assert body["status"] == "done", body
    assert body["positions"][0]["verdict"] == "lost"
    assert _result(database_url, game_id)["solved"] == 1
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT type, data FROM events WHERE game_id = %s ORDER BY version", (first,)).fetchall()
        deal_key = position_key(positions([event_from_data(*row) for row in rows])[0].state)
        kept = conn.execute("SELECT verdict FROM analysis_verdicts WHERE position_key = %s", (deal_key,)).fetchall()
    assert kept == [("lost",)]  # the wrong one replaced by the search's proof
