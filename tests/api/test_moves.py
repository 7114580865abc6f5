from typing import Any

import httpx
import pytest

from tests.support import assert_problem

from .conftest import Player


def events_of(client: httpx.Client, game_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    return events


def first_card_move(client: httpx.Client, game_id: str) -> dict[str, Any] | None:
    moves = client.get(f"/games/{game_id}/legal-moves").json()["moves"]
    return next((m for m in moves if m["type"] == "move"), None)


def test_a_draw_appends_an_event_and_returns_the_new_view(ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 3})
    response = ann.move(game["id"], {"type": "draw"})
    assert response.status_code == 200
    assert response.headers["etag"] == '"2"'
    body = response.json()
    assert body["game"]["version"] == 2
    assert body["game"]["moveCount"] == 1
    assert body["game"]["table"]["stock"]["count"] == 31
    assert [e["type"] for e in body["events"]] == ["StockDrawn"]
    waste = body["game"]["table"]["waste"]
    assert len(waste) == 3, "the whole packet is face up and listed"
    assert body["events"][0]["data"] == {"count": 3, "wasteTop": waste[-1], "cards": waste}


@pytest.mark.smoke
def test_a_card_move_and_its_undo_are_both_in_the_log(ann: Player) -> None:
    game = ann.new_game(ruleset="open-runs", deal={"seed": 4})
    for _ in range(12):
        move = first_card_move(ann.client, game["id"])
        if move:
            break
        ann.move(game["id"], {"type": "draw"})
    assert move is not None
    before = ann.client.get(f"/games/{game['id']}").json()
    moved = ann.move(game["id"], move).json()
    assert moved["events"][0]["type"] == "CardsMoved"
    assert moved["events"][0]["data"]["card"] == move["card"]
    undone = ann.move(game["id"], {"type": "undo"}).json()
    assert undone["game"]["table"] == before["table"]
    assert undone["game"]["undoCount"] == 1
    types = [e["type"] for e in events_of(ann.client, game["id"])]
    assert types[-1] == "MoveUndone"
    assert "CardsMoved" in types


@pytest.mark.smoke
def test_an_illegal_move_is_422_with_a_reason_and_changes_nothing(ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 3})
    before = events_of(ann.client, game["id"])
    response = ann.move(game["id"], {"type": "recycle"})
    assert response.status_code == 422
    problem = response.json()
    assert problem["code"] == "illegal_move"
    assert problem["detail"] == "the stock still has 34 cards: recycle only when it is empty"
    assert events_of(ann.client, game["id"]) == before
    assert ann.client.get(f"/games/{game['id']}").json() == game


@pytest.mark.parametrize(
    ("move", "message"),
    [
        ({"type": "fly"}, "type"),
        ({"type": "move", "card": "7H"}, "a move needs 'to'"),
        ({"type": "move", "to": "foundation"}, "a move needs 'card'"),
        ({"type": "move", "card": "77", "to": "foundation"}, "'77' is not a card code"),
        ({"type": "move", "card": "7H", "to": "tableau-9"}, "'to' must be"),
        ({"type": "draw", "card": "7H"}, "a draw takes no fields besides 'type'"),
        ({"type": "draw", "count": 2}, "count"),
        ({}, "type"),
    ],
)
def test_a_malformed_move_is_400_and_changes_nothing(ann: Player, move: dict[str, Any], message: str) -> None:
    game = ann.new_game(deal={"seed": 3})
    response = ann.move(game["id"], move)
    assert_problem(response, 400, "invalid_request")
    assert message in response.json()["detail"]
    assert len(events_of(ann.client, game["id"])) == 1


def test_a_finished_game_is_409_game_over(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 3})
    resigned = ann.move(game["id"], {"type": "resign"}).json()
    assert resigned["game"]["status"] == "resigned"
    assert resigned["game"]["finishedAt"] is not None
    for move in ({"type": "draw"}, {"type": "undo"}, {"type": "resign"}):
        response = ann.move(game["id"], move)
        assert_problem(response, 409, "game_over")
    assert len(events_of(ann.client, game["id"])) == 2


def test_moves_need_the_games_own_player(ann: Player, bob: Player, client: httpx.Client) -> None:
    game = ann.new_game(deal={"seed": 3})
    assert bob.move(game["id"], {"type": "draw"}).status_code == 403
    assert bob.move(game["id"], {"type": "draw"}).json()["code"] == "forbidden"
    anonymous = client.post(f"/games/{game['id']}/moves", json={"type": "draw"})
    assert anonymous.status_code == 401
    forged = client.post(f"/games/{game['id']}/moves", json={"type": "draw"}, headers={"Authorization": "Bearer x" * 3})
    assert forged.status_code == 401
    assert len(events_of(client, game["id"])) == 1


def test_if_match_makes_a_move_conditional(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 3})
    stale = ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"7"'})
    assert_problem(stale, 412, "version_conflict")
    assert len(events_of(ann.client, game["id"])) == 1
    fresh = ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"1"'})
    assert fresh.status_code == 200
    assert fresh.headers["etag"] == '"2"'
    again = ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"1"'})
    assert again.status_code == 412


@pytest.mark.parametrize("header", ["seven", '"1', "1.5", "-1"])
def test_a_malformed_if_match_is_400(ann: Player, header: str) -> None:
    game = ann.new_game(deal={"seed": 3})
    response = ann.move(game["id"], {"type": "draw"}, **{"If-Match": header})
    assert response.status_code == 400
    assert "If-Match" in response.json()["detail"]


@pytest.mark.smoke
def test_an_idempotency_key_returns_the_first_result_and_appends_nothing(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 3})
    first = ann.move(game["id"], {"type": "draw"}, **{"Idempotency-Key": "draw-1"})
    again = ann.move(game["id"], {"type": "draw"}, **{"Idempotency-Key": "draw-1"})
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert len(events_of(ann.client, game["id"])) == 2
    other = ann.move(game["id"], {"type": "draw"}, **{"Idempotency-Key": "draw-2"})
    assert other.json()["game"]["version"] == 3


def test_an_idempotency_key_reused_for_another_move_is_400(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 3})
    ann.move(game["id"], {"type": "draw"}, **{"Idempotency-Key": "k"})
    response = ann.move(game["id"], {"type": "resign"}, **{"Idempotency-Key": "k"})
    assert response.status_code == 400
    assert "different move" in response.json()["detail"]
    assert len(events_of(ann.client, game["id"])) == 2


def test_the_same_idempotency_key_in_another_game_is_independent(ann: Player) -> None:
    one = ann.new_game(deal={"seed": 3})
    two = ann.new_game(deal={"seed": 4})
    ann.move(one["id"], {"type": "draw"}, **{"Idempotency-Key": "k"})
    response = ann.move(two["id"], {"type": "draw"}, **{"Idempotency-Key": "k"})
    assert response.status_code == 200
    assert "idempotent-replayed" not in response.headers
