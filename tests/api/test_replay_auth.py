"""A replay passes the checks its first request passed, the registration key is a secret, and
tokens are bounded (service.http.idempotency, service.players.accounts).

- A stored reply of a creating POST goes back only to a token of the same player holding every
  scope the first request's token held: a ``read-private`` token replaying the key an all-scope
  token minted a token with gets ``403 idempotency_key_forbidden`` and no secret; another player
  with the same key gets a reply of their own.
- ``POST /players`` keys are at least 32 characters (a random UUID passes): shorter is ``400
  idempotency_key_too_short`` before anything is created.
- A token mints only scopes it holds (``403 scope_not_held``); a player holds at most
  TOKENS_PER_PLAYER live tokens (``409 too_many_tokens``).
- ``DELETE /players/me`` erases the stored replies, the registration's too: its key is new again.

Every refusal is checked to change nothing (the token list, the rows)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from service.settings import Settings
from tests.support import assert_problem

from .conftest import Player, running_server, server_settings
from .test_idempotency import assert_replayed, count

MINT = "/players/me/tokens"
ALL = ["play", "read-private", "account"]


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _post(client: httpx.Client, path: str, body: Any, key: str, token: str) -> httpx.Response:
    return client.post(path, json=body, headers={**_as(token), "Idempotency-Key": key})


def _mint(player: Player, name: str, scopes: list[str], token: str | None = None) -> str:
    made = player.client.post(MINT, json={"name": name, "scopes": scopes}, headers=_as(token or player.token))
    assert made.status_code == 201, made.text
    secret: str = made.json()["token"]
    return secret


def _token_list(player: Player) -> list[dict[str, Any]]:
    listed = player.client.get(MINT, headers=player.auth)
    assert listed.status_code == 200, listed.text
    tokens: list[dict[str, Any]] = listed.json()["tokens"]
    return tokens


# ---------------------------------------------------------------- a replay is authorized


def test_a_weaker_token_cannot_replay_a_minted_secret(client: httpx.Client, ann: Player, clean_database: str) -> None:
    reader = _mint(ann, "reader", ["read-private"])
    player = _mint(ann, "player", ["play", "read-private"])
    body = {"name": "bot", "scopes": ["play"]}
    first = _post(client, MINT, body, "mint-1", ann.token)
    assert first.status_code == 201, first.text
    secret = first.json()["token"]
    before = _token_list(ann)

    for weaker in (reader, player):  # neither holds 'account', which the first token held
        refused = _post(client, MINT, body, "mint-1", weaker)
        assert_problem(refused, 403, "idempotency_key_forbidden")
        assert secret not in refused.text
        assert "idempotent-replayed" not in refused.headers
        assert "'account'" in refused.json()["detail"]
    assert _token_list(ann) == before, "a refused replay changes nothing"
    assert count(clean_database, "tokens") == 4

    # the same token, or another one holding every scope the first one held, gets it byte for byte
    assert_replayed(first, _post(client, MINT, body, "mint-1", ann.token))
    other_full = _mint(ann, "second full", ALL)
    again = _post(client, MINT, body, "mint-1", other_full)
    assert_replayed(first, again)
    assert again.json()["token"] == secret
    assert count(clean_database, "tokens") == 5  # the five above, and no second "bot"


def test_a_game_key_replays_only_to_a_token_holding_the_first_ones_scopes(
    client: httpx.Client, ann: Player, clean_database: str
) -> None:
    play_only = _mint(ann, "bot", ["play"])
    body = {"deal": {"seed": 7}}
    by_full = _post(client, "/games", body, "game-by-full", ann.token)
    assert by_full.status_code == 201, by_full.text
    refused = _post(client, "/games", body, "game-by-full", play_only)
    assert_problem(refused, 403, "idempotency_key_forbidden")
    assert by_full.json()["id"] not in refused.text
    assert count(clean_database, "games") == 1

    by_bot = _post(client, "/games", body, "game-by-bot", play_only)  # the first token held only 'play'
    assert by_bot.status_code == 201, by_bot.text
    assert_replayed(by_bot, _post(client, "/games", body, "game-by-bot", ann.token))
    assert_replayed(by_bot, _post(client, "/games", body, "game-by-bot", play_only))
    assert count(clean_database, "games") == 2


def test_a_refused_replay_says_so_before_comparing_the_request(
    client: httpx.Client, ann: Player, clean_database: str
) -> None:
    """A weaker token learns nothing of the first request: another body is the same 403."""
    reader = _mint(ann, "reader", ["read-private"])
    assert _post(client, MINT, {"name": "a", "scopes": ["play"]}, "k", ann.token).status_code == 201
    other_body = _post(client, MINT, {"name": "b", "scopes": ["play"]}, "k", reader)
    assert_problem(other_body, 403, "idempotency_key_forbidden")


def test_another_player_with_the_same_key_gets_a_reply_of_their_own(
    client: httpx.Client, ann: Player, bob: Player, clean_database: str
) -> None:
    body = {"name": "bot", "scopes": ["play"]}
    anns = _post(client, MINT, body, "mint-1", ann.token)
    bobs = _post(client, MINT, body, "mint-1", bob.token)
    assert (anns.status_code, bobs.status_code) == (201, 201), (anns.text, bobs.text)
    assert "idempotent-replayed" not in bobs.headers
    assert bobs.json()["token"] != anns.json()["token"]
    assert anns.json()["token"] not in bobs.text
    me = client.get("/players/me", headers=_as(bobs.json()["token"]))
    assert me.json()["id"] == bob.id


def _row_key(key: str) -> str:
    """The name a key's row has (service.http.idempotency: a hash, never the key)."""
    return hashlib.sha256(b"canfield key\0" + key.encode()).hexdigest()


def test_a_row_without_scopes_asks_for_every_scope(client: httpx.Client, ann: Player, clean_database: str) -> None:
    """A reply stored by the release before migration 0014 records no scopes and no player."""
    play_only = _mint(ann, "bot", ["play"])
    first = _post(client, "/games", {"deal": {"seed": 7}}, "old-row", play_only)
    assert first.status_code == 201, first.text
    with psycopg.connect(clean_database, autocommit=True) as conn:
        changed = conn.execute(
            "UPDATE request_keys SET scopes = NULL, player_id = NULL WHERE key = %s", (_row_key("old-row"),)
        ).rowcount
    assert changed == 1
    assert_problem(_post(client, "/games", {"deal": {"seed": 7}}, "old-row", play_only), 403,
                   "idempotency_key_forbidden")
    assert_replayed(first, _post(client, "/games", {"deal": {"seed": 7}}, "old-row", ann.token))
    assert count(clean_database, "games") == 1


def test_a_weaker_token_does_not_wait_on_a_pending_key(client: httpx.Client, ann: Player, clean_database: str) -> None:
    """A key still being served (pending) is refused to a weaker token at once, not after the wait."""
    reader = _mint(ann, "reader", ["read-private"])
    with psycopg.connect(clean_database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO request_keys (scope, key, request_hash, created_at, player_id, scopes)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (f"player:{ann.id}", _row_key("pending"), b"x", datetime.now(UTC), uuid.UUID(ann.id), ALL),
        )
    refused = _post(client, MINT, {"name": "x", "scopes": ["read-private"]}, "pending", reader)
    assert_problem(refused, 403, "idempotency_key_forbidden")
    assert count(clean_database, "tokens") == 2


# ---------------------------------------------------------------- POST /players: the key is a secret


@pytest.mark.parametrize("key", ["signup-1", "k", "0123456789abcdef0123456789abcde"])  # the last: 31 characters
def test_a_short_registration_key_is_refused_and_creates_nothing(
    client: httpx.Client, clean_database: str, key: str
) -> None:
    refused = client.post("/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    assert_problem(refused, 400, "idempotency_key_too_short")
    assert "32 characters" in refused.json()["detail"]
    assert f"this one is {len(key)}" in refused.json()["detail"]
    assert count(clean_database, "players") == 0
    assert count(clean_database, "request_keys") == 0


# fixed values (not drawn at collection: every pytest-xdist worker must collect the same tests)
@pytest.mark.parametrize("key", ["5f0c8a3e-9d4b-4c2a-8e71-3b6f0d9a2c54", "8c1e4b7a2f6d4e09a3b5c7d8e9f01a2b",
                                 "0123456789abcdef" * 2])
def test_a_random_uuid_or_32_characters_registers_and_replays_the_token(
    client: httpx.Client, clean_database: str, key: str
) -> None:
    first = client.post("/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text
    again = client.post("/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    assert_replayed(first, again)
    assert again.json()["token"] == first.json()["token"]
    assert count(clean_database, "players") == 1
    with psycopg.connect(clean_database) as conn:  # the row names the player it registered
        assert conn.execute("SELECT player_id FROM request_keys").fetchall() == [(uuid.UUID(first.json()["id"]),)]


def test_short_keys_stay_fine_where_a_token_is_the_secret(ann: Player, clean_database: str) -> None:
    assert _post(ann.client, "/games", {"deal": {"seed": 1}}, "g", ann.token).status_code == 201


# ---------------------------------------------------------------- DELETE /players/me erases the replies


def test_deleting_the_account_erases_its_stored_replies(client: httpx.Client, clean_database: str) -> None:
    key = str(uuid.uuid4())
    signup = client.post("/players", json={"name": "Ann Example"}, headers={"Idempotency-Key": key})
    assert signup.status_code == 201, signup.text
    ann_id, token = signup.json()["id"], signup.json()["token"]
    assert _post(client, MINT, {"name": "bot", "scopes": ["play"]}, "mint-1", token).status_code == 201
    bob = Player(client, "Bob")
    assert _post(client, "/games", {"deal": {"seed": 1}}, "bob-game", bob.token).status_code == 201
    assert count(clean_database, "request_keys") == 3

    assert client.delete("/players/me", headers=_as(token)).status_code == 204
    with psycopg.connect(clean_database) as conn:
        left = conn.execute("SELECT scope, player_id FROM request_keys").fetchall()
    assert left == [(f"player:{bob.id}", uuid.UUID(bob.id))], "only Bob's reply is left"

    # the registration's key is new again: it registers a new player, nothing of Ann comes back
    again = client.post("/players", json={"name": "Ann Example"}, headers={"Idempotency-Key": key})
    assert again.status_code == 201, again.text
    assert "idempotent-replayed" not in again.headers
    assert again.json()["id"] != ann_id
    assert token not in again.text
    assert client.get("/players/me", headers=_as(token)).status_code == 401
    assert client.get(f"/players/{ann_id}").status_code == 404


# ---------------------------------------------------------------- minting: held scopes, a cap


def test_a_token_mints_only_scopes_it_holds(client: httpx.Client, ann: Player, clean_database: str) -> None:
    account_only = _mint(ann, "manager", ["account"])
    manager_and_player = _mint(ann, "manager and player", ["account", "play"])
    before = _token_list(ann)
    for scopes, lacking in ((["play"], "'play'"), (["play", "read-private"], "'play' and 'read-private'")):
        refused = client.post(MINT, json={"name": "x", "scopes": scopes}, headers=_as(account_only))
        assert_problem(refused, 403, "scope_not_held")
        assert f"lacks {lacking}" in refused.json()["detail"]
    refused = client.post(MINT, json={"name": "x", "scopes": ["play", "read-private"]}, headers=_as(manager_and_player))
    assert_problem(refused, 403, "scope_not_held")
    assert "lacks 'read-private'" in refused.json()["detail"]
    assert _token_list(ann) == before, "a refused mint makes nothing"

    made = client.post(MINT, json={"name": "bot", "scopes": ["play"]}, headers=_as(manager_and_player))
    assert made.status_code == 201, made.text
    assert made.json()["scopes"] == ["play"]
    assert _mint(ann, "manager 2", ["account"], token=account_only)


@pytest.fixture
def capped(database_url: str, clean_database: str) -> Iterator[httpx.Client]:
    """A server whose players hold at most 3 live tokens."""
    with running_server(server_settings(database_url, tokens_per_player=3)) as url, \
            httpx.Client(base_url=url, timeout=10) as http:
        yield http


def test_a_player_holds_at_most_tokens_per_player_live_tokens(capped: httpx.Client, clean_database: str) -> None:
    ann = Player(capped, "Ann")  # the first token counts
    _mint(ann, "phone", ["play"])
    bot = _mint(ann, "bot", ["play"])
    before = _token_list(ann)
    refused = _post(capped, MINT, {"name": "one more", "scopes": ["play"]}, "one-more", ann.token)
    assert_problem(refused, 409, "too_many_tokens")
    assert "3 live tokens" in refused.json()["detail"]
    assert "revoke" in refused.json()["detail"]
    assert _token_list(ann) == before
    assert count(clean_database, "request_keys") == 0, "the refusal gave its key back"

    other = Player(capped, "Bob")  # the cap is per player
    assert _mint(other, "phone", ["play"])

    bot_id = next(token["id"] for token in before if token["name"] == "bot")
    assert capped.delete(f"{MINT}/{bot_id}", headers=ann.auth).status_code == 204
    assert capped.get("/players/me", headers=_as(bot)).status_code == 401
    made = _post(capped, MINT, {"name": "one more", "scopes": ["play"]}, "one-more", ann.token)
    assert made.status_code == 201, made.text  # a revoked token frees its place; the key runs as new
    assert [token["name"] for token in _token_list(ann)] == ["first token", "phone", "one more"]


def test_the_cap_is_a_setting_fifty_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKENS_PER_PLAYER", raising=False)
    assert Settings.from_env().tokens_per_player == 50
    monkeypatch.setenv("TOKENS_PER_PLAYER", "7")
    assert Settings.from_env().tokens_per_player == 7
