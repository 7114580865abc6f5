"""Personal access tokens (``/players/me``): several named tokens per player, each with scopes and
an optional expiry; listed without their secrets; a revoked or expired token refused at once, in
every server process; bad input refused in our words, changing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import assert_problem

from .conftest import Clock, Player, running_server, server_settings


def _make(player: Player, **body: Any) -> httpx.Response:
    return player.client.post("/players/me/tokens", json=body, headers=player.auth)


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _draw(client: httpx.Client, game_id: str, token: str) -> httpx.Response:
    return client.post(f"/games/{game_id}/moves", json={"type": "draw"}, headers=_as(token))


def test_me_names_the_player_and_the_token(client: httpx.Client) -> None:
    created = client.post("/players", json={"name": "Ann", "tokenName": "web table"}).json()
    me = client.get("/players/me", headers=_as(created["token"]))
    assert me.status_code == 200, me.text
    body = me.json()
    assert (body["id"], body["name"]) == (created["id"], "Ann")
    assert (body["token"]["name"], body["token"]["scopes"], body["token"]["expiresAt"]) == (
        "web table", ["play", "read-private", "account"], None,
    )
    assert created["token"] not in me.text
    assert_problem(client.get("/players/me"), 401, "unauthorized")
    assert_problem(client.get("/players/me", headers=_as("nope")), 401, "unauthorized")
    plain = client.post("/players", json={"name": "Bob"}).json()
    assert client.get("/players/me", headers=_as(plain["token"])).json()["token"]["name"] == "first token"


def test_a_player_holds_several_tokens_listed_without_secrets(client: httpx.Client, ann: Player) -> None:
    phone = _make(ann, name="phone", scopes=["play", "read-private"])
    bot = _make(ann, name="bot", scopes=["play"], expiresInDays=30)
    assert (phone.status_code, bot.status_code) == (201, 201), (phone.text, bot.text)
    assert phone.headers["location"] == "/players/me/tokens"
    listed = client.get("/players/me/tokens", headers=ann.auth)
    assert listed.status_code == 200
    tokens = listed.json()["tokens"]
    assert [token["name"] for token in tokens] == ["first token", "phone", "bot"]
    assert tokens[2]["scopes"] == ["play"]
    assert tokens[2]["expiresAt"] is not None
    assert all("token" not in token for token in tokens)
    for secret in (ann.token, phone.json()["token"], bot.json()["token"]):
        assert secret not in listed.text
    game = ann.new_game(deal={"seed": 3})
    for secret in (phone.json()["token"], bot.json()["token"]):
        assert _draw(client, game["id"], secret).status_code == 200


def test_scopes_limit_what_a_token_may_do(client: httpx.Client, ann: Player) -> None:
    reader = _make(ann, name="reader", scopes=["read-private"]).json()["token"]
    player = _make(ann, name="player", scopes=["play"]).json()["token"]
    game = ann.new_game(deal={"seed": 5})
    refused = client.post(f"/games/{game['id']}/moves", json={"type": "draw"}, headers=_as(reader))
    assert_problem(refused, 403, "forbidden")
    assert "'play' scope" in refused.json()["detail"]
    assert_problem(client.post("/games", json={"deal": {"seed": 1}}, headers=_as(reader)), 403, "forbidden")
    assert_problem(client.get("/players/me/tokens", headers=_as(player)), 403, "forbidden")
    made = client.post("/players/me/tokens", json={"name": "x", "scopes": ["play"]}, headers=_as(player))
    assert_problem(made, 403, "forbidden")
    assert client.get(f"/games/{game['id']}", headers=ann.auth).json()["version"] == 1, "nothing was played"
    assert client.get("/players/me", headers=_as(reader)).status_code == 200, "any live token may ask who it is"


@pytest.mark.smoke
def test_a_revoked_token_is_refused_at_once_and_others_stay(client: httpx.Client, ann: Player) -> None:
    made = _make(ann, name="phone", scopes=["play"]).json()
    game = ann.new_game(deal={"seed": 6})
    assert _draw(client, game["id"], made["token"]).status_code == 200
    revoked = client.delete(f"/players/me/tokens/{made['id']}", headers=ann.auth)
    assert revoked.status_code == 204, revoked.text
    after = _draw(client, game["id"], made["token"])
    assert_problem(after, 401, "unauthorized")
    assert client.get(f"/games/{game['id']}").json()["version"] == 2
    assert ann.move(game["id"], {"type": "draw"}).status_code == 200, "the other token still plays"
    assert [token["name"] for token in client.get("/players/me/tokens", headers=ann.auth).json()["tokens"]] == [
        "first token"
    ]
    again = client.delete(f"/players/me/tokens/{made['id']}", headers=ann.auth)
    assert_problem(again, 404, "not_found")


def test_revoking_all_signs_out_everywhere(client: httpx.Client, ann: Player) -> None:
    other = _make(ann, name="bot", scopes=["play", "account"]).json()["token"]
    game = ann.new_game(deal={"seed": 8})
    assert client.delete("/players/me/tokens", headers=_as(other)).status_code == 204
    for token in (ann.token, other):
        assert_problem(_draw(client, game["id"], token),
                       401, "unauthorized")
        assert_problem(client.get("/players/me", headers=_as(token)), 401, "unauthorized")


@pytest.mark.parametrize("body", [
    {}, {"name": "x"}, {"scopes": ["play"]}, {"name": "", "scopes": ["play"]}, {"name": "x", "scopes": []},
    {"name": "x", "scopes": ["admin"]}, {"name": "x", "scopes": ["play", "play"]},
    {"name": "\u0007", "scopes": ["play"]},
    {"name": "x", "scopes": ["play"], "expiresInDays": 0}, {"name": "x", "scopes": ["play"], "expiresInDays": 4000},
    {"name": "x", "scopes": ["play"], "expiresInDays": "soon"}, {"name": "x" * 101, "scopes": ["play"]},
    {"name": "x", "scopes": "play"}, {"name": "x", "scopes": ["play"], "extra": 1},
])
def test_a_bad_token_request_is_a_400_and_makes_nothing(client: httpx.Client, ann: Player, body: Any) -> None:
    assert_problem(_make(ann, **body), 400, "invalid_request")
    assert len(client.get("/players/me/tokens", headers=ann.auth).json()["tokens"]) == 1


def test_an_expired_token_is_refused_from_its_expiry(clocked: httpx.Client, clock: Clock) -> None:
    ann = Player(clocked, "Ann")
    made = _make(ann, name="day pass", scopes=["play", "account"], expiresInDays=1).json()
    game = ann.new_game(deal={"seed": 9})
    assert _draw(clocked, game["id"], made["token"]).status_code == 200
    clock.advance(hours=23)
    assert clocked.get("/players/me/tokens", headers=_as(made["token"])).status_code == 200
    clock.advance(hours=1, seconds=1)
    assert_problem(_draw(clocked, game["id"], made["token"]),
                   401, "unauthorized")
    assert_problem(clocked.get("/players/me", headers=_as(made["token"])), 401, "unauthorized")
    assert [token["name"] for token in clocked.get("/players/me/tokens", headers=ann.auth).json()["tokens"]] == [
        "first token"
    ]


@pytest.fixture(scope="module")
def second_server(database_url: str) -> Iterator[str]:
    """Another server process's worth of state (its own token cache and listener) on the same database."""
    with running_server(server_settings(database_url)) as url:
        yield url


def test_a_token_revoked_through_one_server_is_refused_by_another(
    client: httpx.Client, second_server: str, ann: Player
) -> None:
    made = _make(ann, name="phone", scopes=["play"]).json()
    game = ann.new_game(deal={"seed": 10})
    with httpx.Client(base_url=second_server, timeout=10) as other:
        draw = _draw(other, game["id"], made["token"])
        assert draw.status_code == 200, "the other server now has the token cached"
        assert client.delete(f"/players/me/tokens/{made['id']}", headers=ann.auth).status_code == 204
        refused = _draw(other, game["id"], made["token"])
        assert_problem(refused, 401, "unauthorized")
    assert client.get(f"/games/{game['id']}").json()["version"] == 2
