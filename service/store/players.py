"""The players and their tokens (``players``, ``tokens``): a token is stored only as its hash.

Revoking a token (or all of a player's) notifies ``canfield_tokens`` with the player's id in the
same transaction, so every server process forgets the tokens it had cached for that player once
the revocation is visible (service.streams.hub listens; service.players.tokens.TokenCache)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

TOKENS_CHANNEL = "canfield_tokens"

DELETED_NAME = "deleted player"
"""The name a deleted account keeps, so leaderboards and race views still have a row to show."""

_LIVE = "t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > %(now)s)"
"""A token answers while it is neither revoked nor expired (at ``now``, the service's clock)."""


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True, slots=True)
class TokenRow:
    """A token as stored (never its secret)."""

    id: uuid.UUID
    player_id: uuid.UUID
    name: str
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class PlayerRow:
    id: uuid.UUID
    name: str
    created_at: datetime
    bot: bool = False  # a bot account (POST /players {"bot": true}); every view of the player says so
    accept_challenges: str = "everyone"  # whom they accept challenges from: everyone, humans, nobody

    @property
    def deleted(self) -> bool:
        """Whether the account was deleted: only deletion gives this name (registration refuses it)."""
        return self.name == DELETED_NAME


def player_reference(player_id: uuid.UUID | str, name: str, bot: bool) -> dict[str, Any]:
    """A player as every view names one: ``{"id", "name", "bot"}`` (a deleted player keeps the id and
    shows the deleted name)."""
    return {"id": str(player_id), "name": name, "bot": bot}


_TOKEN_COLUMNS = "t.id, t.player_id, t.name, t.scopes, t.created_at, t.expires_at"


def _token(row: tuple[object, ...]) -> TokenRow:
    return TokenRow(row[0], row[1], row[2], tuple(row[3]), row[4], row[5])  # type: ignore[arg-type]


class PlayerStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def create_player(
        self, player_id: uuid.UUID, name: str, token: TokenRow, secret: str, bot: bool = False
    ) -> datetime:
        """The player and their first token, in one transaction."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "INSERT INTO players (id, name, bot) VALUES (%s, %s, %s) RETURNING created_at", (player_id, name, bot)
            )
            row = await cursor.fetchone()
            assert row is not None
            await self._insert_token(conn, token, secret, row[0])
        created_at: datetime = row[0]
        return created_at

    async def get_player(self, player_id: uuid.UUID) -> PlayerRow | None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT id, name, created_at, bot, accept_challenges FROM players WHERE id = %s", (player_id,)
            )
            row = await cursor.fetchone()
        return None if row is None else PlayerRow(*row)

    async def references(self, player_ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, object]]:
        """Each player's reference (``player_reference``), by id; a deleted account's name is the
        deleted name, an unknown id is left out."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT id, name, bot FROM players WHERE id = ANY(%s)", (player_ids,))
            return {row[0]: player_reference(row[0], row[1], row[2]) for row in await cursor.fetchall()}

    async def token(self, secret: str, now: datetime) -> TokenRow | None:
        """The live token whose secret this is (None: unknown, revoked or expired)."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens t WHERE t.token_hash = %(hash)s AND {_LIVE}",
                {"hash": token_hash(secret), "now": now},
            )
            row = await cursor.fetchone()
        return None if row is None else _token(row)

    async def add_token(self, token: TokenRow, secret: str, now: datetime, most: int) -> datetime | None:
        """The token, made unless its player holds ``most`` live tokens (at ``now``) already: then
        None, and nothing is written. The player's row is locked while it counts, so two tokens
        made at once cannot both take the last place (``NO KEY UPDATE``: games and races that
        refer to the player are not held up)."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT 1 FROM players WHERE id = %s FOR NO KEY UPDATE", (token.player_id,))
            cursor = await conn.execute(
                f"SELECT count(*) FROM tokens t WHERE t.player_id = %(player)s AND {_LIVE}",
                {"player": token.player_id, "now": now},
            )
            row = await cursor.fetchone()
            assert row is not None
            if row[0] >= most:
                return None
            return await self._insert_token(conn, token, secret, None)

    async def _insert_token(self, conn: object, token: TokenRow, secret: str, created_at: datetime | None) -> datetime:
        cursor = await conn.execute(  # type: ignore[attr-defined]
            "INSERT INTO tokens (id, player_id, name, token_hash, scopes, created_at, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, coalesce(%s, now()), %s) RETURNING created_at",
            (token.id, token.player_id, token.name, token_hash(secret), list(token.scopes), created_at,
             token.expires_at),
        )
        row = await cursor.fetchone()
        assert row is not None
        made: datetime = row[0]
        return made

    async def tokens(self, player_id: uuid.UUID, now: datetime) -> list[TokenRow]:
        """The player's live tokens, oldest first."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens t WHERE t.player_id = %(player)s AND {_LIVE} "
                "ORDER BY t.created_at, t.id",
                {"player": player_id, "now": now},
            )
            rows = await cursor.fetchall()
        return [_token(row) for row in rows]

    async def revoke(self, player_id: uuid.UUID, token_id: uuid.UUID | None, now: datetime) -> int:
        """Revoke one live token of the player (``token_id``) or all of them (None); how many were."""
        condition = "" if token_id is None else " AND t.id = %(token)s"
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                f"UPDATE tokens t SET revoked_at = %(now)s WHERE t.player_id = %(player)s AND {_LIVE}{condition}",
                {"player": player_id, "token": token_id, "now": now},
            )
            revoked = cursor.rowcount
            if revoked:
                await conn.execute("SELECT pg_notify(%s, %s)", (TOKENS_CHANNEL, str(player_id)))
        return revoked

    async def erase(self, player_id: uuid.UUID, now: datetime) -> None:
        """Erase the person: revoke every token (the notice reaches every process's cache), then
        delete the token rows, hashes and all, the replies kept for their Idempotency-Keys
        (the registration's included), their webhooks and account events, and replace the name.
        The players row stays, under its random id, because games, stats, leaderboards and races refer to it."""
        await self.revoke(player_id, None, now)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("DELETE FROM tokens WHERE player_id = %s", (player_id,))
            # the replies their Idempotency-Keys kept (a new token's secret, sealed, among them), the
            # reply of the POST /players that registered them too (kept under the client's address)
            await conn.execute(
                "DELETE FROM request_keys WHERE scope = %s OR player_id = %s", (f"player:{player_id}", player_id)
            )
            # their webhooks (URLs, signing secrets, delivery logs) and their account's events (migrations 0021, 0022)
            await conn.execute("DELETE FROM webhooks WHERE player_id = %s", (player_id,))
            await conn.execute("DELETE FROM account_events WHERE player_id = %s", (player_id,))
            await conn.execute("UPDATE players SET name = %s WHERE id = %s", (DELETED_NAME, player_id))
            await conn.execute("SELECT pg_notify(%s, %s)", (TOKENS_CHANNEL, str(player_id)))

    async def every_token(self, player_id: uuid.UUID) -> list[dict[str, object]]:
        """Every token row of the player, revoked and expired ones too, without its hash."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT json_build_object('id', id, 'name', name, 'scopes', scopes, 'createdAt', created_at,"
                " 'expiresAt', expires_at, 'revokedAt', revoked_at) FROM tokens WHERE player_id = %s"
                " ORDER BY created_at, id",
                (player_id,),
            )
            return [row[0] for row in await cursor.fetchall()]

    async def personal_rows(self, player_id: uuid.UUID) -> list[tuple[str, dict[str, object]]]:
        """The rows of the player's stats, race entries, daily leaderboard entries, ratings and
        webhooks, as stored (each with its kind: ``stats``, ``race-entry``, ``daily-entry``,
        ``rating``, ``rating-change``, ``webhook``). Account events are not among them:
        notifications of what the games and races already show, kept a week, and an export of an
        older version's shape must not grow lines for accounts without hooks."""
        found: list[tuple[str, dict[str, object]]] = []
        async with self.pool.connection() as conn:
            for kind, table, order in _PERSONAL_TABLES:
                cursor = await conn.execute(
                    f"SELECT row_to_json(t) FROM {table} t WHERE t.player_id = %s ORDER BY {order}", (player_id,)
                )
                found += [(kind, row[0]) for row in await cursor.fetchall()]
        return found


_PERSONAL_TABLES = (
    ("stats", "player_stats", "t.ruleset_id"),
    ("race-entry", "race_entrants", "t.joined_at, t.race_id"),
    ("daily-entry", "daily_leaderboard", "t.day"),
    ("rating", "player_ratings", "t.ruleset_id"),  # service.ratings (migration 0019)
    ("rating-change", "rating_changes", "t.sequence"),
    # migration 0022, without the signing secret (shown once, never exported)
    ("webhook", ("(SELECT id, player_id, url, events, api_version, created_at, failing_since, disabled_at,"
                " disabled_reason FROM webhooks)"), "t.created_at, t.id"),
)
