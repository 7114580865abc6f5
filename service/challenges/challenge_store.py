"""Challenges in PostgreSQL (migration 0020): ``challenges`` and ``players.accept_challenges``.

Every change of a challenge locks its row first (``SELECT ... FOR UPDATE``) and checks its status
under the lock, in one transaction, so of two accepts (or an accept and a cancel) in any number
of server processes exactly one changes it; the other sees what it did.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from ..store.players import DELETED_NAME

PENDING, ACCEPTED, DECLINED, CANCELLED, EXPIRED = "pending", "accepted", "declined", "cancelled", "expired"
POLICIES = ("everyone", "humans", "nobody")


@dataclass(frozen=True, slots=True)
class ChallengeRow:
    id: uuid.UUID
    from_id: uuid.UUID
    from_name: str
    from_bot: bool
    to_id: uuid.UUID
    to_name: str
    to_bot: bool
    ruleset_id: str
    rated: bool
    time_limit_seconds: int | None
    status: str  # as stored: pending, accepted, declined, cancelled, expired
    created_at: datetime
    expires_at: datetime
    ended_at: datetime | None
    race_id: uuid.UUID | None

    def status_at(self, now: datetime) -> str:
        """The status as shown: a pending challenge past its time is expired."""
        return EXPIRED if self.status == PENDING and now >= self.expires_at else self.status


@dataclass(frozen=True, slots=True)
class NewChallengeRow:
    """A challenge to insert, pending: who sends it to whom, its terms, when it was made and when it expires."""

    id: uuid.UUID
    from_id: uuid.UUID
    to_id: uuid.UUID
    ruleset_id: str
    rated: bool
    time_limit_seconds: int | None
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Recipient:
    """Who may be challenged, and whom they accept challenges from."""

    id: uuid.UUID
    deleted: bool
    accepts: str  # everyone, humans or nobody


_SELECT = """
SELECT c.id, c.from_id, f.name, f.bot, c.to_id, t.name, t.bot, c.ruleset_id, c.rated, c.time_limit_seconds, c.status,
       c.created_at, c.expires_at, c.ended_at, c.race_id
FROM challenges c JOIN players f ON f.id = c.from_id JOIN players t ON t.id = c.to_id
"""


async def load(conn: AsyncConnection[Any], challenge_id: uuid.UUID, lock: bool = False) -> ChallengeRow | None:
    """The challenge (``lock``: its row locked for the rest of the transaction)."""
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(_SELECT + " WHERE c.id = %s" + (" FOR UPDATE OF c" if lock else ""), (challenge_id,))
    row = await cursor.fetchone()
    return None if row is None else ChallengeRow(*row)


async def expire_due(conn: AsyncConnection[Any], now: datetime, limit: int) -> list[ChallengeRow]:
    """Store up to ``limit`` pending challenges past their time as expired (``ended_at`` is when
    they expired); the rows as they are now. Rows another transaction holds are left for later."""
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(
        "UPDATE challenges SET status = 'expired', ended_at = expires_at WHERE id IN (SELECT id FROM challenges"
        " WHERE status = 'pending' AND expires_at <= %s ORDER BY expires_at LIMIT %s FOR UPDATE SKIP LOCKED)"
        " RETURNING id", (now, limit))
    expired = [row[0] for row in await cursor.fetchall()]
    rows = [await load(conn, challenge_id) for challenge_id in expired]
    return [row for row in rows if row is not None]


async def end(conn: AsyncConnection[Any], challenge_id: uuid.UUID, status: str, now: datetime,
              race_id: uuid.UUID | None = None) -> ChallengeRow:
    """Set a locked pending challenge's final status; the challenge as it is now."""
    await conn.execute("UPDATE challenges SET status = %s, ended_at = %s, race_id = %s WHERE id = %s",
                       (status, now, race_id, challenge_id))
    changed = await load(conn, challenge_id)
    assert changed is not None
    return changed


class ChallengeStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def recipient(self, player_id: uuid.UUID) -> Recipient | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT id, name, accept_challenges FROM players WHERE id = %s", (player_id,))
            row = await cursor.fetchone()
        return None if row is None else Recipient(row[0], row[1] == DELETED_NAME, row[2])

    async def is_bot(self, player_id: uuid.UUID) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT bot FROM players WHERE id = %s", (player_id,))
            row = await cursor.fetchone()
        return bool(row and row[0])

    async def pending_made(self, conn: AsyncConnection[Any], sender: uuid.UUID, now: datetime) -> int:
        """The sender's pending challenges not yet expired, counted with the sender's row locked, so
        two challenges made at once cannot both take the last place (``NO KEY UPDATE``: what refers
        to the player is not held up)."""
        await conn.execute("SELECT 1 FROM players WHERE id = %s FOR NO KEY UPDATE", (sender,))
        cursor = await conn.execute(
            "SELECT count(*) FROM challenges WHERE from_id = %s AND status = 'pending' AND expires_at > %s",
            (sender, now),
        )
        row = await cursor.fetchone()
        assert row is not None
        return int(row[0])

    async def insert(self, conn: AsyncConnection[Any], new: NewChallengeRow) -> ChallengeRow:
        """``new``, pending, in ``conn``'s transaction; the row as stored."""
        await conn.execute(
            "INSERT INTO challenges (id, from_id, to_id, ruleset_id, rated, time_limit_seconds, status, created_at,"
            " expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (new.id, new.from_id, new.to_id, new.ruleset_id, new.rated, new.time_limit_seconds, PENDING,
             new.created_at, new.expires_at),
        )
        made = await load(conn, new.id)
        assert made is not None
        return made

    async def pending(
        self, player_id: uuid.UUID, now: datetime, before: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[ChallengeRow]:
        """The player's pending challenges not yet expired, made or received, newest first, strictly
        before the key ``before`` (created, id)."""
        key = "" if before is None else " AND (c.created_at, c.id) < (%(created)s, %(id)s)"
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                _SELECT + " WHERE c.status = 'pending' AND c.expires_at > %(now)s"
                " AND (c.from_id = %(player)s OR c.to_id = %(player)s)" + key +
                " ORDER BY c.created_at DESC, c.id DESC LIMIT %(limit)s",
                {"player": player_id, "now": now, "limit": limit,
                 "created": None if before is None else before[0], "id": None if before is None else before[1]},
            )
            return [ChallengeRow(*row) for row in await cursor.fetchall()]

    async def pending_ids(self, player_id: uuid.UUID) -> list[uuid.UUID]:
        """Every pending challenge the player made or received (expired ones too)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT id FROM challenges WHERE status = 'pending' AND (from_id = %s OR to_id = %s)",
                (player_id, player_id),
            )
            return [row[0] for row in await cursor.fetchall()]

    async def set_policy(self, player_id: uuid.UUID, accepts: str) -> None:
        async with self.pool.connection() as conn:
            await conn.execute("UPDATE players SET accept_challenges = %s WHERE id = %s", (accepts, player_id))
