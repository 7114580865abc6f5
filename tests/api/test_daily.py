"""The daily deal over HTTP, with the service's clock injected (``Clock``): derived from the date and
the secret, proven and stored; entries and practice games; the leaderboard across a date change;
no response names a seed or a pool number; the deck and other players' daily games stay hidden
until the date is over."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import psutil  # type: ignore[import-untyped, unused-ignore]
import psycopg
import pytest

from domain import CODES, Command, Status, deal, get_ruleset, initial_state, parse_deck, replay_commands, shuffled_deck
from service.deals.daily import candidate_seed
from service.deals.deal_pools import decode_line, load_deal_pool
from service.stats.rebuild import rebuild_projections
from tests.support import assert_problem

from ..live import ServerProcess
from .conftest import TEST_DAILY_SECRET, Clock, Player, play_line

DAY = Clock.START.date()
CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


@dataclass(frozen=True)
class Stored:
    candidate: int
    seed: int
    deck: list[str]
    line: list[Command]


def stored_deal(url: str, day: date) -> Stored:
    """The daily deal as the server stored it (tests may look; no response shows any of it)."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT candidate, seed, deck, line FROM daily_deals WHERE day = %s", (day,)).fetchone()
    assert row is not None, f"no daily deal stored for {day}"
    return Stored(row[0], row[1], row[2], decode_line(row[3]))


def board(client: httpx.Client, day: date | str) -> dict[str, Any]:
    response = client.get(f"/deals/daily/{day}/leaderboard")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def ranked(body: dict[str, Any]) -> list[tuple[str, int | None, str | None]]:
    return [(entry["name"], entry["rank"], entry["unranked"]) for entry in body["entries"]]


def stream_text(client: httpx.Client, game_id: str, headers: dict[str, str], query: str = "") -> str:
    """The whole stream of a finished game (view and end, or with ?after=0 every event and the
    end): it closes by itself."""
    with client.stream("GET", f"/games/{game_id}/stream{query}", headers=headers) as response:
        assert response.status_code == 200
        return "".join(response.iter_text())


def test_the_daily_deal_is_stored_proven_and_named_only_by_its_date(clocked: httpx.Client, clean_database: str) -> None:
    response = clocked.get("/deals/daily")
    assert response.status_code == 200, response.text
    daily = response.json()
    assert set(daily) == {
        "date", "ruleset", "rulesetVersion", "verified", "lineLength", "verifiedAt", "closesAt", "plays", "wins",
    }
    assert (daily["date"], daily["ruleset"], daily["rulesetVersion"], daily["verified"]) == (
        DAY.isoformat(),
        "open-runs",
        1,
        True,
    )
    assert daily["closesAt"].startswith((DAY + timedelta(days=1)).isoformat() + "T00:00:00")
    assert clocked.get(f"/deals/daily/{DAY}").json() == daily
    assert clocked.get("/deals/daily/today").json() == daily

    stored = stored_deal(clean_database, DAY)
    # derived from the date and the secret: candidate k of that date, the documented shuffle of its seed
    assert stored.seed == candidate_seed(TEST_DAILY_SECRET, "open-runs", DAY, stored.candidate)
    assert stored.deck == [CODES[c] for c in shuffled_deck(stored.seed)]
    # proven: the stored line wins through the rules, and its length is what the API says
    ruleset = get_ruleset("open-runs")
    report = replay_commands(initial_state(deal(ruleset, parse_deck(stored.deck), {})), stored.line)
    assert report.ok
    assert report.state.status is Status.WON
    assert daily["lineLength"] == len(stored.line)
    # in no pool: no shipped pool deal has this deck
    pool = load_deal_pool("open-runs")
    assert pool is not None
    assert all(shuffled_deck(item.seed) != parse_deck(stored.deck) for item in pool.deals)
    # another date, another deal
    clocked.get(f"/deals/daily/{DAY - timedelta(days=1)}").raise_for_status()
    assert stored_deal(clean_database, DAY - timedelta(days=1)).deck != stored.deck


def test_two_players_daily_games_and_the_leaderboard_across_a_date_change(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob, cid, dan, eve = (Player(clocked, name) for name in ("Ann", "Bob", "Cid", "Dan", "Eve"))
    clocked.get("/deals/daily").raise_for_status()
    line = stored_deal(clean_database, DAY).line
    first = ann.new_game(deal={"daily": "today"})
    second = bob.new_game(deal={"daily": DAY.isoformat()})
    assert first["table"] == second["table"]
    assert first["deal"] == second["deal"] == {"source": "daily", "daily": DAY.isoformat(), "practice": False}

    clock.advance(minutes=5)
    play_line(ann, first["id"], line)
    for _ in range(2):  # a draw taken back, twice: 4 moves more than Ann
        assert bob.move(second["id"], {"type": "draw"}).status_code == 200
        assert bob.move(second["id"], {"type": "undo"}).status_code == 200
    clock.advance(minutes=1)
    assert play_line(bob, second["id"], line)["game"]["status"] == "won"
    resigned = cid.new_game(deal={"daily": "today"})
    assert cid.move(resigned["id"], {"type": "resign"}).status_code == 200
    late = eve.new_game(deal={"daily": "today"})  # her entry, but she wins it only after midnight
    play_line(eve, late["id"], line[:-1])
    still_playing = dan.new_game(deal={"daily": "today"})

    during = board(clocked, DAY)
    assert (during["date"], during["closed"], during["ruleset"], during["rulesetVersion"]) == (
        DAY.isoformat(),
        False,
        "open-runs",
        1,
    )
    assert ranked(during) == [("Ann", 1, None), ("Bob", 2, None), ("Cid", None, "not-won")]  # Dan and Eve still play
    assert [e["moves"] for e in during["entries"][:2]] == [len(line), len(line) + 4]
    assert during["entries"][0]["seconds"] == 5 * 60
    assert during["entries"][0]["game"] == first["id"]
    assert during["entries"][2]["status"] == "resigned"

    clock.advance(days=1)  # the date is over
    after = clocked.get("/deals/daily").json()
    assert after["date"] == (DAY + timedelta(days=1)).isoformat()
    assert (after["plays"], after["wins"]) == (0, 0)
    assert clocked.get(f"/deals/daily/{DAY}").json()["plays"] == 5
    assert stored_deal(clean_database, DAY + timedelta(days=1)).deck != stored_deal(clean_database, DAY).deck
    assert play_line(eve, late["id"], line[-1:])["game"]["status"] == "won"
    clock.advance(minutes=1)
    assert dan.move(still_playing["id"], {"type": "resign"}).status_code == 200
    # A game of yesterday's deal dealt today is practice, whatever its player did before: its deck is public now.
    fay = Player(clocked, "Fay")
    practice = fay.new_game(deal={"daily": DAY.isoformat()})
    assert practice["deal"] == {"source": "daily", "daily": DAY.isoformat(), "practice": True}
    assert play_line(fay, practice["id"], line)["game"]["status"] == "won"  # a win, but not an entry
    closed = board(clocked, DAY)
    assert closed["closed"] is True
    assert ranked(closed) == [
        ("Ann", 1, None), ("Bob", 2, None), ("Cid", None, "not-won"), ("Eve", None, "late"), ("Dan", None, "not-won"),
    ]
    today_board = board(clocked, "today")
    assert (today_board["date"], today_board["entries"], today_board["closed"]) == (after["date"], [], False)


def test_a_daily_deal_is_one_game_per_player_until_its_date_is_over_then_practice(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    entry = ann.new_game(deal={"daily": "today"})
    assert entry["deal"]["practice"] is False
    again = clocked.post("/games", json={"deal": {"daily": "today"}}, headers=ann.auth)
    refusal = assert_problem(again, 409, "daily_already_played")
    assert refusal["game"] == entry["id"]
    assert f"game {entry['id']}" in refusal["detail"], refusal["detail"]
    line = stored_deal(clean_database, DAY).line
    assert ann.move(entry["id"], {"type": "resign"}).status_code == 200
    assert_problem(clocked.post("/games", json={"deal": {"daily": "today"}}, headers=ann.auth), 409,
                   "daily_already_played")  # an entry that has ended is still the one game
    won = bob.new_game(deal={"daily": "today"})
    clock.advance(seconds=1)
    assert play_line(bob, won["id"], line)["game"]["status"] == "won"
    clock.advance(days=1)  # the date is over: its deal is practice now, as often as wanted
    practice = [ann.new_game(deal={"daily": DAY.isoformat()}) for _ in range(2)]
    assert [g["deal"] for g in practice] == [{"source": "daily", "daily": DAY.isoformat(), "practice": True}] * 2
    assert play_line(ann, practice[0]["id"], line)["game"]["status"] == "won"  # a win, but not an entry
    assert ranked(board(clocked, DAY)) == [("Bob", 1, None), ("Ann", None, "not-won")]
    assert rebuild_projections(clean_database)["ranked"] == 1
    assert ranked(board(clocked, DAY)) == [("Bob", 1, None), ("Ann", None, "not-won")]
    daily = clocked.get(f"/deals/daily/{DAY}").json()
    assert (daily["plays"], daily["wins"]) == (4, 2)
    # Wherever games are listed, a practice game says so.
    listed = {g["id"]: g["deal"] for g in clocked.get(f"/players/{ann.id}/games").json()["games"]}
    assert listed == {game["id"]: game["deal"] for game in (entry, *practice)}


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _bodies(client: httpx.Client, player: Player, game_id: str, day: date) -> dict[str, str]:
    """Every daily-related response the API gives, by name."""
    auth = player.auth
    return {
        "GET /deals/daily": client.get("/deals/daily").text,
        "GET /deals/daily/{date}": client.get(f"/deals/daily/{day}").text,
        "GET /deals/daily/{date}/leaderboard": client.get(f"/deals/daily/{day}/leaderboard").text,
        "GET /games/{id}": client.get(f"/games/{game_id}", headers=auth).text,
        "GET /games/{id}/events": client.get(f"/games/{game_id}/events", headers=auth).text,
        "GET /games/{id}/events ndjson": client.get(
            f"/games/{game_id}/events", headers={**auth, "Accept": "application/x-ndjson"}
        ).text,
        "GET /games/{id}/states/1": client.get(f"/games/{game_id}/states/1", headers=auth).text,
        "GET /games/{id}/legal-moves": client.get(f"/games/{game_id}/legal-moves", headers=auth).text,
        "GET /games/{id}/hints": client.get(f"/games/{game_id}/hints", headers=auth).text,
        "GET /games/{id}/stream": stream_text(client, game_id, auth),
        "GET /games/{id}/stream?after=0": stream_text(client, game_id, auth, "?after=0"),
        "GET /players/{id}/games": client.get(f"/players/{player.id}/games").text,
        "GET /players/{id}/stats": client.get(f"/players/{player.id}/stats").text,
        "GET /stats": client.get("/stats").text,
    }


def _tables(value: Any) -> Iterator[dict[str, Any]]:
    """Every game table inside a JSON document."""
    if isinstance(value, dict):
        if "stock" in value and "reserve" in value:
            yield value
        for item in value.values():
            yield from _tables(item)
    elif isinstance(value, list):
        for item in value:
            yield from _tables(item)


def _json_documents(text: str) -> Iterator[Any]:
    for line in text.splitlines():
        document = line.removeprefix("data: ")
        if document.startswith(("{", "[")):
            yield json.loads(document)


def test_no_daily_response_names_the_seed_or_a_pool_number(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann = Player(clocked, "Ann")
    created = clocked.post("/games", json={"deal": {"daily": "today"}}, headers=ann.auth)
    game = created.json()
    moves = ({"type": "draw"}, {"type": "draw"}, {"type": "undo"}, {"type": "resign"})
    replies = [created.text, *(ann.move(game["id"], move).text for move in moves)]
    stored = stored_deal(clean_database, DAY)
    seed_text = str(stored.seed)
    for moment in ("during the date", "after the date"):
        bodies = _bodies(clocked, ann, game["id"], DAY)
        bodies |= {f"reply {n}": text for n, text in enumerate(replies)}
        for name, text in bodies.items():
            assert seed_text not in text, f"{name} ({moment}) names the seed"
            for document in _json_documents(text):
                assert not {"pool", "seed", "candidate", "line"} & set(_keys(document)), (
                    f"{name} ({moment}): {text[:300]}"
                )
        clock.advance(days=1)


def _face_up_cards(view_bodies: list[dict[str, Any]]) -> set[str]:
    """Every card some view of the player's showed face up (reserve top, waste, foundations, tableau)."""
    seen: set[str] = set()
    for view in view_bodies:
        table = view["table"]
        seen |= set(table["waste"]) | {c for pile in table["foundations"].values() for c in pile}
        seen |= {c for column in table["tableau"] for c in column}
        if table["reserve"]["top"]:
            seen.add(table["reserve"]["top"])
    return seen


def test_the_deck_is_withheld_until_the_date_is_over_and_shown_after(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann = Player(clocked, "Ann")
    game = ann.new_game(deal={"daily": "today"})
    views = [game]
    texts = []
    for move in ({"type": "draw"}, {"type": "draw"}, {"type": "draw"}, {"type": "undo"}, {"type": "resign"}):
        reply = ann.move(game["id"], move)
        assert reply.status_code == 200
        views.append(reply.json()["game"])
        texts.append(reply.text)
    final = views[-1]
    assert final["status"] == "resigned"
    deck = stored_deal(clean_database, DAY).deck

    bodies = _bodies(clocked, ann, game["id"], DAY)
    bodies |= {f"reply {n}": text for n, text in enumerate(texts)}
    bodies["GET /games/{id}/states/{final}"] = clocked.get(
        f"/games/{game['id']}/states/{final['version']}", headers=ann.auth
    ).text
    seen = _face_up_cards(views)
    assert len(seen) < 20
    for name, text in bodies.items():
        assert set(CARD.findall(text)) <= seen, f"{name} shows a card that was never face up"
        for document in _json_documents(text):
            assert "deck" not in set(_keys(document)), name
            assert not any("cards" in table[pile] for table in _tables(document) for pile in ("stock", "reserve")), name
    view = clocked.get(f"/games/{game['id']}", headers=ann.auth).json()
    assert "cards" not in view["table"]["stock"]
    assert "cards" not in view["table"]["reserve"]

    clock.advance(days=1)  # the date is over: the finished game may show everything
    view = clocked.get(f"/games/{game['id']}").json()
    table = view["table"]
    assert len(table["stock"]["cards"]) == table["stock"]["count"]
    assert table["reserve"]["cards"]
    events = clocked.get(f"/games/{game['id']}/events").json()["events"]
    assert events[0]["data"]["deck"] == deck
    ndjson = clocked.get(f"/games/{game['id']}/events", headers={"Accept": "application/x-ndjson"}).text
    assert json.loads(ndjson.splitlines()[0])["data"]["deck"] == deck
    past = clocked.get(f"/games/{game['id']}/states/{final['version']}").json()
    assert past["table"]["stock"]["cards"] == table["stock"]["cards"]
    assert f'"deck":{json.dumps(deck, separators=(",", ":"))}' in stream_text(clocked, game["id"], {}, "?after=0")
    assert '"stock":{"count":' in stream_text(clocked, game["id"], {})
    assert '"cards":' in stream_text(clocked, game["id"], {})


def test_a_daily_game_answers_only_to_its_player_until_its_date_is_over(
    clocked: httpx.Client, clock: Clock
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    game = ann.new_game(deal={"daily": "today"})
    assert ann.move(game["id"], {"type": "draw"}).status_code == 200
    paths = [
        f"/games/{game['id']}{suffix}" for suffix in ("", "/events", "/states/1", "/legal-moves", "/hints", "/stream")
    ]
    for path in paths:
        anonymous, other = clocked.get(path), clocked.get(path, headers=bob.auth)
        assert (anonymous.status_code, other.status_code) == (401, 403), path
        assert anonymous.json()["code"] == "unauthorized"
        assert other.json()["code"] == "forbidden"
        assert "until its date" in other.json()["detail"]
        assert clocked.get(path, headers={"Authorization": "Bearer nonsense"}).status_code == 401
    for path in paths[:-1]:
        assert clocked.get(path, headers=ann.auth).status_code == 200, path
    seed_game = bob.new_game(deal={"seed": 5})  # other games stay public
    assert clocked.get(f"/games/{seed_game['id']}").status_code == 200
    assert ann.move(game["id"], {"type": "resign"}).status_code == 200
    assert clocked.get(paths[0], headers=bob.auth).status_code == 403  # over, but its date is not
    clock.advance(days=1)
    for path in paths[:-1]:
        assert clocked.get(path).status_code == 200, path


def test_a_daily_request_while_the_deal_is_prepared_waits_for_it(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    """A date nobody asked for yet (the server prepared only today and tomorrow at start): the
    first request waits for the solver and gets the stored deal; the same for a game."""
    day = DAY - timedelta(days=30)
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT count(*) FROM daily_deals WHERE day = %s", (day,)).fetchone() == (0,)
    ann = Player(clocked, "Ann")
    game = ann.new_game(deal={"daily": day.isoformat()})
    assert game["deal"] == {"source": "daily", "daily": day.isoformat(), "practice": True}  # its date is over
    assert [c for column in game["table"]["tableau"] for c in column] == stored_deal(clean_database, day).deck[14:18]


@pytest.mark.parametrize("text", ["2030-06-16", "2029-06-13"])
def test_daily_dates_outside_the_window_are_400(clocked: httpx.Client, text: str) -> None:
    response = clocked.get(f"/deals/daily/{text}")
    assert_problem(response, 400, "invalid_request")


def test_a_tampered_stored_log_loses_its_leaderboard_place(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    clocked.get("/deals/daily").raise_for_status()
    line = stored_deal(clean_database, DAY).line
    games = [player.new_game(deal={"daily": "today"}) for player in (ann, bob)]
    play_line(ann, games[0]["id"], line)
    clock.advance(minutes=1)
    assert bob.move(games[1]["id"], {"type": "draw"}).status_code == 200
    assert bob.move(games[1]["id"], {"type": "undo"}).status_code == 200
    play_line(bob, games[1]["id"], line)
    assert ranked(board(clocked, DAY)) == [("Ann", 1, None), ("Bob", 2, None)]
    assert rebuild_projections(clean_database)["ranked"] == 2  # the logs as stored replay: nothing changes
    assert ranked(board(clocked, DAY)) == [("Ann", 1, None), ("Bob", 2, None)]
    with psycopg.connect(clean_database, autocommit=True) as conn:  # Ann's log: one card moved elsewhere
        changed = conn.execute(
            "UPDATE events SET data = jsonb_set(data, '{to}', to_jsonb(CASE WHEN data->>'to' = 'tableau-1' "
            "THEN 'tableau-2' ELSE 'tableau-1' END)) WHERE game_id = %s AND version = (SELECT max(version) "
            "FROM events WHERE game_id = %s AND type = 'CardsMoved' AND data->>'to' LIKE 'tableau-%%')",
            (games[0]["id"], games[0]["id"]),
        ).rowcount
    assert changed == 1
    counts = rebuild_projections(clean_database)
    assert (counts["ranked"], counts["refused"]) == (1, 1)
    assert ranked(board(clocked, DAY)) == [("Bob", 1, None), ("Ann", None, "unverified")]


def test_two_server_processes_serve_the_same_daily_deal(clean_database: str, tmp_path: Path) -> None:
    """Two uvicorn processes started together both prepare today's (and tomorrow's) deal at start:
    whichever stores it first, both serve that one."""
    servers = [ServerProcess(clean_database, tmp_path / f"{name}.log") for name in ("a", "b")]
    try:
        for server in servers:
            server.wait_until_up()
        answers = [httpx.get(f"{server.url}/deals/daily", timeout=30) for server in servers]
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        assert answers[0].json() == answers[1].json()
        tables = []
        for server in servers:
            player = httpx.post(f"{server.url}/players", json={"name": "Ann"}).json()
            game = httpx.post(f"{server.url}/games", json={"deal": {"daily": "today"}},
                              headers={"Authorization": f"Bearer {player['token']}"}, timeout=30)
            assert game.status_code == 201, game.text
            tables.append(game.json()["table"])
        assert tables[0] == tables[1]
        today = date.fromisoformat(answers[0].json()["date"])
        with psycopg.connect(clean_database) as conn:
            days = [row[0] for row in conn.execute("SELECT day FROM daily_deals ORDER BY day")]
        assert days[0] == today
        assert len(days) == len(set(days)) <= 2
        # Each server proved deals in a worker process of its own: they end with their server.
        workers = [child for server in servers for child in psutil.Process(server.process.pid).children(recursive=True)]
        assert workers
    finally:
        for server in servers:
            server.stop()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == [], f"worker processes outlived their server: {alive}"


def test_a_server_stopped_while_it_proves_a_deal_leaves_no_worker_behind(clean_database: str, tmp_path: Path) -> None:
    """Stopped right after start, the server is still proving today's or tomorrow's deal in its
    worker process (uvicorn re-raises SIGTERM after shutting down, which skips the executor's own
    clean-up): the worker must end with it all the same."""
    server = ServerProcess(clean_database, tmp_path / "server.log")
    try:
        server.wait_until_up()
        deadline = time.monotonic() + 20
        workers: list[psutil.Process] = []
        while not workers and time.monotonic() < deadline:
            workers = psutil.Process(server.process.pid).children(recursive=True)
            time.sleep(0.01)
        assert workers, "the server started no worker to prove its daily deals"
    finally:
        server.stop()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == [], f"worker processes outlived their server: {alive}"
