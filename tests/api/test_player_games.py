"""GET /players/{id}/games: a client that lost its game id can find and resume its games."""

from __future__ import annotations

import httpx
import pytest

from tests.support import assert_problem

from .conftest import Player


def summary_fields(view: dict) -> dict:
    keys = (
        "id", "ruleset", "deal", "status", "version", "moveCount", "undoCount", "assisted", "startedAt", "finishedAt",
    )
    return {key: view[key] for key in keys}


def test_a_players_games_newest_first_with_what_a_client_needs_to_resume(
    client: httpx.Client, ann: Player, bob: Player
) -> None:
    first = ann.new_game(ruleset="classic", deal={"seed": 1})
    second = ann.new_game(ruleset="draw-one", deal={"seed": 2})
    bob.new_game(deal={"seed": 3})
    assert ann.move(second["id"], {"type": "draw"}).status_code == 200
    response = client.get(f"/players/{ann.id}/games")
    assert response.status_code == 200, response.text
    body = response.json()
    assert [g["id"] for g in body["games"]] == [second["id"], first["id"]]
    assert body["nextBefore"] is None
    current = client.get(f"/games/{second['id']}").json()
    assert body["games"][0] == summary_fields(current)
    assert body["games"][0]["moveCount"] == 1
    assert body["games"][0]["deal"] == {"source": "seed", "seed": 2}
    # a summary never carries a card: the game is resumed with GET /games/{id}
    assert "table" not in body["games"][0]


def test_the_status_filter_splits_playing_and_ended_games(client: httpx.Client, ann: Player) -> None:
    playing = ann.new_game(deal={"seed": 4})
    ended = ann.new_game(deal={"seed": 5})
    assert ann.move(ended["id"], {"type": "resign"}).status_code == 200
    on = client.get(f"/players/{ann.id}/games", params={"status": "playing"}).json()["games"]
    off = client.get(f"/players/{ann.id}/games", params={"status": "ended"}).json()["games"]
    assert [g["id"] for g in on] == [playing["id"]]
    assert [(g["id"], g["status"]) for g in off] == [(ended["id"], "resigned")]
    assert off[0]["finishedAt"] is not None
    bad = client.get(f"/players/{ann.id}/games", params={"status": "won"})
    assert_problem(bad, 400, "invalid_request")


def test_pages_follow_the_cursor_without_gaps_or_repeats(client: httpx.Client, ann: Player) -> None:
    made = [ann.new_game(ruleset="classic", deal={"seed": seed})["id"] for seed in range(7)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 3} | ({"before": cursor} if cursor else {})
        body = client.get(f"/players/{ann.id}/games", params=params).json()
        assert len(body["games"]) <= 3
        seen += [g["id"] for g in body["games"]]
        pages += 1
        if pages == 1:  # a game started during the walk is newer than every cursor: not in later pages
            newer = ann.new_game(ruleset="classic", deal={"seed": 99})["id"]
        cursor = body["nextBefore"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == list(reversed(made))
    assert client.get(f"/players/{ann.id}/games", params={"limit": 1}).json()["games"][0]["id"] == newer


@pytest.mark.parametrize("cursor", ["nope", "!!!", "MjAyNi0xMi0wMQ", "a" * 200])
def test_a_cursor_that_this_list_did_not_give_is_a_400(client: httpx.Client, ann: Player, cursor: str) -> None:
    response = client.get(f"/players/{ann.id}/games", params={"before": cursor})
    assert_problem(response, 400, "invalid_request")


def test_an_unknown_player_has_no_games_list(client: httpx.Client) -> None:
    response = client.get("/players/00000000-0000-4000-8000-000000000000/games")
    assert_problem(response, 404, "not_found")


def test_limit_is_1_to_1000(client: httpx.Client, ann: Player) -> None:
    for limit in ("0", "1001", "x"):
        assert client.get(f"/players/{ann.id}/games", params={"limit": limit}).status_code == 400
    assert client.get(f"/players/{ann.id}/games", params={"limit": "1000"}).status_code == 200
