"""Ratings from rated races, over HTTP as players and bots would meet them (docs/ratings.md).

Four scripted entrants of set strength race on secret deals; their ratings move by place; an
entrant whose stored log fails the replay check is left unrated; a deleted account leaves the
rating list only; the rebuild from the event log gives the same numbers to the last bit."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any

import httpx
import psycopg
import pytest

from service.ratings.rebuild import rebuild_ratings

from .conftest import Clock, Player, play
from .race_support import POOL_DEAL, create_race, entrant, game_of, race, tamper_with_a_draw
from .rating_support import cards_after, play_to_strength, race_line, rated_race
from .test_races_processes import at_once


def bot(client: httpx.Client, name: str) -> Player:
    player = Player.__new__(Player)
    response = client.post("/players", json={"name": name, "bot": True})
    assert response.status_code == 201, response.text
    assert response.json()["bot"] is True
    player.id, player.token, player.client = response.json()["id"], response.json()["token"], client
    return player


@pytest.fixture
def field(client: httpx.Client) -> list[Player]:
    """Four entrants, strongest first: two people and two bots."""
    return [Player(client, "Ann"), bot(client, "Bot Bob"), Player(client, "Cid"), bot(client, "Bot Dan")]


def ratings_of(client: httpx.Client, player: Player) -> list[dict[str, Any]]:
    response = client.get(f"/players/{player.id}/ratings")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["ratings"]
    return found


def rating_list(client: httpx.Client, **params: Any) -> httpx.Response:
    response = client.get("/ratings/classic", params=params)
    assert response.status_code == 200, response.text
    return response


def stored_ratings(database_url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with psycopg.connect(database_url) as conn:
        ratings = conn.execute("SELECT player_id, ruleset_id, mu, sigma, rating, deviation, races, updated_at"
                               " FROM player_ratings ORDER BY player_id, ruleset_id").fetchall()
        changes = conn.execute("SELECT * FROM rating_changes ORDER BY sequence, race_id, player_id").fetchall()
    return ratings, changes


def test_a_bot_account_says_so_in_every_view_of_its_player(client: httpx.Client, ann: Player) -> None:
    robot = bot(client, "Robo")
    assert client.get(f"/players/{robot.id}").json()["bot"] is True
    assert client.get("/players/me", headers=robot.auth).json()["bot"] is True
    assert client.get(f"/players/{ann.id}").json()["bot"] is False
    assert client.get("/players/me", headers=ann.auth).json()["bot"] is False
    exported = client.get("/players/me/export", headers=robot.auth).text.splitlines()[0]
    assert '"bot":true' in exported
    refused = client.post("/players", json={"name": "Odd", "bot": "yes"})
    assert refused.status_code == 400


def test_a_rated_race_moves_ratings_by_place(client: httpx.Client, clean_database: str, field: list[Player]) -> None:
    view = rated_race(field[0], field[1:])
    play_to_strength(clean_database, view, field)
    final = race(client, view["id"])
    assert final["status"] == "finished"
    assert [e["player"] for e in final["entrants"]] == [p.id for p in field]
    assert [e["place"] for e in final["entrants"]] == [1, 2, 3, 4]
    assert all(e["ratingBefore"] == 1500 for e in final["entrants"])
    after = [e["ratingAfter"] for e in final["entrants"]]
    assert after == sorted(after, reverse=True)
    assert len(set(after)) == 4
    assert after[0] > 1500 > after[3]

    mine = ratings_of(client, field[0])
    assert mine == [{"ruleset": "classic", "rating": after[0], "deviation": mine[0]["deviation"],
                     "provisional": True, "races": 1}]
    assert mine[0]["deviation"] < 500
    listed = rating_list(client).json()
    assert [item["player"] for item in listed["items"]] == [
        {"id": p.id, "name": name, "bot": is_bot}
        for p, name, is_bot in zip(field, ["Ann", "Bot Bob", "Cid", "Bot Dan"], [False, True, False, True],
                                   strict=True)
    ]
    assert [item["rating"] for item in listed["items"]] == after
    assert listed["next"] is None

    second = rated_race(field[0], field[1:])  # the same order again: the ratings spread further
    play_to_strength(clean_database, second, field)
    again = race(client, second["id"])
    assert [e["ratingBefore"] for e in again["entrants"]] == after
    assert again["entrants"][0]["ratingAfter"] > after[0]
    assert again["entrants"][3]["ratingAfter"] < after[3]
    history = client.get(f"/players/{field[0].id}/ratings/classic/history", params={"limit": 1})
    assert history.status_code == 200
    page = history.json()
    assert [p["race"] for p in page["items"]] == [second["id"]]
    assert (page["items"][0]["place"], page["items"][0]["entrants"]) == (1, 4)
    path = f"/players/{field[0].id}/ratings/classic/history"
    assert history.headers["link"] == f'<{path}?limit=1&cursor={page["next"]}>; rel="next"'
    older = client.get(path, params={"limit": 1, "cursor": page["next"]})
    assert [p["race"] for p in older.json()["items"]] == [view["id"]]
    assert older.json()["next"] is None
    assert "link" not in older.headers
    assert older.json()["items"][0]["ratingAfter"] == page["items"][0]["ratingBefore"]


def test_the_rating_list_pages_best_first(client: httpx.Client, clean_database: str, field: list[Player]) -> None:
    view = rated_race(field[0], field[1:])
    play_to_strength(clean_database, view, field)
    first = rating_list(client, limit=3)
    assert [i["player"]["id"] for i in first.json()["items"]] == [p.id for p in field[:3]]
    cursor = first.json()["next"]
    assert first.headers["link"] == f'</ratings/classic?limit=3&cursor={cursor}>; rel="next"'
    rest = rating_list(client, limit=3, cursor=cursor).json()
    assert ([i["player"]["id"] for i in rest["items"]], rest["next"]) == ([field[3].id], None)
    assert rating_list(client, limit=3).json() == first.json(), "the same page twice"
    assert client.get("/ratings/draw-one").json() == {"items": [], "next": None}


def test_an_unverified_place_changes_no_rating(client: httpx.Client, clean_database: str, field: list[Player]) -> None:
    ann, bob, cid = field[:3]
    view = rated_race(ann, [bob, cid])
    line = race_line(clean_database, view["id"])
    mine = game_of(view, ann)
    play(ann, mine, line[:-1])
    tamper_with_a_draw(clean_database, mine)  # one of Ann's stored events edited by hand
    play(ann, mine, line[-1:])
    play(bob, game_of(view, bob), [line[0], {"type": "resign"}])
    play(cid, game_of(view, cid), [{"type": "resign"}])
    final = race(client, view["id"])
    assert (entrant(final, ann)["place"], entrant(final, ann)["verified"]) == (None, False)
    assert (entrant(final, ann)["ratingBefore"], entrant(final, ann)["ratingAfter"]) == (None, None)
    assert ratings_of(client, ann) == []
    assert {i["player"]["id"] for i in rating_list(client).json()["items"]} == {bob.id, cid.id}
    for player in (bob, cid):
        point = client.get(f"/players/{player.id}/ratings/classic/history").json()["items"][0]
        assert point["entrants"] == 2, "rated among the two verified entrants"
        assert (point["place"], point["ratingAfter"] > 1500) == (entrant(final, player)["place"], point["place"] == 1)

    duel = rated_race(ann, [bob])  # one of two unverified: fewer than two left, nobody is rated
    line = race_line(clean_database, duel["id"])
    theirs = game_of(duel, bob)
    play(bob, theirs, line[:3])
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute("UPDATE events SET type = 'GameWon' WHERE game_id = %s AND version = 2", (theirs,))
    play(bob, theirs, [{"type": "resign"}])
    play(ann, game_of(duel, ann), [{"type": "resign"}])
    over = race(client, duel["id"])
    assert over["status"] == "finished"
    assert entrant(over, bob)["verified"] is False
    assert all(e["ratingAfter"] is None for e in over["entrants"])
    assert ratings_of(client, bob)[0]["races"] == 1, "the first race only"
    assert ratings_of(client, ann) == []


def test_a_deleted_players_ratings_leave_the_list(client: httpx.Client, clean_database: str,
                                                  field: list[Player]) -> None:
    view = rated_race(field[0], field[1:])
    play_to_strength(clean_database, view, field)
    before = {i["player"]["id"]: i["rating"] for i in rating_list(client).json()["items"]}
    gone = field[3]
    assert client.delete("/players/me", headers=gone.auth).status_code == 204
    after = {i["player"]["id"]: i["rating"] for i in rating_list(client).json()["items"]}
    assert after == {key: value for key, value in before.items() if key != gone.id}
    assert client.get(f"/players/{gone.id}/ratings").status_code == 404
    assert entrant(race(client, view["id"]), gone)["ratingAfter"] == before[gone.id], "the race keeps its figures"


def test_the_rebuild_gives_the_same_numbers(client: httpx.Client, clean_database: str, field: list[Player]) -> None:
    for order in (field, [field[2], field[0], field[3], field[1]], field[::-1]):
        view = rated_race(order[0], order[1:])
        play_to_strength(clean_database, view, order)
        assert race(client, view["id"])["status"] == "finished"
    assert client.delete("/players/me", headers=field[1].auth).status_code == 204  # stays in the computation
    live = stored_ratings(clean_database)
    assert len(live[0]) == 4
    assert len(live[1]) == 12
    with psycopg.connect(clean_database, autocommit=True) as conn:  # the projection spoiled, then rebuilt
        conn.execute("UPDATE player_ratings SET mu = 0, rating = 0")
        conn.execute("DELETE FROM rating_changes WHERE place = 1")
    summary = rebuild_ratings(clean_database)
    assert (summary["ratedRaces"], summary["ratingChanges"], summary["ratedPlayers"]) == (3, 12, 4)
    assert stored_ratings(clean_database) == live


def test_rated_races_finishing_at_once_are_rated_one_after_the_other(
    client: httpx.Client, clean_database: str, field: list[Player]
) -> None:
    ann, bob, cid, dan = field
    races = [rated_race(ann, [bob]), rated_race(ann, [cid]), rated_race(dan, [bob])]
    for view, other in zip(races, (bob, cid, dan), strict=True):
        play(other, game_of(view, other), [{"type": "resign"}])
    last = [(ann, races[0]), (ann, races[1]), (bob, races[2])]  # Ann's two races and Bob's second end together
    at_once([partial(player.move, game_of(view, player), {"type": "resign"}) for player, view in last])
    assert all(race(client, view["id"])["status"] == "finished" for view in races)
    for player, count in ((ann, 2), (bob, 2), (cid, 1), (dan, 1)):
        points = client.get(f"/players/{player.id}/ratings/classic/history").json()["items"]
        assert len(points) == count
        chained = [(newer["ratingBefore"], older["ratingAfter"]) for newer, older in itertools.pairwise(points)]
        assert all(before == after for before, after in chained), "each race starts from the one before"
        assert ratings_of(client, player)[0]["races"] == count
    live = stored_ratings(clean_database)
    rebuild_ratings(clean_database)
    assert stored_ratings(clean_database) == live


def test_a_rated_race_cut_at_its_time_limit_rebuilds_from_the_cut_logs(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann, bob = Player(clocked, "Ann"), Player(clocked, "Bob")
    view = rated_race(ann, [bob], timeLimitSeconds=60)
    line = race_line(clean_database, view["id"])
    dealt, *counts = cards_after(clean_database, view["id"])
    play(ann, game_of(view, ann), line[: next(i for i, c in enumerate(counts) if c > dealt) + 1])  # one card more
    clock.advance(seconds=61)
    play(bob, game_of(view, bob), line)  # a win, but after the time limit: it does not count
    final = race(clocked, view["id"])
    assert (final["status"], final["finishedAt"]) == ("finished", final["endsAt"])
    assert [e["player"] for e in final["entrants"]] == [ann.id, bob.id]
    assert entrant(final, ann)["ratingAfter"] > 1500 > entrant(final, bob)["ratingAfter"]
    live = stored_ratings(clean_database)
    rebuild_ratings(clean_database)
    assert stored_ratings(clean_database) == live, "the rebuild cuts the logs where the race did"


def test_a_rated_race_needs_a_secret_deal(client: httpx.Client, ann: Player) -> None:
    for deal in ({"seed": 7}, {"pool": POOL_DEAL}, {"deck": ["AS"] * 52}):
        refused = client.post("/races", json={"maxEntrants": 2, "rated": True, "deal": deal}, headers=ann.auth)
        assert refused.status_code == 400, refused.text
        assert refused.json()["code"] in ("rated_race_needs_secret_deal", "invalid_request")
    named = client.post("/races", json={"maxEntrants": 2, "rated": True, "deal": {"seed": 7}}, headers=ann.auth)
    assert named.json()["code"] == "rated_race_needs_secret_deal"
    assert "secret deal" in named.json()["detail"]
    assert client.get("/races/open").json()["races"] == [], "nothing was created"
    assert create_race(ann, deal={"seed": 7})["rated"] is False
    rated = create_race(ann, rated=True)
    assert (rated["rated"], rated["deal"]) == (True, {"source": "secret"})
    assert {race["id"]: race["rated"] for race in client.get("/races/open").json()["races"]}[rated["id"]] is True


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/ratings/klondike", 404),
        ("/ratings/classic?limit=0", 400),
        ("/ratings/classic?limit=201", 400),
        ("/ratings/classic?cursor=bm9wZQ", 400),
        ("/players/00000000-0000-4000-8000-000000000000/ratings", 404),
        ("/players/00000000-0000-4000-8000-000000000000/ratings/classic/history", 404),
    ],
)
def test_bad_rating_requests_are_refused(client: httpx.Client, path: str, status: int) -> None:
    response = client.get(path)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
