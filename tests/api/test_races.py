"""Races over HTTP: create, join, start, view, places, the race rule for games, stats, the stream,
the time limit (with the service's clock set by the test) and a tampered log that loses its place."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from domain import CODES
from tests.support import assert_problem

from .conftest import Clock, Player, play, running_server, server_settings
from .race_support import (
    CARD,
    POOL_DEAL,
    create_race,
    entrant,
    game_of,
    join,
    prefix_with_cards,
    race,
    start,
    started_race,
    tamper_with_a_draw,
    winning_line,
)
from .test_streams import EventStream

# ---------------------------------------------------------------- create, join, start


def test_a_new_race_is_open_with_its_creator_as_first_entrant(client: httpx.Client, ann: Player) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 90210}, maxEntrants=3, timeLimitSeconds=600)
    assert view["status"] == "open"
    assert view["creator"] == ann.id
    assert view["ruleset"] == {"id": "classic", "version": 1}
    assert view["deal"] == {"source": "seed"}  # the seed would give the deck away: not while the race is on
    assert (view["maxEntrants"], view["timeLimitSeconds"]) == (3, 600)
    assert (view["startedAt"], view["endsAt"], view["finishedAt"]) == (None, None, None)
    assert [(e["player"], e["name"], e["game"], e["place"]) for e in view["entrants"]] == [(ann.id, "Ann", None, None)]
    assert race(client, view["id"]) == view
    assert "90210" not in client.get(f"/races/{view['id']}").text


def test_a_race_without_a_deal_gets_a_secret_deal(ann: Player) -> None:
    # never a seed or pool deal, whose deck and line anyone can look up (tests/api/test_race_deals.py)
    assert create_race(ann, ruleset="classic")["deal"] == {"source": "secret"}
    assert create_race(ann)["deal"] == {"source": "secret"}  # open-runs by default
    assert create_race(ann, ruleset="draw-one", deal={"deck": list(CODES)})["deal"] == {"source": "deck"}


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"ruleset": "classic"}, "the request body needs 'maxEntrants': an integer from 2 to 8 (the creator included)"),
        ({"maxEntrants": 1}, "'maxEntrants' must be an integer from 2 to 8 (the creator included), not 1"),
        ({"maxEntrants": 9}, "'maxEntrants' must be an integer from 2 to 8 (the creator included), not 9"),
        ({"maxEntrants": "2"}, "'maxEntrants' must be an integer from 2 to 8 (the creator included), not '2'"),
        (
            {"maxEntrants": 2, "timeLimitSeconds": 0},
            "'timeLimitSeconds' must be whole seconds from 1 to 86400 (a day), or null for no limit, not 0",
        ),
        (
            {"maxEntrants": 2, "timeLimitSeconds": 86_401},
            "'timeLimitSeconds' must be whole seconds from 1 to 86400 (a day), or null for no limit, not 86401",
        ),
        (
            {"maxEntrants": 2, "timeLimitSeconds": 1.5},
            "'timeLimitSeconds' must be whole seconds from 1 to 86400 (a day), or null for no limit, not 1.5",
        ),
        (
            {"maxEntrants": 2, "deal": {"daily": "today"}},
            "'deal' has no field 'daily': a race's deal is an object with exactly one of seed, pool or deck",
        ),
        (
            {"maxEntrants": 2, "deal": {"lesson": "wrapping"}},
            "'deal' has no field 'lesson': a race's deal is an object with exactly one of seed, pool or deck",
        ),
        (
            {"maxEntrants": 2, "deal": {"seed": 1, "pool": 2}},
            "'deal' names exactly one source (seed, pool or deck), not seed and pool",
        ),
        ({"maxEntrants": 2, "deal": {}}, "'deal' names exactly one source (seed, pool or deck), not none"),
        (
            {"maxEntrants": 2, "ruleset": "bridge"},
            "'ruleset' must be one of classic, draw-one, open-runs, not 'bridge'",
        ),
        ({"maxEntrants": 2, "ruleset": "classic", "deal": {"pool": 100_000}}, "pool deals run from 1 to"),
        ({"maxEntrants": 2, "deal": {"deck": ["AS"] * 52}}, "every card must appear once"),
        (
            {"maxEntrants": 2, "colour": "red"},
            (
                "the request body has no field 'colour'; "
                "it takes only 'maxEntrants', 'ruleset', 'deal', 'timeLimitSeconds' and 'rated'"
            ),
        ),
        ([], 'the request body must be a JSON object such as {"maxEntrants": 2}, not a list of 0'),
    ],
)
def test_bad_race_requests_are_refused(client: httpx.Client, ann: Player, body: dict[str, Any], detail: str) -> None:
    response = client.post("/races", json=body, headers=ann.auth)
    assert detail in assert_problem(response, 400, "invalid_request")["detail"]
    assert client.get("/races/open").json() == {"races": [], "nextBefore": None}  # nothing was created


def test_race_writes_need_a_token(client: httpx.Client, ann: Player) -> None:
    assert client.post("/races", json={"maxEntrants": 2}).status_code == 401
    view = create_race(ann)
    for path in (f"/races/{view['id']}/entries", f"/races/{view['id']}/start"):
        refused = client.post(path, json={})
        assert_problem(refused, 401, "unauthorized")
        assert client.post(path, json={}, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert race(client, view["id"]) == view  # nothing changed


def test_unknown_races_are_404(client: httpx.Client, ann: Player) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    for response in (
        client.get(f"/races/{missing}"),
        join(ann, missing),
        start(ann, missing),
        client.get(f"/races/{missing}/stream"),
    ):
        assert_problem(response, 404, "not_found")


def test_the_lobby_lists_open_races_newest_first(client: httpx.Client, ann: Player, bob: Player) -> None:
    assert client.get("/races/open").json() == {"races": [], "nextBefore": None}
    older = create_race(ann, ruleset="classic", deal={"seed": 4242}, maxEntrants=3)
    newer = create_race(bob, timeLimitSeconds=300)
    started_race(ann, [bob], ruleset="classic")  # running: not in the lobby
    assert join(bob, older["id"]).status_code == 201
    response = client.get("/races/open")
    assert response.status_code == 200
    assert "4242" not in response.text
    assert not CARD.search(response.text)
    listed = response.json()["races"]
    assert [r["id"] for r in listed] == [newer["id"], older["id"]]
    assert {k: listed[1][k] for k in ("creator", "creatorName", "ruleset", "deal", "maxEntrants", "entrants")} == {
        "creator": ann.id, "creatorName": "Ann", "ruleset": {"id": "classic", "version": 1},
        "deal": {"source": "seed"}, "maxEntrants": 3, "entrants": 2}
    assert listed[0]["timeLimitSeconds"] == 300
    assert listed[0]["deal"] == {"source": "secret"}
    assert [r["id"] for r in client.get("/races/open", params={"limit": 1}).json()["races"]] == [newer["id"]]
    assert client.get("/races/open", params={"limit": 0}).status_code == 400


def test_joining_fills_the_race_then_409s_clearly(client: httpx.Client, ann: Player, bob: Player) -> None:
    cid = Player(client, "Cid")
    view = create_race(ann, maxEntrants=2)
    joined = join(bob, view["id"])
    assert joined.status_code == 201
    assert joined.headers["location"] == f"/races/{view['id']}"
    assert [e["name"] for e in joined.json()["entrants"]] == ["Ann", "Bob"]
    again = join(bob, view["id"])
    assert_problem(again, 409, "already_entered")
    assert join(ann, view["id"]).json()["code"] == "already_entered"  # the creator is in it already
    full = join(cid, view["id"])
    assert full.status_code == 409
    assert full.json()["code"] == "race_full"
    assert "full" in full.json()["detail"]
    assert full.json()["title"] == "Conflict"
    assert len(race(client, view["id"])["entrants"]) == 2


def test_join_and_start_take_no_body_or_an_empty_object(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = create_race(ann, maxEntrants=2)
    for body in (b"[]", b'{"seat": 2}', b"not json", b'"x"'):
        refused = client.post(f"/races/{view['id']}/entries", content=body,
                              headers={**bob.auth, "Content-Type": "application/json"})
        assert refused.status_code == 400, (body, refused.text)
        assert refused.json()["code"] == "invalid_request", (body, refused.text)
    plain = client.post(
        f"/races/{view['id']}/entries", content=b"hello", headers={**bob.auth, "Content-Type": "text/plain"}
    )
    assert plain.status_code == 415
    assert len(race(client, view["id"])["entrants"]) == 1  # nothing changed
    assert client.post(f"/races/{view['id']}/entries", json={}, headers=bob.auth).status_code == 201
    assert (
        client.post(
            f"/races/{view['id']}/start", content=b" { } ", headers={**ann.auth, "Content-Type": "application/json"}
        ).status_code
        == 200
    )


def test_only_the_creator_starts_and_only_once(client: httpx.Client, ann: Player, bob: Player) -> None:
    cid = Player(client, "Cid")
    view = create_race(ann, ruleset="classic", deal={"seed": 5}, maxEntrants=3)
    assert join(bob, view["id"]).status_code == 201
    refused = start(bob, view["id"])
    assert_problem(refused, 403, "forbidden")
    assert race(client, view["id"])["status"] == "open"
    started = start(ann, view["id"])
    assert started.status_code == 200, started.text
    running = started.json()
    assert running["status"] == "running"
    assert running["startedAt"] is not None
    assert running["endsAt"] is None
    assert all(e["game"] and e["gameStatus"] == "playing" for e in running["entrants"])
    again = start(ann, view["id"])
    assert_problem(again, 409, "race_not_open")
    late = join(cid, view["id"])
    assert_problem(late, 409, "race_not_open")
    assert race(client, view["id"])["entrants"] == running["entrants"]


def test_the_start_deals_every_entrant_the_same_deck_at_the_same_moment(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 123})
    games = {p.id: client.get(f"/games/{game_of(view, p)}", headers=p.auth).json() for p in (ann, bob)}
    first, second = games[ann.id], games[bob.id]
    assert first["id"] != second["id"]
    assert first["player"] == ann.id
    assert second["player"] == bob.id
    assert first["startedAt"] == second["startedAt"]
    assert first["table"] == second["table"]
    assert first["baseRank"] == second["baseRank"]
    assert first["deal"] == {"source": "race", "race": view["id"]}  # never the seed
    for player in (ann, bob):
        assert play(player, game_of(view, player), [{"type": "resign"}])["game"]["status"] == "resigned"
    finished = race(client, view["id"])
    assert finished["status"] == "finished"
    assert finished["deal"] == {"source": "seed", "seed": 123}
    decks = [client.get(f"/games/{game_of(view, p)}/events").json()["events"][0]["data"]["deck"] for p in (ann, bob)]
    seeded = client.post("/games", json={"ruleset": "classic", "deal": {"seed": 123}}, headers=ann.auth).json()
    assert play(ann, seeded["id"], [{"type": "resign"}])
    assert decks[0] == decks[1] == client.get(f"/games/{seeded['id']}/events").json()["events"][0]["data"]["deck"]


@pytest.mark.smoke
def test_entrants_moves_are_ordinary_moves(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": POOL_DEAL})
    game = game_of(view, ann)
    assert ann.move(game, {"type": "draw"}, **{"If-Match": '"5"'}).status_code == 412
    first = ann.move(game, {"type": "draw"}, **{"Idempotency-Key": "k1"})
    again = ann.move(game, {"type": "draw"}, **{"Idempotency-Key": "k1"})
    assert first.status_code == 200
    assert again.content == first.content
    assert ann.move(game, {"type": "move", "card": "AS", "to": "tableau-9"}).status_code == 400
    assert bob.move(game, {"type": "draw"}).status_code == 403  # another entrant's game
    assert client.post(f"/games/{game}/moves", json={"type": "draw"}).status_code == 401
    assert entrant(race(client, view["id"]), ann)["moveCount"] == 1


# ---------------------------------------------------------------- the race rule for games


def reads(client: httpx.Client, game: str, headers: dict[str, str]) -> list[httpx.Response]:
    paths = [f"/games/{game}", f"/games/{game}/events", f"/games/{game}/states/1", f"/games/{game}/legal-moves",
             f"/games/{game}/hints"]
    found = [client.get(path, headers=headers) for path in paths]
    found.append(client.get(f"/games/{game}/events", headers={**headers, "Accept": "application/x-ndjson"}))
    found.append(client.get(f"/games/{game}/hints", params={"solver": "true"}, headers=headers))
    with client.stream("GET", f"/games/{game}/stream", headers=headers, timeout=httpx.Timeout(5)) as stream:
        if stream.status_code != 200:
            stream.read()
        found.append(stream)
    return found


def test_while_the_race_runs_a_game_answers_only_to_its_player(client: httpx.Client, ann: Player, bob: Player) -> None:
    outsider = Player(client, "Cid")
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 11})
    game = game_of(view, ann)
    for headers in (bob.auth, outsider.auth, {}):
        for response in reads(client, game, headers):
            assert response.status_code == 403, (response.request.url, headers, response.status_code)
            assert response.json()["code"] == "forbidden"
            assert not CARD.search(response.text)
    assert client.get(f"/games/{game}", headers={"Authorization": "Basic x"}).status_code == 403  # no token
    bad = client.get(f"/games/{game}", headers={"Authorization": "Bearer not-a-token"})
    assert bad.status_code == 401
    for path in (f"/games/{game}", f"/games/{game}/events", f"/games/{game}/states/1", f"/games/{game}/legal-moves",
                 f"/games/{game}/hints"):
        assert client.get(path, headers=ann.auth).status_code == 200, path
    summaries = client.get(f"/players/{ann.id}/games").json()["games"]
    assert summaries[0]["id"] == game
    assert summaries[0]["deal"] == {"source": "race", "race": view["id"]}
    assert not CARD.search(client.get(f"/players/{ann.id}/games").text)


def test_after_the_race_its_games_are_public_and_their_decks_shown_once_all_ended(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 12})
    mine, theirs = game_of(view, ann), game_of(view, bob)
    resigned = play(ann, mine, [{"type": "draw"}, {"type": "resign"}])
    # Ann's game has ended, Bob's has not: even to Ann, her game keeps the deck hidden.
    table = resigned["game"]["table"]
    assert "cards" not in table["stock"]
    assert "cards" not in table["reserve"]
    own = client.get(f"/games/{mine}", headers=ann.auth).json()
    assert own["status"] == "resigned"
    assert "cards" not in own["table"]["stock"]
    assert "deck" not in client.get(f"/games/{mine}/events", headers=ann.auth).json()["events"][0]["data"]
    assert client.get(f"/games/{mine}", headers=bob.auth).status_code == 403  # the race is still on
    play(bob, theirs, [{"type": "resign"}])
    assert race(client, view["id"])["status"] == "finished"
    for game in (mine, theirs):
        shown = client.get(f"/games/{game}")  # anyone, no token
        assert shown.status_code == 200
        assert len(shown.json()["table"]["stock"]["cards"]) > 0
        assert len(client.get(f"/games/{game}/events").json()["events"][0]["data"]["deck"]) == 52


# ---------------------------------------------------------------- places, verification, stats


def test_places_wins_by_time_then_cards_on_foundations_then_fewer_moves(client: httpx.Client) -> None:
    ann, fay, cid, bob, dan, eve = (Player(client, name) for name in ("Ann", "Fay", "Cid", "Bob", "Dan", "Eve"))
    view = started_race(ann, [fay, cid, bob, dan, eve], ruleset="classic", deal={"pool": POOL_DEAL}, maxEntrants=6)
    line = winning_line()
    three, two = prefix_with_cards(3), prefix_with_cards(2)
    play(ann, game_of(view, ann), line)  # wins first
    live = race(client, view["id"])
    assert live["status"] == "running"
    assert entrant(live, ann)["place"] == 1
    assert entrant(live, ann)["gameStatus"] == "won"
    assert entrant(live, ann)["verified"] is True
    assert entrant(live, fay)["verified"] is None
    assert live["entrants"][0]["player"] == ann.id  # by place
    play(fay, game_of(view, fay), line)  # wins later
    play(cid, game_of(view, cid), [*line[:three], {"type": "resign"}])
    play(bob, game_of(view, bob), [*line[:two], {"type": "resign"}])
    play(dan, game_of(view, dan), [*line[:two], {"type": "resign"}])  # the same as Bob: the same place
    play(eve, game_of(view, eve), [*line[:two], {"type": "draw"}, {"type": "undo"}, {"type": "resign"}])
    final = race(client, view["id"])
    assert final["status"] == "finished"
    by_name = {e["name"]: e for e in final["entrants"]}
    assert {name: e["place"] for name, e in by_name.items()} == {
        "Ann": 1,
        "Fay": 2,
        "Cid": 3,
        "Bob": 4,
        "Dan": 4,
        "Eve": 6,
    }
    assert [e["place"] for e in final["entrants"]] == [1, 2, 3, 4, 4, 6]
    assert by_name["Ann"]["finishedAt"] < by_name["Fay"]["finishedAt"]
    assert (by_name["Ann"]["cardsOnFoundations"], by_name["Ann"]["moveCount"]) == (52, len(line))
    assert (by_name["Cid"]["cardsOnFoundations"], by_name["Bob"]["cardsOnFoundations"]) == (3, 2)
    assert by_name["Eve"]["moveCount"] == by_name["Bob"]["moveCount"] + 2
    assert all(e["verified"] is True and e["assisted"] is False for e in final["entrants"])
    assert final["finishedAt"] == max(e["finishedAt"] for e in final["entrants"])
    stats = {
        name: client.get(f"/players/{p.id}/stats").json()["races"]
        for name, p in (("Ann", ann), ("Fay", fay), ("Bob", bob))
    }
    assert stats == {"Ann": {"played": 1, "won": 1}, "Fay": {"played": 1, "won": 0}, "Bob": {"played": 1, "won": 0}}
    sources = {s["source"]: s for s in client.get("/stats").json()["sources"]}
    assert (sources["race"]["played"], sources["race"]["won"]) == (6, 2)  # ordinary games, of the source "race"


def test_a_tampered_log_loses_its_place(client: httpx.Client, clean_database: str, ann: Player, bob: Player) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": POOL_DEAL})
    line = winning_line()
    mine, theirs = game_of(view, ann), game_of(view, bob)
    play(ann, mine, line[:-1])
    tamper_with_a_draw(clean_database, mine)  # one of Ann's stored events edited by hand
    assert play(ann, mine, line[-1:])["game"]["status"] == "won"  # the game as played is won ...
    live = race(client, view["id"])  # her log is checked as soon as her game ends: no place, even live
    assert live["status"] == "running"
    assert (entrant(live, ann)["place"], entrant(live, ann)["verified"]) == (None, False)
    assert (entrant(live, bob)["place"], entrant(live, bob)["verified"]) == (1, None)  # Bob plays on
    play(bob, theirs, [{"type": "draw"}, {"type": "resign"}])
    final = race(client, view["id"])
    assert final["status"] == "finished"
    # ... but its stored log does not replay through the rules: no place; Bob's honest resignation wins.
    assert [(e["name"], e["place"], e["verified"]) for e in final["entrants"]] == [
        ("Bob", 1, True),
        ("Ann", None, False),
    ]
    assert entrant(final, ann)["gameStatus"] == "won"  # what the game claims, shown as unverified
    assert client.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 1, "won": 0}
    assert client.get(f"/players/{bob.id}/stats").json()["races"] == {"played": 1, "won": 1}


def test_solver_hints_are_refused_while_the_race_runs(client: httpx.Client, ann: Player, bob: Player) -> None:
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": POOL_DEAL})
    hinted = client.get(f"/games/{game_of(view, bob)}/hints", params={"solver": "true"}, headers=bob.auth)
    assert (hinted.status_code, hinted.json()["code"]) == (409, "shared_deal")
    assert "solver" not in hinted.json()
    live = race(client, view["id"])
    assert [entrant(live, player)["assisted"] for player in (ann, bob)] == [False, False]
    assert client.get(f"/games/{game_of(view, bob)}", headers=bob.auth).json()["version"] == 1, "nothing recorded"
    plain = client.get(f"/games/{game_of(view, bob)}/hints", headers=bob.auth)
    assert plain.status_code == 200, "the ranked hints, from the visible cards, still answer"


def test_races_played_and_won_start_at_zero_and_count_only_finished_races(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    assert client.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 0, "won": 0}
    create_race(ann)  # never started
    started_race(ann, [bob], ruleset="classic", deal={"seed": 1})  # running
    assert client.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 0, "won": 0}


# ---------------------------------------------------------------- the stream


def next_message(stream: EventStream) -> dict[str, Any]:
    message = stream.next_event()
    assert message.data is not None
    assert not CARD.search(message.data)
    return {"event": message.event, "id": int(message.id or 0), "view": message.json()}


def test_the_race_stream_sends_the_view_then_each_change_then_the_end(
    client: httpx.Client, server_url: str, ann: Player, bob: Player
) -> None:
    view = create_race(ann, ruleset="classic", deal={"seed": 31}, maxEntrants=2)
    with httpx.Client(base_url=server_url, timeout=10) as watcher, watcher.stream(
        "GET", f"/races/{view['id']}/stream", timeout=httpx.Timeout(10)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = EventStream(response)
        first = next_message(stream)
        assert first["event"] == "race"
        assert first["view"] == race(client, view["id"])
        assert join(bob, view["id"]).status_code == 201
        joined = next_message(stream)
        assert [e["name"] for e in joined["view"]["entrants"]] == ["Ann", "Bob"]
        assert joined["id"] > first["id"]
        assert start(ann, view["id"]).status_code == 200
        assert next_message(stream)["view"]["status"] == "running"
        assert ann.move(game_of(race(client, view["id"]), ann), {"type": "draw"}).status_code == 200
        moved = next_message(stream)
        assert entrant(moved["view"], ann)["moveCount"] == 1
        for player in (ann, bob):
            assert player.move(game_of(moved["view"], player), {"type": "resign"}).status_code == 200
        while (message := next_message(stream))["event"] == "race":
            assert message["view"]["status"] == "running"
        assert message["event"] == "end"
        assert message["view"]["status"] == "finished"
        assert message["view"] == race(client, view["id"])
        stream.assert_closed()


# ---------------------------------------------------------------- the time limit, on the service's clock


@pytest.fixture(scope="module")
def clock() -> Clock:
    """This module's server's clock (the shared clocked server streams keep-alives too slowly here)."""
    return Clock()


@pytest.fixture(scope="module")
def clocked_server(database_url: str, clock: Clock) -> Iterator[str]:
    settings = server_settings(database_url, stream_keepalive_seconds=0.2)
    with running_server(settings, clock) as url:
        yield url


@pytest.fixture
def timed(clocked_server: str, clean_database: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=clocked_server, timeout=10) as http:
        yield http


def test_the_time_limit_ends_the_race_and_freezes_the_standings(timed: httpx.Client, clock: Clock) -> None:
    ann, bob = Player(timed, "Ann"), Player(timed, "Bob")
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": POOL_DEAL}, timeLimitSeconds=60)
    started = datetime.fromisoformat(view["startedAt"])
    assert started == clock()
    assert datetime.fromisoformat(view["endsAt"]) == started + timedelta(seconds=60)
    line = winning_line()
    two = prefix_with_cards(2)
    play(ann, game_of(view, ann), line[:two])
    play(bob, game_of(view, bob), line[:two - 1])
    clock.advance(seconds=59)
    assert race(timed, view["id"])["status"] == "running"
    clock.advance(seconds=1)  # the deadline: the race is over, whether or not anyone looks
    play(ann, game_of(view, ann), line[two:two + 5])  # moves after it are still taken (unranked) ...
    with timed.stream("GET", f"/races/{view['id']}/stream", timeout=httpx.Timeout(10)) as response:
        stream = EventStream(response)
        first = next_message(stream)
        assert first["event"] == "race"
        assert first["view"]["status"] == "finished"
        assert next_message(stream)["event"] == "end"
    final = race(timed, view["id"])
    assert final["status"] == "finished"
    assert datetime.fromisoformat(final["finishedAt"]) == started + timedelta(seconds=60)
    by_name = {e["name"]: e for e in final["entrants"]}
    # ... but the standings are those at the deadline: Ann's later moves do not count.
    assert (by_name["Ann"]["moveCount"], by_name["Ann"]["cardsOnFoundations"], by_name["Ann"]["place"]) == (two, 2, 1)
    assert (by_name["Bob"]["moveCount"], by_name["Bob"]["place"]) == (two - 1, 2)
    assert by_name["Ann"]["gameStatus"] == "playing"
    assert by_name["Ann"]["finishedAt"] is None
    game = timed.get(f"/games/{game_of(view, ann)}")  # public now ...
    assert game.status_code == 200
    assert game.json()["moveCount"] == two + 5
    assert "cards" not in game.json()["table"]["stock"]  # ... but a game in progress shows no hidden card
    assert final["deal"] == {"source": "pool"}  # games still going on: the deal stays unnamed
    clock.advance(seconds=3600)
    play(ann, game_of(view, ann), line[two + 5:])  # a win after the deadline changes nothing
    assert race(timed, view["id"])["entrants"] == final["entrants"]
    assert timed.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 1, "won": 1}


def test_the_race_stream_ends_when_the_time_is_up(timed: httpx.Client, clock: Clock) -> None:
    ann, bob = Player(timed, "Ann"), Player(timed, "Bob")
    view = started_race(ann, [bob], ruleset="classic", deal={"seed": 3}, timeLimitSeconds=30)
    with timed.stream("GET", f"/races/{view['id']}/stream", timeout=httpx.Timeout(10)) as response:
        stream = EventStream(response)
        assert next_message(stream)["view"]["status"] == "running"
        clock.advance(seconds=31)  # nobody moves or looks: the stream notices at its next keep-alive
        end = next_message(stream)
        assert end["event"] == "end"
        assert end["view"]["status"] == "finished"
        assert [e["place"] for e in end["view"]["entrants"]] == [1, 1]  # nothing done: a tie
    assert timed.get(f"/players/{bob.id}/stats").json()["races"] == {"played": 1, "won": 1}


def test_stats_count_a_race_whose_time_is_up_without_anyone_looking(timed: httpx.Client, clock: Clock) -> None:
    ann, bob = Player(timed, "Ann"), Player(timed, "Bob")
    view = started_race(ann, [bob], ruleset="classic", deal={"pool": POOL_DEAL}, timeLimitSeconds=10)
    play(ann, game_of(view, ann), winning_line()[:prefix_with_cards(2)])
    clock.advance(seconds=11)
    assert timed.get(f"/players/{ann.id}/stats").json()["races"] == {"played": 1, "won": 1}
    assert timed.get(f"/players/{bob.id}/stats").json()["races"] == {"played": 1, "won": 0}
