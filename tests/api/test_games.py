from typing import Any

import httpx
import pytest

from domain import CODES, shuffled_deck
from tests.support import assert_problem

from .conftest import Player


@pytest.mark.smoke
def test_a_seed_deal_is_the_documented_shuffle(ann: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 123})
    deck = [CODES[c] for c in shuffled_deck(123)]
    table = game["table"]
    assert game["deal"] == {"source": "seed", "seed": 123}
    assert game["ruleset"] == {"id": "classic", "version": 1}
    assert table["reserve"] == {"count": 13, "top": deck[12]}
    assert table["tableau"] == [[code] for code in deck[14:18]]
    assert game["baseRank"] == deck[13][0]
    assert table["stock"] == {"count": 34}
    assert table["waste"] == []
    assert game["status"] == "playing"
    assert game["version"] == 1
    assert game["moveCount"] == 0


def test_the_same_seed_gives_the_same_cards_to_everyone(ann: Player, bob: Player) -> None:
    first = ann.new_game(deal={"seed": 2**53 - 1})
    second = bob.new_game(deal={"seed": 2**53 - 1})
    assert first["table"] == second["table"]
    assert first["id"] != second["id"]


def test_an_explicit_deck_is_dealt_in_api_order_and_not_echoed(ann: Player) -> None:
    deck = list(reversed(CODES))
    game = ann.new_game(ruleset="draw-one", deal={"deck": deck})
    assert game["deal"] == {"source": "deck"}
    assert game["table"]["reserve"]["top"] == deck[12]
    assert game["table"]["foundations"][deck[13][1]] == [deck[13]]
    assert game["table"]["tableau"] == [[c] for c in deck[14:18]]
    ann.move(game["id"], {"type": "draw"})
    assert ann.client.get(f"/games/{game['id']}").json()["table"]["waste"] == [deck[18]]


def test_the_ruleset_defaults_to_open_runs(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 4})
    assert game["ruleset"]["id"] == "open-runs"


@pytest.mark.parametrize("ruleset", ["classic", "draw-one"])
def test_without_a_deal_a_random_seed_is_dealt_and_reported(ann: Player, ruleset: str) -> None:
    game = ann.new_game(ruleset=ruleset)
    assert game["deal"]["source"] == "seed"
    assert 0 <= game["deal"]["seed"] < 2**53


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"deal": {"seed": 1, "deck": list(CODES)}},
            "'deal' names exactly one source (seed, pool, daily, deck or lesson), not seed and deck",
        ),
        ({"deal": {}}, "'deal' names exactly one source (seed, pool, daily, deck or lesson), not none"),
        ({"deal": {"seed": None}}, "'deal.seed' must be an integer from 0 to 2^53 - 1 (9007199254740991), not null"),
        ({"deal": {"deck": list(CODES[:51])}}, "exactly 52 cards, not 51"),
        ({"deal": {"deck": [*CODES[:51], "AS"]}}, "deck[51]: AS is already at deck[0]"),
        ({"deal": {"deck": [*CODES[:51], "ZZ"]}}, "deck[51]: 'ZZ' is not a card code"),
        ({"deal": {"seed": -1}}, "'deal.seed' must be an integer from 0 to 2^53 - 1 (9007199254740991), not -1"),
        (
            {"deal": {"seed": 2**53}},
            "'deal.seed' must be an integer from 0 to 2^53 - 1 (9007199254740991), not 9007199254740992",
        ),
        ({"deal": {"seed": "12"}}, "'deal.seed' must be an integer from 0 to 2^53 - 1 (9007199254740991), not '12'"),
        (
            {"deal": {"deck": [*CODES[:51], 5]}},
            "'deal.deck[51]' must be a card code: a rank (A 2-9 T J Q K) then a suit (S H D C), e.g. '7H', not 5",
        ),
        ({"deal": {"daily": 20261130}}, "'deal.daily' must be 'today' or a UTC date written YYYY-MM-DD, not 20261130"),
        ({"deal": "seed"}, "'deal' must be a JSON object such as {\"seed\": 7}, not 'seed'"),
        ({"ruleset": "klondike"}, "'ruleset' must be one of classic, draw-one, open-runs, not 'klondike'"),
        ({"deal": {"colour": "red"}}, "'deal' has no field 'colour'"),
        ({"extra": 1}, "the request body has no field 'extra'; it takes only 'ruleset' and 'deal'"),
        ([], "the request body must be a JSON object"),
    ],
)
def test_a_bad_deal_is_a_400_that_says_what_is_wrong(ann: Player, body: dict[str, Any], message: str) -> None:
    response = ann.client.post("/games", json=body, headers=ann.auth)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "invalid_request"
    assert message in problem["detail"]


def test_dealing_needs_a_valid_token(client: httpx.Client) -> None:
    missing = client.post("/games", json={"deal": {"seed": 1}})
    assert_problem(missing, 401, "unauthorized")
    assert "Bearer" in missing.headers["www-authenticate"]
    wrong = client.post("/games", json={"deal": {"seed": 1}}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    scheme = client.post("/games", json={"deal": {"seed": 1}}, headers={"Authorization": "Basic abc"})
    assert scheme.status_code == 401


def test_the_game_view_carries_its_version_as_etag(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 5})
    response = ann.client.get(f"/games/{game['id']}")
    assert response.status_code == 200
    assert response.headers["etag"] == '"1"'
    assert response.json() == game
    assert ann.client.get(f"/games/{game['id']}", headers={"If-None-Match": '"1"'}).status_code == 304
    ann.move(game["id"], {"type": "draw"})
    again = ann.client.get(f"/games/{game['id']}", headers={"If-None-Match": '"1"'})
    assert again.status_code == 200
    assert again.headers["etag"] == '"2"'


def test_an_unknown_game_is_404(client: httpx.Client) -> None:
    for path in ("", "/legal-moves", "/hints", "/events", "/states/1"):
        response = client.get(f"/games/00000000-0000-4000-8000-000000000000{path}")
        assert response.status_code == 404, path
        assert response.json()["code"] == "not_found"


@pytest.mark.smoke
def test_legal_moves_and_hints_use_the_move_format(ann: Player) -> None:
    game = ann.new_game(ruleset="open-runs", deal={"seed": 8})
    legal = ann.client.get(f"/games/{game['id']}/legal-moves").json()
    assert legal["version"] == 1
    assert {"type": "draw"} in legal["moves"]
    assert {"type": "resign"} in legal["moves"]
    for move in legal["moves"]:
        if move["type"] == "move":
            assert set(move) == {"type", "card", "to"}
    hints = ann.client.get(f"/games/{game['id']}/hints").json()["hints"]
    assert hints
    assert all(h["reason"] for h in hints)
    assert all(h["move"] in legal["moves"] for h in hints)
    assert {"type": "resign"} not in [h["move"] for h in hints]
