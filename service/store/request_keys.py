"""The creating POSTs' Idempotency-Keys (``request_keys``), and the expiry of every key.

A key is claimed before its request creates anything: ``claim`` inserts a pending row (no status)
in a transaction of its own, so a second request with the key finds it however the first one
ends. The row names its player and the scopes of the token that claimed it (``Owner``), so a
replay can be checked as the first request was (service.http.idempotency); ``erase`` removes a
player's rows. The first request, holding the key (a ``Claim``), then either ``complete``s the row
with its reply or, when it failed, ``release``s it (a retry may succeed). ``purge`` removes the
keys older than the keep time from both tables, a small batch per statement.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from psycopg import sql
from psycopg.types.json import Json
from psycopg_pool import AsyncConnectionPool

PURGE_BATCH = 500
"""Rows deleted per statement by ``purge``: short statements, short locks."""

_CLAIM = """
INSERT INTO request_keys (scope, key, request_hash, created_at, player_id, scopes)
VALUES (%(scope)s, %(key)s, %(hash)s, %(now)s, %(player)s, %(scopes)s)
ON CONFLICT (scope, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, status = NULL, headers = NULL, body = NULL,
    player_id = EXCLUDED.player_id, scopes = EXCLUDED.scopes
WHERE request_keys.created_at < %(expired_before)s
RETURNING 1
"""
"""Take the key: a new pending row, or an expired row replaced by one (an expired key is new)."""

_FOUND = (
    "SELECT request_hash, status, headers, body, created_at, player_id, scopes FROM request_keys"
    " WHERE scope = %s AND key = %s"
)


@dataclass(frozen=True, slots=True)
class Owner:
    """Who claimed a key: the player (None: not known yet, ``POST /players`` before its reply) and
    the scopes of the token that sent the request (None: no token, or a row of the release before
    migration 0014, which did not record them)."""

    player_id: uuid.UUID | None
    scopes: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Claim:
    """A key a request holds: its scope, its name and when it was claimed (its row's ``created_at``)."""

    scope: str
    key: str
    claimed_at: datetime


@dataclass(frozen=True, slots=True)
class StoredKey:
    """A key someone else holds: the hash of its request, who claimed it, and its reply once it has one."""

    request_hash: bytes
    status: int | None  # None: pending
    headers: dict[str, str]
    body: bytes
    created_at: datetime
    owner: Owner


class RequestKeys:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def claim(
        self, scope: str, key: str, request_hash: bytes, now: datetime, expired_before: datetime, owner: Owner
    ) -> StoredKey | None:
        """None when this request now holds the key (pending, created at ``now``, recording
        ``owner``); otherwise the row that holds it (a reply to replay, or a request still pending)."""
        scopes = None if owner.scopes is None else list(owner.scopes)
        params = {"scope": scope, "key": key, "hash": request_hash, "now": now, "expired_before": expired_before,
                  "player": owner.player_id, "scopes": scopes}
        for _ in range(3):  # the row may go (released, purged) between the two statements
            async with self.pool.connection() as conn:
                claimed = await (await conn.execute(_CLAIM, params)).fetchone()
            if claimed is not None:
                return None
            async with self.pool.connection() as conn:
                row = await (await conn.execute(_FOUND, (scope, key))).fetchone()
            if row is not None:
                owner = Owner(row[5], None if row[6] is None else tuple(row[6]))
                return StoredKey(bytes(row[0]), row[1], row[2] or {}, bytes(row[3] or b""), row[4], owner)
        raise RuntimeError("an idempotency key kept appearing and vanishing")

    async def complete(
        self, claim: Claim, status: int, headers: dict[str, str], body: bytes, player_id: uuid.UUID | None = None
    ) -> None:
        """Store the reply of the request that holds ``claim``; ``player_id``: the player it
        belongs to, when the claim could not name one (``POST /players``)."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE request_keys SET status = %s, headers = %s, body = %s, player_id = coalesce(%s, player_id)"
                " WHERE scope = %s AND key = %s AND created_at = %s AND status IS NULL",
                (status, Json(headers), body, player_id, claim.scope, claim.key, claim.claimed_at),
            )

    async def release(self, claim: Claim) -> None:
        """Give the key back: its request failed and created nothing."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM request_keys WHERE scope = %s AND key = %s AND created_at = %s AND status IS NULL",
                (claim.scope, claim.key, claim.claimed_at),
            )

    async def purge(self, before: datetime, batch: int = PURGE_BATCH) -> int:
        """Delete the keys (of creates and of moves) made before ``before``; how many went."""
        removed = 0
        for table in ("request_keys", "idempotency_keys"):
            while True:
                async with self.pool.connection() as conn:
                    cursor = await conn.execute(_purge_statement(table), (before, batch))
                    count = cursor.rowcount
                removed += count
                if count < batch:
                    break
        return removed


def _purge_statement(table: str) -> sql.Composed:
    # ctid: the rows the index on created_at found, whatever the table's primary key
    return sql.SQL(
        "DELETE FROM {table} WHERE ctid = ANY(ARRAY("
        "SELECT ctid FROM {table} WHERE created_at < %s ORDER BY created_at LIMIT %s))"
    ).format(table=sql.Identifier(table))
