"""Every refusal says what was wrong in the project's own words, never a framework's or a parser's.

Pinned: a query or path parameter (not ``ParamType.QUERY parameter 'limit'``), a malformed id (not a
bare 404), a wrongly typed field (not ``Expected `str | null`, got `int` - at `$.to```), and a
trailing slash (refused, not silently routed). Then a sweep of bad requests across the API: none
of their details carries a library's phrasing.
"""

from __future__ import annotations

from typing import Any

import httpx
import psycopg
import pytest

from tests.support import assert_problem

from .conftest import Player

GAME = "00000000-0000-4000-8000-000000000000"
LIBRARY_WORDS = ["ParamType", "Expected `", "got `", "- at `", "$.", "Object contains", "Object missing", "msgspec",
                 "litestar", "Invalid enum value", "KeyError", "ValidationError", "NoneType"]  # fmt: skip


def problem(response: httpx.Response, status: int) -> str:
    detail: str = assert_problem(response, status)["detail"]
    for word in LIBRARY_WORDS:
        assert word not in detail, (word, detail)
    return detail


def events(client: httpx.Client, game: str) -> list[Any]:
    found: list[Any] = client.get(f"/games/{game}/events").json()["events"]
    return found


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("limit=5000", "query parameter 'limit' must be an integer of at most 1000, not '5000'"),
        ("limit=0", "query parameter 'limit' must be an integer of at least 1, not '0'"),
        ("after=-1", "query parameter 'after' must be an integer of at least 0, not '-1'"),
        ("limit=abc", "query parameter 'limit' must be an integer written in ASCII digits"),
    ],
)
def test_a_bad_query_parameter_is_named_in_our_words(ann: Player, query: str, detail: str) -> None:
    game = ann.new_game(deal={"seed": 1})
    assert problem(ann.client.get(f"/games/{game['id']}/events?{query}"), 400) == detail


def test_a_bad_flag_and_a_bad_path_number_are_named_in_our_words(ann: Player) -> None:
    game = ann.new_game(deal={"seed": 1})
    flag = problem(ann.client.get(f"/games/{game['id']}/hints?solver=maybe", headers=ann.auth), 400)
    assert flag == "query parameter 'solver' must be true or false, not 'maybe'"
    assert (
        problem(ann.client.get("/deals/pool/0"), 400)
        == "path parameter 'number' must be an integer of at least 1, not 0"
    )


@pytest.mark.parametrize(
    ("method", "path", "detail"),
    [
        ("GET", "/games/1234", "'1234' is not a game id: ids are UUIDs written as 8-4-4-4-12 hex digits"),
        ("GET", "/games/1234/events", "'1234' is not a game id"),
        ("POST", "/games/1234/moves", "'1234' is not a game id"),
        ("GET", "/players/123/stats", "'123' is not a player id"),
        ("GET", f"/games/{GAME.replace('-', '')}", "is not a game id"),
        ("GET", f"/games/urn:uuid:{GAME}", "is not a game id"),
        ("GET", f"/games/{GAME}/states/abc", "'abc' is not a game version: write it in ASCII digits"),
        ("GET", "/deals/pool/1_0", "'1_0' is not a pool deal number"),
    ],
)
def test_a_malformed_id_or_number_in_a_path_says_so(ann: Player, method: str, path: str, detail: str) -> None:
    response = ann.client.request(method, path, json={"type": "draw"} if method == "POST" else None, headers=ann.auth)
    assert detail in problem(response, 404)
    assert response.json()["code"] == "not_found"


def test_a_well_formed_id_of_nothing_is_a_plain_404(client: httpx.Client) -> None:
    assert problem(client.get(f"/games/{GAME}"), 404) == f"no game {GAME}"


@pytest.mark.parametrize(
    ("move", "detail"),
    [
        ({"type": "move", "card": "7H", "to": 1}, "'to' must be 'foundation' or 'tableau-1' .. 'tableau-4', not 1"),
        (
            {"type": "move", "card": "7H", "to": None},
            "'to' must be 'foundation' or 'tableau-1' .. 'tableau-4', not null",
        ),
        (
            {"type": "move", "card": "7H", "to": "tableau-9"},
            "'to' must be 'foundation' or 'tableau-1' .. 'tableau-4', not 'tableau-9'",
        ),
        (
            {"type": "move", "card": 7, "to": "foundation"},
            "'card' must be a card code: a rank (A 2-9 T J Q K) then a suit (S H D C), e.g. '7H', not 7",
        ),
        ({"type": "move", "card": "7H"}, "a move needs 'to': 'foundation' or 'tableau-1' .. 'tableau-4'"),
        ({"type": "draw", "card": None}, "a draw takes no fields besides 'type', not 'card'"),
        (
            {"type": "move", "card": "7H", "to": "foundation", "x": 1},
            "a move takes only 'type', 'card' and 'to', not 'x'",
        ),
        ({"type": 3}, "'type' must be one of draw, recycle, move, undo, resign, not 3"),
        ({"type": "fly"}, "'type' must be one of draw, recycle, move, undo, resign, not 'fly'"),
        ({}, "a move needs 'type': one of draw, recycle, move, undo, resign"),
        ([{"type": "draw"}], 'a move must be a JSON object such as {"type": "draw"}, not a list of 1'),
    ],
)
def test_a_wrongly_typed_move_is_refused_in_our_words_and_changes_nothing(ann: Player, move: Any, detail: str) -> None:
    game = ann.new_game(deal={"seed": 2})
    before = events(ann.client, game["id"])
    assert problem(ann.move(game["id"], move), 400) == detail
    assert events(ann.client, game["id"]) == before


def test_a_trailing_slash_is_a_404_that_says_so_and_changes_nothing(ann: Player, clean_database: str) -> None:
    game = ann.new_game(deal={"seed": 3})
    before = events(ann.client, game["id"])
    for method, path, body in [
        ("POST", f"/games/{game['id']}/moves/", {"type": "draw"}),
        ("POST", "/games/", {"deal": {"seed": 4}}),
        ("GET", f"/games/{game['id']}/", None),
        ("GET", "/rulesets/", None),
        ("GET", "/games/", None),
    ]:
        detail = problem(ann.client.request(method, path, json=body, headers=ann.auth), 404)
        assert detail == "the path ends with '/': no path of this API does (leave the last '/' out)", path
    detail = problem(ann.client.post(f"/games//{game['id']}/moves", json={"type": "draw"}, headers=ann.auth), 404)
    assert "empty segment" in detail
    assert events(ann.client, game["id"]) == before
    with psycopg.connect(clean_database) as conn:
        assert conn.execute("SELECT count(*) FROM games").fetchone() == (1,)  # /games/ dealt nothing


BAD_REQUESTS: list[tuple[str, str, Any]] = [
    ("POST", "/players", {"name": 5}),
    ("POST", "/players", {"name": ""}),
    ("POST", "/players", {"name": "x" * 41}),
    ("POST", "/players", {"nom": "x"}),
    ("POST", "/players", {}),
    ("POST", "/games", {"ruleset": 3}),
    ("POST", "/games", {"ruleset": ["classic"]}),
    ("POST", "/games", {"deal": {"seed": True}}),
    ("POST", "/games", {"deal": {"seed": 1.5}}),
    ("POST", "/games", {"deal": {"pool": "7"}}),
    ("POST", "/games", {"deal": {"daily": None}}),
    ("POST", "/games", {"deal": {"deck": "QS 4D"}}),
    ("POST", "/games", {"deal": {"deck": [None] * 52}}),
    ("POST", "/games", {"deal": [1]}),
    ("GET", "/games/{game}/events?after=x", None),
    ("GET", "/games/{game}/states/0", None),
    ("GET", "/deals/pool/99999999", None),
    ("GET", "/deals/daily/tomorrow", None),
    ("GET", "/rulesets/klondike", None),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_REQUESTS)
def test_no_refusal_speaks_a_library_s_language(ann: Player, method: str, path: str, body: Any) -> None:
    game = ann.new_game(deal={"seed": 5})
    response = ann.client.request(method, path.format(game=game["id"]), json=body, headers=ann.auth)
    assert 400 <= response.status_code < 500, response.text
    detail = problem(response, response.status_code)
    assert len(detail) > 10


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"{", "the request body is not valid JSON: it ends before the JSON value does"),
        (b'{"name": "a"} x', "the request body is not valid JSON: there is more after the JSON value (at byte 15)"),
        (b'{"name" "a"}', "the request body is not valid JSON: ':' is missing at byte 8"),
        (b"\xff\xfe", "the request body is not valid JSON: an unexpected character at byte 0"),
        (b'{"name": "\xff"}', "the request body is not valid JSON: it is not UTF-8 text"),
        (b'{"name": 1e999}', "the request body is not valid JSON: a number in it is too large for any field here"),
        (b"", "the request needs a JSON body"),
        (b"  ", "the request needs a JSON body"),
        (b"[]", "the request body must be an object, not a list of 0"),
    ],
)
def test_a_body_that_is_no_json_object_says_where_in_our_words(client: httpx.Client, body: bytes, detail: str) -> None:
    assert problem(client.post("/players", content=body, headers={"Content-Type": "application/json"}), 400) == detail


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("status=null", "query parameter 'status' must be one of playing, ended, not 'null' (leave it out for all)"),
        ("status=None", "query parameter 'status' must be one of playing, ended, not 'None'"),
        ("status=", "query parameter 'status' must be one of playing, ended, not an empty string"),
        ("before=", "query parameter 'before' must be text matching ^[A-Za-z0-9_-]{1,200}$, not an empty string"),
    ],
)
def test_a_query_value_outside_its_enum_is_refused_in_our_words(ann: Player, query: str, detail: str) -> None:
    assert problem(ann.client.get(f"/players/{ann.id}/games?{query}"), 400) == detail
