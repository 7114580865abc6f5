"""What docs/security.md promises about tokens and authorization, checked from the outside.

(Hidden cards: tests/api/test_hidden_cards.py. The simpler token checks: test_players_and_rulesets.py
and test_moves.py.)"""

from __future__ import annotations

import hashlib
import string
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from service.players.tokens import ALL_SCOPES, Credentials, TokenCache

from .conftest import Player

URLSAFE = set(string.ascii_letters + string.digits + "-_")


def database_text(url: str) -> str:
    """Every row of every table of the schema, as PostgreSQL prints it."""
    with psycopg.connect(url) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()]
        parts = []
        for table in tables:
            parts += [row[0] for row in conn.execute(f"SELECT t::text FROM {table} t").fetchall()]
    return "\n".join(parts)


def test_a_token_is_kept_nowhere_but_as_its_sha256(client: httpx.Client, ann: Player, clean_database: str) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 5})
    assert ann.move(game["id"], {"type": "draw"}, **{"Idempotency-Key": "once"}).status_code == 200
    assert ann.move(game["id"], {"type": "draw"}, **{"If-Match": '"2"'}).status_code == 200
    assert ann.move(game["id"], {"type": "resign"}).status_code == 200
    everything = database_text(clean_database)
    assert ann.token not in everything
    assert ann.token.encode().hex() not in everything  # nor as bytes
    with psycopg.connect(clean_database) as conn:
        stored = conn.execute("SELECT token_hash FROM tokens WHERE player_id = %s", (ann.id,)).fetchone()
    assert stored is not None
    assert bytes(stored[0]) == hashlib.sha256(ann.token.encode()).digest()
    for path in (
        f"/players/{ann.id}",
        f"/players/{ann.id}/stats",
        f"/games/{game['id']}",
        f"/games/{game['id']}/events",
    ):
        assert ann.token not in client.get(path).text


def test_tokens_are_long_random_and_url_safe(client: httpx.Client) -> None:
    tokens = {Player(client, f"P{i}").token for i in range(5)}
    assert len(tokens) == 5
    for token in tokens:
        assert len(token) >= 43
        assert set(token) <= URLSAFE


def test_only_the_exact_token_is_accepted(client: httpx.Client, ann: Player, clean_database: str) -> None:
    game = ann.new_game(deal={"seed": 4})
    assert ann.move(game["id"], {"type": "draw"}).status_code == 200  # the real token is now cached too
    with psycopg.connect(clean_database) as conn:
        stored = bytes(conn.execute("SELECT token_hash FROM tokens WHERE player_id = %s", (ann.id,)).fetchone()[0])
    token = ann.token
    near_misses = [
        token[:-1], token + "A", token[1:], token.swapcase(), token[:-1] + ("A" if token[-1] != "A" else "B"),
        stored.hex(),  # a leaked hash is not a token
        hashlib.sha256(token.encode()).hexdigest(),
    ]
    for guess in near_misses:
        response = client.post(
            f"/games/{game['id']}/moves", json={"type": "draw"}, headers={"Authorization": f"Bearer {guess}"}
        )
        assert response.status_code == 401, guess
        assert response.json()["code"] == "unauthorized"
        assert response.headers["www-authenticate"].lower().startswith("bearer")
    assert len(client.get(f"/games/{game['id']}/events").json()["events"]) == 2


def test_the_in_process_token_cache_keeps_only_digests() -> None:
    """Tokens are compared only as SHA-256 digests (the cache here, a unique index in PostgreSQL):
    how long a lookup takes says nothing usable about a token, and memory holds no token."""
    cache = TokenCache(size=2, clock=lambda: datetime.now(UTC))
    player = Credentials(uuid.uuid4(), uuid.uuid4(), frozenset(ALL_SCOPES), None)
    token = "a-secret-token-" + "x" * 30
    cache.remember(token, player)
    assert list(cache.tokens) == [hashlib.sha256(token.encode()).digest()]
    assert cache.get(token) == player
    assert cache.get(token[:-1]) is None
    assert cache.get(token + "x") is None
    for other in ("b" * 43, "c" * 43):
        cache.remember(other, player._replace(player_id=uuid.uuid4()))
    assert len(cache.tokens) == 2
    assert cache.get(token) is None


MOVES: list[dict[str, Any]] = [
    {"type": "draw"}, {"type": "recycle"}, {"type": "undo"}, {"type": "resign"},
    {"type": "move", "card": "AS", "to": "foundation"},
]


def test_another_player_can_never_write_to_someones_game(client: httpx.Client, ann: Player, bob: Player) -> None:
    game = ann.new_game(ruleset="classic", deal={"seed": 6})
    game_id = game["id"]
    first = ann.move(game_id, {"type": "draw"}, **{"Idempotency-Key": "ann-1"})
    assert first.status_code == 200
    legal = client.get(f"/games/{game_id}/legal-moves").json()["moves"]
    bobs = bob.new_game(deal={"seed": 6})
    assert bob.move(bobs["id"], {"type": "draw"}).status_code == 200  # Bob's token is known to the server too
    before = client.get(f"/games/{game_id}/events").json()
    version = client.get(f"/games/{game_id}").json()["version"]

    header_sets: list[dict[str, str]] = [
        {}, {"If-Match": f'"{version}"'}, {"Idempotency-Key": "ann-1"}, {"Idempotency-Key": "bob-1"},
    ]
    for move in MOVES + [m for m in legal if m["type"] == "move"]:
        for headers in header_sets:
            response = bob.move(game_id, move, **headers)
            assert response.status_code == 403, (move, headers, response.text)
            assert response.json()["code"] == "forbidden"
            assert "game" not in response.json()  # not Ann's stored reply to her key
            anonymous = client.post(f"/games/{game_id}/moves", json=move, headers=headers)
            assert anonymous.status_code == 401
    solver = client.get(f"/games/{game_id}/hints", params={"solver": "true"}, headers=bob.auth)
    assert solver.status_code == 403
    assert "solver" not in solver.json()

    after = client.get(f"/games/{game_id}").json()
    assert client.get(f"/games/{game_id}/events").json() == before
    assert (after["version"], after["status"], after["assisted"]) == (version, "playing", False)
    # And Ann still can: her retry gets her first reply, her next move lands.
    again = ann.move(game_id, {"type": "draw"}, **{"Idempotency-Key": "ann-1"})
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert ann.move(game_id, {"type": "draw"}).status_code == 200


@pytest.mark.parametrize("finished", [False, True])
def test_authorization_comes_before_any_other_answer(
    client: httpx.Client, ann: Player, bob: Player, finished: bool
) -> None:
    """403 whatever the game's state or the move: the answer says nothing about the game but that
    it is someone else's (a 409 or 422 would)."""
    game = ann.new_game(deal={"seed": 2})
    if finished:
        assert ann.move(game["id"], {"type": "resign"}).status_code == 200
    for move in ({"type": "draw"}, {"type": "move", "card": "KH", "to": "tableau-9"}, {"type": "undo"}):
        response = bob.move(game["id"], move, **{"If-Match": '"999"'})
        assert response.status_code in (400, 403), response.text
        if response.status_code == 400:  # the body itself is malformed (no such pile): checked first
            assert move["to"] == "tableau-9"
        else:
            assert response.json()["code"] == "forbidden"
