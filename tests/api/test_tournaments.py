"""Tournaments of duplicate play over HTTP, as players and bots would meet them: the same secret
deals for everyone, standings that a replay of every game confirms, games private while the
tournament runs, ratings from the final standings, and the refusals."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
import psycopg

from domain import replay
from domain.codec import event_from_data
from service.ratings.rebuild import rebuild_ratings
from service.tournaments.rebuild import tournament_places
from tests.support import assert_problem

from .conftest import Clock, Player, play
from .race_support import CARD
from .test_streams import EventStream
from .test_watch import watching
from .tournament_support import NEWEST, bot, create_tournament, dealt, decks, enter, lines, next_game, ready, tournament

RESIGN = {"type": "resign"}
UNDO = {"type": "undo"}


def _play_deal(player: Player, clock: Clock, tournament_id: str, line: list[dict[str, Any]], win: bool,
               seconds: float = 0, detours: int = 0) -> str:
    """Deal the player their next deal and play it: ``detours`` draws taken back by undo first, then
    the whole winning line (``win``, ``seconds`` of the clock on the way) or a resignation."""
    game = dealt(player, tournament_id)
    moves = [{"type": "draw"}, UNDO] * detours
    if moves:
        play(player, game["id"], moves)
    if win:
        clock.advance(seconds=seconds)
        final = play(player, game["id"], line)
        assert final["game"]["status"] == "won", final
    else:
        assert player.move(game["id"], RESIGN).status_code == 200
    return str(game["id"])


def whole_log(client: httpx.Client, game_id: str) -> list[dict[str, Any]]:
    """Every event of a game, page after page."""
    log: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 200} | ({} if cursor is None else {"cursor": cursor})
        page = client.get(f"/games/{game_id}/events", params=params, headers=NEWEST)
        assert page.status_code == 200, page.text
        log.extend(page.json()["items"])
        cursor = page.json()["next"]
        if cursor is None:
            return log


def _replayed(client: httpx.Client, game_id: str) -> tuple[bool, float, int]:
    """A finished tournament's game, confirmed from its public log: won, its seconds, its moves."""
    log = whole_log(client, game_id)
    state = replay([event_from_data(e["type"], e["data"]) for e in log])
    won = state.status.value == "won"
    seconds = (datetime.fromisoformat(log[-1]["recordedAt"]) - datetime.fromisoformat(log[0]["recordedAt"]))
    return won, seconds.total_seconds() if won else 0.0, state.move_count


def test_six_bots_on_three_deals_end_with_standings_every_replay_confirms(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    host = Player(clocked, "Host")
    view = create_tournament(host, clock, deals=3, minutes=90, rated=True)
    assert view["status"] == "preparing"
    assert view["deals"] == 3
    bots = [bot(clocked, f"Bot {n}") for n in range(6)]
    for entrant in bots:
        assert enter(entrant, view["id"]).status_code == 201
    assert ready(clocked, view["id"])["status"] == "running"
    proven = lines(clean_database, view["id"])
    plans = [  # per bot, per deal: (win, seconds, detours)
        [(True, 10, 0), (True, 10, 0), (True, 10, 0)],  # all three, fast
        [(True, 20, 0), (True, 20, 0), (True, 20, 0)],  # all three, slower
        [(True, 20, 0), (True, 20, 2), (True, 20, 0)],  # as slow, more moves
        [(True, 5, 0), (False, 0, 0), (True, 5, 0)],  # two
        [(False, 0, 0), (True, 1, 0), (False, 0, 0)],  # one
        [(False, 0, 0), (False, 0, 0), (False, 0, 0)],  # none
    ]
    games: dict[str, list[str]] = {}
    for entrant, plan in zip(bots, plans, strict=True):
        games[entrant.id] = [_play_deal(entrant, clock, view["id"], proven[n + 1], win, seconds, detours)
                             for n, (win, seconds, detours) in enumerate(plan)]
    final = tournament(clocked, view["id"])
    assert final["status"] == "finished"  # early: every entrant finished every deal
    assert final["finishedAt"] < final["endsAt"]
    standings = final["standings"]
    assert [row["player"]["id"] for row in standings] == [entrant.id for entrant in bots]
    assert [row["place"] for row in standings] == [1, 2, 3, 4, 5, 6]
    for row in standings:
        assert row["verified"] is True
        assert row["games"] == games[row["player"]["id"]]
        replays = [_replayed(clocked, game) for game in row["games"]]
        assert row["dealsWon"] == sum(won for won, _, _ in replays)
        assert row["wonSeconds"] == sum(seconds for _, seconds, _ in replays)
        assert row["moveCount"] == sum(moves for _, _, moves in replays)
    assert [row["dealsWon"] for row in standings] == [3, 3, 3, 2, 1, 0]
    with psycopg.connect(clean_database) as conn:  # each bot's account stream was told, in order
        told = conn.execute("SELECT player_id, type, data FROM account_events WHERE type LIKE 'tournament%%'"
                            " ORDER BY player_id, seq").fetchall()
    for entrant, row in zip(bots, standings, strict=True):
        mine = [(kind, data) for player, kind, data in told if str(player) == entrant.id]
        assert [kind for kind, _ in mine] == ["tournamentStarted", "tournamentFinished"]
        assert mine[0][1]["game"] == games[entrant.id][0]
        assert (mine[1][1]["place"], mine[1][1]["entrants"]) == (row["place"], 6)
    sources = clocked.get("/stats").json()["sources"]  # kept out: the previous release lists sources by name
    assert "tournament" not in [row["source"] for row in sources]
    # every bot played the same deck for each deal
    for number, deck in decks(clean_database, view["id"]).items():
        for entrant in bots:
            first = whole_log(clocked, games[entrant.id][number - 1])[0]
            assert first["data"]["deck"] == deck
    # rated: the places moved the ratings, best first
    ratings = [clocked.get(f"/players/{entrant.id}/ratings").json()["ratings"] for entrant in bots]
    assert all(len(r) == 1 and r[0]["races"] == 1 for r in ratings)
    assert [r[0]["rating"] for r in ratings] == sorted((r[0]["rating"] for r in ratings), reverse=True)
    assert ratings[0][0]["rating"] > ratings[-1][0]["rating"]
    history = clocked.get(f"/players/{bots[0].id}/ratings/classic/history", headers=NEWEST).json()["items"]
    assert [(point["race"], point["tournament"], point["place"]) for point in history] == [(view["id"], True, 1)]
    rebuild_ratings(clean_database, tournament_places)  # a projection: the rebuild gives the same numbers
    assert [clocked.get(f"/players/{entrant.id}/ratings").json()["ratings"] for entrant in bots] == ratings


def test_a_game_of_a_running_tournament_answers_only_to_its_player(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    view = create_tournament(ann, clock, deals=2, minutes=30)
    assert enter(ann, view["id"]).status_code == 201
    assert enter(bob, view["id"]).status_code == 201
    ready(clocked, view["id"])
    game = dealt(ann, view["id"])
    assert game["deal"] == {"source": "tournament", "tournament": view["id"], "deal": 1}
    for path in ("", "/events", "/legal-moves", "/hints", "/states/1"):
        assert_problem(clocked.get(f"/games/{game['id']}{path}", headers=bob.auth), 403, "forbidden")
        assert_problem(clocked.get(f"/games/{game['id']}{path}"), 403, "forbidden")
    own = clocked.get(f"/games/{game['id']}", headers=ann.auth)
    assert own.status_code == 200
    assert own.json()["deal"] == {"source": "deck"}  # 2026-12-04 knows no tournament source
    with watching(clocked, params={"games": game["id"]}, headers=bob.auth) as (_, first):
        assert first["unavailable"] == [game["id"]]  # /watch keeps it private too
    solver = clocked.get(f"/games/{game['id']}/hints", params={"solver": "true"}, headers=ann.auth)
    assert_problem(solver, 409, "shared_deal")
    deck = decks(clean_database, view["id"])[1]
    copy = ann.new_game(ruleset="classic", deal={"deck": deck})  # a copy dealt by hand: the solver refuses it
    assert_problem(clocked.get(f"/games/{copy['id']}/hints", params={"solver": "true"}, headers=ann.auth),
                   409, "shared_deal")
    assert ann.move(game["id"], RESIGN).status_code == 200  # ended, but others may not have played deal 1
    assert game["id"] not in clocked.get(f"/players/{ann.id}/games/export").text  # not public yet
    own = [json.loads(line) for line in clocked.get("/players/me/export", headers=ann.auth).text.splitlines()]
    mine = next(line for line in own if line.get("type") == "game" and line["game"]["id"] == game["id"])
    assert "deck" not in mine["events"][0]["data"]  # withheld from its player too until the end
    clock.advance(minutes=31)  # the tournament is over: its games are public
    assert tournament(clocked, view["id"])["status"] == "finished"
    assert clocked.get(f"/games/{game['id']}", headers=bob.auth).status_code == 200
    assert clocked.get(f"/games/{game['id']}/events").status_code == 200


def test_refusals_each_have_their_code_and_change_nothing(
    clocked: httpx.Client, clean_database: str, clock: Clock
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    start = clock.now.isoformat()
    for body, code in (
        ({"deals": 1}, "tournament_deals_out_of_range"),
        ({"deals": 13}, "tournament_deals_out_of_range"),
        ({"minutes": 0}, "tournament_minutes_out_of_range"),
        ({"minutes": 1441}, "tournament_minutes_out_of_range"),
        ({"startsAt": "2030-06-15T08:00:00Z"}, "tournament_start_passed"),
    ):
        asked = {"deals": 3, "minutes": 10, "startsAt": start, **body}
        assert_problem(clocked.post("/tournaments", json=asked, headers=ann.auth), 400, code)
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)
    view = create_tournament(ann, clock, deals=2, minutes=10)
    assert_problem(next_game(bob, view["id"]), 409, "tournament_preparing")
    ready(clocked, view["id"])
    assert_problem(next_game(bob, view["id"]), 409, "not_in_tournament")
    assert enter(bob, view["id"]).status_code == 201
    assert_problem(enter(bob, view["id"]), 409, "already_entered")
    dealt(bob, view["id"])
    assert_problem(next_game(bob, view["id"]), 409, "tournament_game_in_play")
    clock.advance(minutes=11)
    before = tournament(clocked, view["id"])
    assert before["status"] == "finished"
    assert_problem(enter(ann, view["id"]), 409, "tournament_over")
    assert_problem(next_game(bob, view["id"]), 409, "tournament_over")
    assert tournament(clocked, view["id"]) == before
    assert_problem(clocked.get("/tournaments/00000000-0000-4000-8000-000000000000"), 404, "not_found")


def test_moves_after_the_end_count_for_nothing(clocked: httpx.Client, clean_database: str, clock: Clock) -> None:
    ann = Player(clocked, "Ann")
    view = create_tournament(ann, clock, deals=2, minutes=5)
    assert enter(ann, view["id"]).status_code == 201
    ready(clocked, view["id"])
    line = lines(clean_database, view["id"])[1]
    game = dealt(ann, view["id"])
    play(ann, game["id"], line[:3])
    clock.advance(minutes=6)
    play(ann, game["id"], line[3:])  # the game is ordinary: it goes on, but the tournament is over
    row = tournament(clocked, view["id"])["standings"][0]
    assert (row["dealsWon"], row["moveCount"], row["verified"]) == (0, 3, True)


def test_the_stream_sends_the_view_each_change_and_the_end(
    clocked: httpx.Client, clocked_server_url: str, clean_database: str, clock: Clock
) -> None:
    ann = Player(clocked, "Ann")
    view = create_tournament(ann, clock, deals=2, minutes=30)
    assert enter(ann, view["id"]).status_code == 201
    ready(clocked, view["id"])
    proven = lines(clean_database, view["id"])
    with httpx.Client(base_url=clocked_server_url, timeout=30) as watcher, watcher.stream(
        "GET", f"/tournaments/{view['id']}/stream", timeout=httpx.Timeout(30)
    ) as response:
        assert response.status_code == 200
        stream = EventStream(response)
        first = stream.next_event()
        assert first.event == "tournament"
        assert first.json()["status"] == "running"
        _play_deal(ann, clock, view["id"], proven[1], win=True, seconds=3)
        assert _until(stream, lambda e: e.json()["standings"][0]["dealsWon"] == 1).event == "tournament"
        _play_deal(ann, clock, view["id"], proven[2], win=False)  # every deal played: it ends early
        end = _until(stream, lambda e: e.event == "end")
        assert end.json()["status"] == "finished"
        assert end.json()["standings"][0]["verified"] is True
        stream.assert_closed()


def _until(stream: EventStream, wanted: Callable[[Any], bool]) -> Any:
    """The stream's next message that is ``wanted`` (figures only on the way, never a card)."""
    while True:
        message = stream.next_event()
        assert message.data is not None
        assert not CARD.search(message.data)
        if wanted(message):
            return message
