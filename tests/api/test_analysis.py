"""Game analysis over HTTP: asking for it (202, the same job again, who may, which games), running it to
the end in the server's worker (every won verdict's line replays; a deal lost from the start; the move
that threw a win away; a game the service abandoned), the game's stream hearing it, and a job taken up
again after its process died."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from domain import (
    Command,
    GameState,
    Resign,
    command_to_api,
    line_wins,
    parse_command,
    replay,
)
from domain.analysis import END, LOST, WON
from domain.codec import event_from_data
from service.analysis.jobs import analysis_of
from service.cli import main
from service.store.game_records import StoredEvent
from tests.support import WON_DEAL, thrown_away

from .conftest import Clock, Player, play, play_line, running_server, server_settings
from .race_support import game_of, started_race

LOST_DEAL = 4  # open-runs seed 4: proven lost from the deal in a handful of positions


@pytest.fixture(scope="module")
def idle_url(database_url: str) -> Iterator[str]:
    """A server that takes jobs but runs none (no analysis worker): they stay queued."""
    with running_server(server_settings(database_url, analysis_workers=0)) as url:
        yield url


@pytest.fixture
def idle(idle_url: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=idle_url, timeout=10) as http:
        yield http


@pytest.fixture
def abandoning(clean_database: str) -> Iterator[tuple[httpx.Client, Clock]]:
    """A server that ends games idle for 30 days (looking every 0.1 s) by a clock the test moves, and
    runs analyses. It lives for one test: any game in progress that another test left behind would
    look idle to its clock."""
    clock = Clock()
    settings = server_settings(clean_database, abandon_after_days=30, abandon_check_seconds=0.1)
    with running_server(settings, clock=clock) as url, httpx.Client(base_url=url, timeout=30) as http:
        yield http, clock


def _ended_game(player: Player, seed: int, moves: list[Command]) -> str:
    game_id: str = player.new_game(ruleset="open-runs", deal={"seed": seed})["id"]
    play_line(player, game_id, [*moves, Resign()])
    return game_id


def _analysis(client: httpx.Client, game_id: str, seconds: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        response = client.get(f"/games/{game_id}/analysis")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["status"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def _stored(database_url: str, game_id: str) -> tuple[list[StoredEvent], list[dict[str, Any]]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT version, type, data, recorded_at FROM events WHERE game_id = %s ORDER BY version",
                            (game_id,)).fetchall()
        answers = conn.execute("SELECT answers FROM analysis_jobs WHERE game_id = %s", (game_id,)).fetchone()
    assert answers is not None
    return [StoredEvent(*row) for row in rows], answers[0]


def _state_at(events: list[StoredEvent], version: int) -> GameState:
    """The table of a position: 0 is the deal (the game's version 1)."""
    return replay(event_from_data(row.type, row.data) for row in events[: max(version, 1)])


# ---------------------------------------------------------------- asking


def test_asking_answers_202_with_its_location_and_asking_again_gives_the_same_job(
    idle: httpx.Client, database_url: str
) -> None:
    ann = Player(idle, "Ann")
    game_id = _ended_game(ann, LOST_DEAL, [])
    first = idle.post(f"/games/{game_id}/analysis", headers=ann.auth)
    assert first.status_code == 202, first.text
    assert first.headers["location"] == f"/games/{game_id}/analysis"
    assert first.json() == {"status": "queued", "progress": {"done": 0, "total": 2}, "positions": [],
                            "turningPoint": None, "budgetSpent": False}
    # the same job again; it may have moved on meanwhile: the queue is the database's, and a
    # worker of another server process on it (the tests' shared one) may have taken it up
    again = idle.post(f"/games/{game_id}/analysis", headers=ann.auth)
    assert (again.status_code, again.headers["location"]) == (202, first.headers["location"])
    assert again.json()["status"] in {"queued", "running", "done"}
    assert again.json()["progress"]["total"] == 2
    read = idle.get(f"/games/{game_id}/analysis")
    assert read.status_code == 200
    assert read.json()["status"] in {"queued", "running", "done"}
    assert read.json()["progress"]["total"] == 2
    # unchanged since that read: 304; a shared worker may have moved it on since: 200 with a new tag
    cached = idle.get(f"/games/{game_id}/analysis", headers={"If-None-Match": read.headers["etag"]})
    assert cached.status_code == 304 or (cached.status_code == 200 and cached.headers["etag"] != read.headers["etag"])
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM analysis_jobs").fetchone() == (1,)


def test_anyone_may_ask_about_a_public_game_but_only_with_a_token(idle: httpx.Client) -> None:
    ann, bob = Player(idle, "Ann"), Player(idle, "Bob")
    game_id = _ended_game(ann, LOST_DEAL, [])
    assert idle.post(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 202
    anonymous = idle.post(f"/games/{game_id}/analysis")
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"] == "application/problem+json"
    assert idle.get(f"/games/{game_id}/analysis").status_code == 200  # reading is public, as the game is


def test_a_game_in_progress_is_409_game_in_progress_and_nothing_is_queued(idle: httpx.Client) -> None:
    ann = Player(idle, "Ann")
    game_id = ann.new_game(ruleset="open-runs", deal={"seed": LOST_DEAL})["id"]
    response = idle.post(f"/games/{game_id}/analysis", headers=ann.auth)
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "game_in_progress"
    assert idle.get(f"/games/{game_id}/analysis").status_code == 404


def test_unknown_games_and_games_never_analysed_are_404(idle: httpx.Client) -> None:
    ann = Player(idle, "Ann")
    unknown = uuid.uuid4()
    for response in (idle.post(f"/games/{unknown}/analysis", headers=ann.auth), idle.get(f"/games/{unknown}/analysis")):
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    game_id = _ended_game(ann, LOST_DEAL, [])
    missing = idle.get(f"/games/{game_id}/analysis")
    assert missing.status_code == 404
    assert "POST" in missing.json()["detail"]


@pytest.mark.parametrize("game_id", ["not-a-uuid", "123", "%00", "0" * 40])
def test_a_malformed_game_id_is_a_4xx_problem(idle: httpx.Client, game_id: str) -> None:
    ann = Player(idle, "Ann")
    for response in (idle.post(f"/games/{game_id}/analysis", headers=ann.auth), idle.get(f"/games/{game_id}/analysis")):
        assert 400 <= response.status_code < 500, response.text
        assert response.headers["content-type"] == "application/problem+json"


def test_a_daily_game_during_its_date_is_409_cards_hidden_for_its_player_and_403_for_others(
    clocked: httpx.Client, clock: Clock
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    game_id = ann.new_game(deal={"daily": "today"})["id"]
    play(ann, game_id, [{"type": "resign"}])
    refused = clocked.post(f"/games/{game_id}/analysis", headers=ann.auth)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "cards_hidden"
    assert clocked.post(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 403
    assert clocked.post(f"/games/{game_id}/analysis").status_code == 401
    assert clocked.get(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 403
    assert clocked.get(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 404  # nothing was queued
    clock.advance(days=1)  # the date is over: the deck may be shown, and anyone may ask
    assert clocked.post(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 202


def test_a_race_game_during_its_race_is_409_cards_hidden_for_its_player_and_403_for_others(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    view = started_race(ann, [bob], ruleset="open-runs", deal={"seed": LOST_DEAL})
    game_id = game_of(view, ann)
    play(ann, game_id, [{"type": "resign"}])  # bob still plays: the race runs on
    refused = client.post(f"/games/{game_id}/analysis", headers=ann.auth)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "cards_hidden"
    assert client.post(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 403
    assert client.get(f"/games/{game_id}/analysis", headers=bob.auth).status_code == 403


# ---------------------------------------------------------------- running


def test_a_deal_lost_from_the_start_is_lost_everywhere_with_no_turning_point(client: httpx.Client, ann: Player) -> None:
    moves = [parse_command({"type": "draw"})] * 3
    game_id = _ended_game(ann, LOST_DEAL, moves)
    assert client.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    body = _analysis(client, game_id)
    assert body["status"] == "done", body
    assert body["progress"] == {"done": 5, "total": 5}
    assert [p["version"] for p in body["positions"]] == [0, 2, 3, 4, 5]
    assert {(p["verdict"], p["movesToWin"]) for p in body["positions"]} == {("lost", None)}
    assert body["turningPoint"] is None


def test_the_move_that_threw_a_won_game_away_is_the_turning_point_and_every_won_line_replays(
    client: httpx.Client, ann: Player, database_url: str
) -> None:
    along, wrong = thrown_away()
    game_id = _ended_game(ann, WON_DEAL, [*along, wrong])
    assert client.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    body = _analysis(client, game_id)
    assert body["status"] == "done", body
    verdicts = [p["verdict"] for p in body["positions"]]
    assert verdicts == [WON] * (len(along) + 1) + [LOST, LOST]
    point = body["turningPoint"]
    assert point["before"] == body["positions"][len(along)]["version"]
    assert point["after"] == body["positions"][len(along) + 1]["version"]
    assert point["move"] == command_to_api(wrong)
    events, answers = _stored(database_url, game_id)
    start = _state_at(events, point["before"])
    assert line_wins(start, [parse_command(m) for m in point["winningLineBefore"]]).won
    assert len(point["winningLineBefore"]) == body["positions"][len(along)]["movesToWin"]
    analysis = analysis_of(events, answers)  # the job's kept answers, decided again: every won line replays
    assert len(answers) == analysis.solved < len(body["positions"])  # reuse: the solver saw only a few
    for index, position in enumerate(body["positions"]):
        if position["verdict"] == WON:
            line = analysis.line(index)
            assert line_wins(_state_at(events, position["version"]), line).won, position
            assert len(line) == position["movesToWin"]


def test_an_abandoned_game_keeps_its_last_tables_verdict_and_the_abandonment_is_its_own_position(
    abandoning: tuple[httpx.Client, Clock], database_url: str
) -> None:
    http, clock = abandoning
    ann = Player(http, "Ann")
    along, wrong = thrown_away()
    winnable = ann.new_game(ruleset="open-runs", deal={"seed": WON_DEAL})["id"]
    play_line(ann, winnable, list(along[:5]))  # five moves along a winning line, then nothing
    thrown = ann.new_game(ruleset="open-runs", deal={"seed": WON_DEAL})["id"]
    play_line(ann, thrown, [*along, wrong])  # the win thrown away, then nothing
    clock.advance(days=31)
    deadline = time.monotonic() + 15
    while any(http.get(f"/games/{game_id}").json()["status"] == "playing" for game_id in (winnable, thrown)):
        assert time.monotonic() < deadline, "the idle games were not ended"
        time.sleep(0.05)
    bodies = {}
    for game_id in (winnable, thrown):
        view = http.get(f"/games/{game_id}").json()
        assert (view["status"], view["abandoned"]) == ("resigned", {"idleDays": 31})
        assert http.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
        body = _analysis(http, game_id)
        assert body["status"] == "done", body
        final = view["version"]
        assert [p["version"] for p in body["positions"]][-2:] == [final - 1, final]  # the last table, the end
        assert body["progress"]["total"] == len(body["positions"])
        events, answers = _stored(database_url, game_id)
        assert events[-1].type == "GameAbandoned"
        verdicts = analysis_of(events, answers).verdicts
        last_table, end = verdicts[-2], verdicts[-1]
        assert last_table is not None
        assert last_table.how != END  # the game did not end there: its verdict is the solver's or follows from one
        assert end is not None
        assert (end.result, end.how) == (LOST, END)
        bodies[game_id] = body

    body = bodies[winnable]  # left while still won: the abandonment is the turning point
    assert [p["verdict"] for p in body["positions"]] == [WON] * 6 + [LOST]
    point = body["turningPoint"]
    assert (point["before"], point["after"]) == (body["positions"][-2]["version"], body["positions"][-1]["version"])
    assert point["move"] == {"type": "abandon"}
    events, _ = _stored(database_url, winnable)
    assert line_wins(_state_at(events, point["before"]), [parse_command(m) for m in point["winningLineBefore"]]).won

    body = bodies[thrown]  # lost by the player's own move: the turning point stays on it
    assert [p["verdict"] for p in body["positions"]] == [WON] * (len(along) + 1) + [LOST, LOST]
    point = body["turningPoint"]
    assert (point["before"], point["after"]) == (body["positions"][len(along)]["version"],
                                                 body["positions"][len(along) + 1]["version"])
    assert point["move"] == command_to_api(wrong)


def test_the_games_stream_carries_the_analysis_then_ends(client: httpx.Client, ann: Player) -> None:
    game_id = _ended_game(ann, LOST_DEAL, [])
    assert client.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    with client.stream("GET", f"/games/{game_id}/stream") as stream:
        kinds = [line.removeprefix("event: ") for line in stream.iter_lines() if line.startswith("event: ")]
    assert kinds[0] == "view"
    assert kinds[-1] == "end"
    assert set(kinds[1:-1]) == {"analysis"}
    assert _analysis(client, game_id)["status"] == "done"


# ---------------------------------------------------------------- restarts


def test_a_job_left_running_by_a_dead_process_is_taken_up_again(idle: httpx.Client, database_url: str) -> None:
    ann = Player(idle, "Ann")
    game_id = _ended_game(ann, LOST_DEAL, [])
    assert idle.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202
    with psycopg.connect(database_url, autocommit=True) as conn:  # as a process that died mid-job leaves it
        conn.execute("UPDATE analysis_jobs SET status = 'running', attempt = 1, lease_until = now() - interval '1 s'")
    assert idle.get(f"/games/{game_id}/analysis").json()["status"] == "running"
    with running_server(server_settings(database_url)) as url, httpx.Client(base_url=url, timeout=10) as other:
        body = _analysis(other, game_id)
    assert body["status"] == "done"
    assert body["positions"][0]["verdict"] == LOST
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT attempt FROM analysis_jobs").fetchone() == (2,)


def test_canfield_analyse_runs_a_queued_job_here_and_prints_a_summary(
    idle: httpx.Client, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ann = Player(idle, "Ann")
    game_id = _ended_game(ann, LOST_DEAL, [])
    assert idle.post(f"/games/{game_id}/analysis", headers=ann.auth).status_code == 202  # nobody runs it there
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["analyse", game_id]) == 0
    out = capsys.readouterr().out
    assert "status: done" in out
    assert "positions: 2 (won 0, lost 2, unknown 0; 1 asked of the solver" in out
    assert idle.get(f"/games/{game_id}/analysis").json()["status"] == "done"
    playing = ann.new_game(ruleset="open-runs", deal={"seed": LOST_DEAL})["id"]
    assert main(["analyse", playing]) == 1
    assert "still being played" in capsys.readouterr().err
    assert main(["analyse", "not-a-game"]) == 2
