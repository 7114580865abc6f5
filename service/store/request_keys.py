"""The creating POSTs' Idempotency-Keys (``request_keys``), and the expiry of every key.

A key is claimed before its request creates anything: ``claim`` inserts a pending row (no status)
in a transaction of its own, so a second request with the key finds it however the first one
ends. The first request then either ``complete``s the row with its reply or, when it failed,
``release``s it (a retry may succeed). ``purge`` removes the keys older than the keep time from
both tables, a small batch per statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg import sql
from psycopg.types.json import Json
from psycopg_pool import AsyncConnectionPool

PURGE_BATCH = 500
"""Rows deleted per statement by ``purge``: short statements, short locks."""

_CLAIM = """
INSERT INTO request_keys (scope, key, request_hash, created_at)
VALUES (%(scope)s, %(key)s, %(hash)s, %(now)s)
ON CONFLICT (scope, key) DO UPDATE
SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, status = NULL, headers = NULL, body = NULL
WHERE request_keys.created_at < %(expired_before)s
RETURNING 1
"""
"""Take the key: a new pending row, or an expired row replaced by one (an expired key is new)."""

_FOUND = "SELECT request_hash, status, headers, body, created_at FROM request_keys WHERE scope = %s AND key = %s"


@dataclass(frozen=True, slots=True)
class StoredKey:
    """A key someone else holds: the hash of its request, and its reply once it has one."""

    request_hash: bytes
    status: int | None  # None: pending
    headers: dict[str, str]
    body: bytes
    created_at: datetime


class RequestKeys:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def claim(
        self, scope: str, key: str, request_hash: bytes, now: datetime, expired_before: datetime
    ) -> StoredKey | None:
        """None when this request now holds the key (pending, created at ``now``); otherwise the
        row that holds it (a reply to replay, or a request still pending)."""
        params = {"scope": scope, "key": key, "hash": request_hash, "now": now, "expired_before": expired_before}
        for _ in range(3):  # the row may go (released, purged) between the two statements
            async with self.pool.connection() as conn:
                claimed = await (await conn.execute(_CLAIM, params)).fetchone()
            if claimed is not None:
                return None
            async with self.pool.connection() as conn:
                row = await (await conn.execute(_FOUND, (scope, key))).fetchone()
            if row is not None:
                return StoredKey(bytes(row[0]), row[1], row[2] or {}, bytes(row[3] or b""), row[4])
        raise RuntimeError("an idempotency key kept appearing and vanishing")

    async def complete(
        self, scope: str, key: str, claimed_at: datetime, status: int, headers: dict[str, str], body: bytes
    ) -> None:
        """Store the reply of the request that claimed the key at ``claimed_at``."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE request_keys SET status = %s, headers = %s, body = %s"
                " WHERE scope = %s AND key = %s AND created_at = %s AND status IS NULL",
                (status, Json(headers), body, scope, key, claimed_at),
            )

    async def release(self, scope: str, key: str, claimed_at: datetime) -> None:
        """Give the key back: its request failed and created nothing."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM request_keys WHERE scope = %s AND key = %s AND created_at = %s AND status IS NULL",
                (scope, key, claimed_at),
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
