"""Idempotency-Key on every creating POST (service.http.idempotency), and the expiry of keys.

A retry with the same key and request returns the first reply byte for byte and creates
nothing; the same key with another request is refused; keys belong to a player (or, for
POST /players, to the client address); a failure is not kept; keys expire. Rows are counted in
the database itself."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from service.http.idempotency import expire_keys
from service.store.connections import libpq_url
from service.store.request_keys import RequestKeys
from tests.api.conftest import Clock, Player

JSON = {"Content-Type": "application/json"}


def count(database_url: str, table: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # a table name of this file
    assert row is not None
    return int(row[0])


def assert_replayed(first: httpx.Response, again: httpx.Response) -> None:
    """``again`` is ``first`` byte for byte (status, body, the headers that matter), marked replayed."""
    assert again.status_code == first.status_code
    assert again.content == first.content
    for name in ("location", "etag", "content-type"):
        assert again.headers.get(name) == first.headers.get(name), name
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"


def post(client: httpx.Client, path: str, body: Any, key: str, auth: dict[str, str] | None = None) -> httpx.Response:
    return client.post(path, json=body, headers={**(auth or {}), "Idempotency-Key": key})


SIGNUP_KEY = "signup-1-0123456789abcdef0123456789"
"""A ``POST /players`` key: at least 32 characters (tests/api/test_replay_auth.py has the rule)."""


def test_post_players_replays_the_same_token(client: httpx.Client, clean_database: str) -> None:
    first = post(client, "/players", {"name": "Ann"}, SIGNUP_KEY)
    again = post(client, "/players", {"name": "Ann"}, SIGNUP_KEY)
    assert first.status_code == 201, first.text
    assert_replayed(first, again)
    assert again.json()["token"] == first.json()["token"]
    assert count(clean_database, "players") == 1
    assert count(clean_database, "tokens") == 1
    with psycopg.connect(clean_database) as conn:  # the database holds neither the token nor the key
        ((key, stored),) = conn.execute("SELECT key, body FROM request_keys").fetchall()
    assert "signup-1" not in key
    assert first.json()["token"].encode() not in bytes(stored)
    assert b"Ann" not in bytes(stored)
    me = client.get("/players/me", headers={"Authorization": f"Bearer {again.json()['token']}"})
    assert me.status_code == 200
    assert me.json()["id"] == first.json()["id"]


def test_post_games_replays_the_same_game(ann: Player, clean_database: str) -> None:
    first = post(ann.client, "/games", {"deal": {"seed": 7}}, "game-1", ann.auth)
    again = post(ann.client, "/games", {"deal": {"seed": 7}}, "game-1", ann.auth)
    assert first.status_code == 201, first.text
    assert_replayed(first, again)
    assert again.json()["id"] == first.json()["id"]
    assert first.headers["etag"] == '"1"'
    assert first.headers["location"] == f"/games/{first.json()['id']}"
    assert count(clean_database, "games") == 1


def test_the_body_is_compared_by_content_not_spelling(ann: Player, clean_database: str) -> None:
    headers = {**ann.auth, **JSON, "Idempotency-Key": "spelled"}
    first = ann.client.post("/games", content=b'{"ruleset":"classic","deal":{"seed":7}}', headers=headers)
    again = ann.client.post("/games", content=b'{ "deal": {"seed": 7}, "ruleset": "classic" }', headers=headers)
    assert_replayed(first, again)
    assert count(clean_database, "games") == 1


@pytest.mark.smoke
def test_races_create_join_and_start_replay(ann: Player, bob: Player, clean_database: str) -> None:
    created = post(ann.client, "/races", {"maxEntrants": 2, "deal": {"seed": 5}}, "race", ann.auth)
    assert created.status_code == 201, created.text
    assert_replayed(created, post(ann.client, "/races", {"maxEntrants": 2, "deal": {"seed": 5}}, "race", ann.auth))
    race = created.json()["id"]
    assert count(clean_database, "races") == 1

    joined = bob.client.post(f"/races/{race}/entries", headers={**bob.auth, "Idempotency-Key": "join"})
    assert joined.status_code == 201, joined.text
    assert_replayed(joined, bob.client.post(f"/races/{race}/entries", headers={**bob.auth, "Idempotency-Key": "join"}))
    assert count(clean_database, "race_entrants") == 2

    started = ann.client.post(f"/races/{race}/start", headers={**ann.auth, "Idempotency-Key": "go"})
    assert started.status_code == 200, started.text
    assert_replayed(started, ann.client.post(f"/races/{race}/start", headers={**ann.auth, "Idempotency-Key": "go"}))
    assert count(clean_database, "games") == 2
    # without the key, starting again is refused: the replay above did not run the start again
    assert ann.client.post(f"/races/{race}/start", headers=ann.auth).json()["code"] == "race_not_open"


def test_post_tokens_replays_the_same_secret(ann: Player, clean_database: str) -> None:
    body = {"name": "phone", "scopes": ["play"]}
    first = post(ann.client, "/players/me/tokens", body, "phone-token", ann.auth)
    again = post(ann.client, "/players/me/tokens", body, "phone-token", ann.auth)
    assert first.status_code == 201, first.text
    assert_replayed(first, again)
    assert count(clean_database, "tokens") == 2  # Ann's first token and this one


def test_the_same_key_with_another_body_is_refused_and_creates_nothing(ann: Player, clean_database: str) -> None:
    assert post(ann.client, "/games", {"deal": {"seed": 7}}, "k", ann.auth).status_code == 201
    other = post(ann.client, "/games", {"deal": {"seed": 8}}, "k", ann.auth)
    assert other.status_code == 400
    assert other.headers["content-type"] == "application/problem+json"
    assert other.json()["code"] == "idempotency_key_reused"
    elsewhere = post(ann.client, "/races", {"maxEntrants": 2}, "k", ann.auth)  # another path, same key
    assert elsewhere.json()["code"] == "idempotency_key_reused"
    assert count(clean_database, "games") == 1
    assert count(clean_database, "races") == 0


def test_post_players_keys_are_per_address_and_request(client: httpx.Client, clean_database: str) -> None:
    assert post(client, "/players", {"name": "Ann"}, SIGNUP_KEY).status_code == 201
    other = post(client, "/players", {"name": "Eve"}, SIGNUP_KEY)
    assert other.status_code == 400
    assert other.json()["code"] == "idempotency_key_reused"
    assert count(clean_database, "players") == 1


def test_keys_belong_to_a_player(ann: Player, bob: Player, clean_database: str) -> None:
    mine = post(ann.client, "/games", {"deal": {"seed": 7}}, "shared-key", ann.auth)
    theirs = post(bob.client, "/games", {"deal": {"seed": 7}}, "shared-key", bob.auth)
    assert mine.status_code == theirs.status_code == 201
    assert "idempotent-replayed" not in theirs.headers
    assert theirs.json()["id"] != mine.json()["id"]
    assert theirs.json()["player"] == bob.id
    assert count(clean_database, "games") == 2


def test_a_failure_is_not_kept_and_a_retry_runs_as_new(ann: Player, bob: Player, clean_database: str) -> None:
    failed = post(ann.client, "/games", {"deal": {"pool": 999_999}}, "retry-me", ann.auth)
    assert failed.status_code == 400
    assert failed.json()["code"] == "invalid_request"
    assert count(clean_database, "request_keys") == 0
    made = post(ann.client, "/games", {"deal": {"seed": 3}}, "retry-me", ann.auth)
    assert made.status_code == 201
    assert "idempotent-replayed" not in made.headers

    race = post(ann.client, "/races", {"maxEntrants": 2}, "r", ann.auth).json()["id"]
    early = bob.client.post(f"/races/{race}/start", headers={**bob.auth, "Idempotency-Key": "s"})
    assert early.status_code == 403  # only the creator starts it: the key is given back
    joined = bob.client.post(f"/races/{race}/entries", headers={**bob.auth, "Idempotency-Key": "j"})
    assert joined.status_code == 201


def test_concurrent_requests_with_one_key_create_once(client: httpx.Client, clean_database: str) -> None:
    ann = Player(client, "Ann")
    barrier = threading.Barrier(8)
    replies: list[httpx.Response] = []

    def send() -> None:
        with httpx.Client(base_url=str(client.base_url), timeout=30) as own:
            barrier.wait()
            replies.append(post(own, "/games", {"deal": {"seed": 11}}, "at-once", ann.auth))

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert count(clean_database, "games") == 1
    made = [reply for reply in replies if reply.status_code == 201]
    assert len([reply for reply in made if "idempotent-replayed" not in reply.headers]) == 1
    assert {reply.json()["id"] for reply in made} == {made[0].json()["id"]}
    for reply in replies:
        assert reply.status_code == 201 or (
            reply.status_code == 409 and reply.json()["code"] == "request_in_progress" and reply.headers["retry-after"]
        ), reply.text


@pytest.mark.parametrize("key", ["x" * 256, "two words", "tab\there", ""])
def test_a_malformed_key_is_refused_and_creates_nothing(client: httpx.Client, clean_database: str, key: str) -> None:
    signup = client.post("/players", json={"name": "Ann"}, headers={"Idempotency-Key": key})
    assert signup.status_code == 400
    assert signup.json()["code"] == "invalid_request"
    assert "Idempotency-Key" in signup.json()["detail"]
    assert count(clean_database, "players") == 0
    ann = Player(client, "Ann")
    game = client.post("/games", json={}, headers={**ann.auth, "Idempotency-Key": key})
    assert game.status_code == 400
    assert count(clean_database, "games") == 0
    assert count(clean_database, "request_keys") == 0


# ---------------------------------------------------------------- expiry


def purge(database_url: str, now: datetime, hours: int = 24) -> int:
    """The expiry job's work, run once at ``now`` (the lifespan's task runs it every few minutes)."""

    async def run() -> int:
        async with AsyncConnectionPool(libpq_url(database_url), min_size=1, max_size=1) as pool:
            return await expire_keys(RequestKeys(pool), lambda: now, hours)

    return asyncio.run(run())


def test_an_expired_key_counts_as_new(clocked: httpx.Client, clock: Clock, clean_database: str) -> None:
    ann = Player(clocked, "Ann")
    first = post(clocked, "/games", {"deal": {"seed": 7}}, "daily-game", ann.auth)
    clock.advance(hours=23)
    assert_replayed(first, post(clocked, "/games", {"deal": {"seed": 7}}, "daily-game", ann.auth))
    clock.advance(hours=2)  # 25 hours: the key has expired, even before the job removes it
    later = post(clocked, "/games", {"deal": {"seed": 7}}, "daily-game", ann.auth)
    assert later.status_code == 201
    assert "idempotent-replayed" not in later.headers
    assert later.json()["id"] != first.json()["id"]
    assert count(clean_database, "games") == 2


def test_the_expiry_job_removes_old_keys_of_creates_and_moves(
    clocked: httpx.Client, clock: Clock, clean_database: str
) -> None:
    ann = Player(clocked, "Ann")
    game = post(clocked, "/games", {"deal": {"seed": 7}}, "g", ann.auth).json()["id"]
    moved = ann.move(game, {"type": "draw"}, **{"Idempotency-Key": "m"})
    assert moved.status_code == 200
    assert count(clean_database, "request_keys") == count(clean_database, "idempotency_keys") == 1

    assert purge(clean_database, clock.now + timedelta(hours=23)) == 0  # young keys stay
    assert count(clean_database, "request_keys") == count(clean_database, "idempotency_keys") == 1
    assert purge(clean_database, clock.now + timedelta(hours=25)) == 2
    assert count(clean_database, "request_keys") == count(clean_database, "idempotency_keys") == 0

    again = ann.move(game, {"type": "draw"}, **{"Idempotency-Key": "m"})  # removed: a new move
    assert again.status_code == 200
    assert "idempotent-replayed" not in again.headers
    assert again.json()["game"]["version"] == moved.json()["game"]["version"] + 1

