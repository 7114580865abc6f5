"""The players: a name and a bearer token, stored only as its hash (``players``)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from psycopg_pool import AsyncConnectionPool


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class PlayerStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def create_player(self, player_id: uuid.UUID, name: str, token: str) -> datetime:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO players (id, name, token_hash) VALUES (%s, %s, %s) RETURNING created_at",
                (player_id, name, token_hash(token)),
            )
            row = await cursor.fetchone()
        assert row is not None
        created_at: datetime = row[0]
        return created_at

    async def get_player(self, player_id: uuid.UUID) -> tuple[uuid.UUID, str, datetime] | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT id, name, created_at FROM players WHERE id = %s", (player_id,))
            row = await cursor.fetchone()
        return None if row is None else (row[0], row[1], row[2])

    async def player_for_token(self, token: str) -> uuid.UUID | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT id FROM players WHERE token_hash = %s", (token_hash(token),))
            row = await cursor.fetchone()
        return None if row is None else row[0]
