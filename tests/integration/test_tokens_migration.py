"""Migration 0006 moves each player's one token into ``tokens`` (named "first token", every
scope) and drops ``players.token_hash``; its downgrade gives each player back their oldest live
token, and a player left with none a hash no token has."""

from __future__ import annotations

import hashlib
import uuid

import psycopg
from alembic import command

from service.store.migrations import alembic_config

from .test_snapshot_migration import scratch_url  # noqa: F401 (a fixture)


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def test_each_player_keeps_their_token_across_0006_and_back(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0005")
    ann, bob = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        for player, token in ((ann, "ann-token"), (bob, "bob-token")):
            conn.execute("INSERT INTO players (id, name, token_hash) VALUES (%s, 'P', %s)", (player, _hash(token)))

    command.upgrade(config, "0006")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        rows = conn.execute("SELECT player_id, name, token_hash, scopes FROM tokens").fetchall()
        columns = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'players'")}
        assert {(row[0], row[1], bytes(row[2]), tuple(row[3])) for row in rows} == {
            (ann, "first token", _hash("ann-token"), ("play", "read-private", "account")),
            (bob, "first token", _hash("bob-token"), ("play", "read-private", "account")),
        }
        assert "token_hash" not in columns
        # Bob revokes his only token; Ann makes a second one later.
        conn.execute("UPDATE tokens SET revoked_at = now() WHERE player_id = %s", (bob,))
        conn.execute(
            "INSERT INTO tokens (id, player_id, name, token_hash, scopes, created_at)"
            " VALUES (%s, %s, 'bot', %s, ARRAY['play'], now() + interval '1 minute')",
            (uuid.uuid4(), ann, _hash("ann-bot")),
        )

    command.downgrade(config, "0005")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        hashes = dict(conn.execute("SELECT id, token_hash FROM players").fetchall())
        assert bytes(hashes[ann]) == _hash("ann-token"), "the oldest live token"
        assert bytes(hashes[bob]) not in {_hash("bob-token"), _hash("ann-bot")}, "a revoked token stays revoked"
        assert conn.execute("SELECT to_regclass('tokens')").fetchone() == (None,)
