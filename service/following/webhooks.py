"""Webhooks: an account's hooks (``POST``/``GET``/``DELETE /players/me/webhooks``) and their
delivery logs. Delivery itself is service.following.delivery's.

A hook takes the owner's events from the moment it is made (its cursor starts at the account's
newest event), of the types it names, signed with its own secret (Standard Webhooks: ``whsec_``
and 32 random bytes in base64), which is shown once, in the reply that made it. Each hook keeps
the API version of the request that made it (``Api-Version``, else the default): its payloads
have that version's shapes. An account has at most ``WEBHOOKS_PER_PLAYER`` hooks, disabled ones
included, counted under the account's row lock so that two requests at once cannot both pass.
"""

from __future__ import annotations

import base64
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from .. import cursors
from ..errors import BadRequest, Conflict, NotFound
from ..store.outbox import EVENT_TYPES
from .addresses import WebhookRefused, resolve

_HOOKS = "webhooks"
_DELIVERIES = "webhook-deliveries"
_REFUSAL = "'cursor' is not a cursor of this list: pass the 'next' of the previous page"


@dataclass(frozen=True, slots=True)
class Hook:
    id: uuid.UUID
    url: str
    events: list[str]
    api_version: str
    created_at: datetime
    status: str  # active or disabled
    failing_since: datetime | None
    disabled_at: datetime | None
    disabled_reason: str | None


@dataclass(frozen=True, slots=True)
class Delivery:
    id: int
    message_id: str
    event_type: str
    attempt: int
    attempted_at: datetime
    status: int | None
    latency_ms: float
    error: str | None


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Any]
    next: str | None


_HOOK_COLUMNS = "id, url, events, api_version, created_at, failing_since, disabled_at, disabled_reason"


def _hook(row: Sequence[Any]) -> Hook:
    hook_id, url, events, version, created, failing, disabled, reason = row
    return Hook(hook_id, url, list(events), version, created, "active" if disabled is None else "disabled",
                failing, disabled, reason)


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def event_names(asked: Sequence[str]) -> list[str]:
    unknown = [name for name in asked if name not in EVENT_TYPES]
    if unknown:
        raise WebhookRefused(f"unknown event type {unknown[0]!r}: the types are {', '.join(EVENT_TYPES)}",
                             "unknown_event_type")
    return list(dict.fromkeys(asked))


class Webhooks:
    """The webhook use cases of one account (the caller authenticates it first)."""

    def __init__(self, pool: AsyncConnectionPool, per_player: int, allow_private: bool) -> None:
        self.pool = pool
        self.per_player = per_player
        self.allow_private = allow_private

    async def create(self, player_id: uuid.UUID, url: str, events: Sequence[str], api_version: str) -> tuple[Hook, str]:
        """A new hook and its secret (shown once)."""
        names = event_names(events)
        await resolve(url, self.allow_private)  # checked again before every delivery
        secret = new_secret()
        async with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute("SELECT event_seq FROM players WHERE id = %s FOR NO KEY UPDATE", (player_id,))
            found = await cursor.fetchone()
            if found is None:
                raise NotFound("the player behind this token no longer exists")
            await cursor.execute("SELECT count(*) FROM webhooks WHERE player_id = %s", (player_id,))
            counted = await cursor.fetchone()
            if counted is not None and counted[0] >= self.per_player:
                raise Conflict(f"an account has at most {self.per_player} webhooks (disabled ones count): delete one "
                               "first", "too_many_webhooks")
            await cursor.execute(
                "INSERT INTO webhooks (id, player_id, url, events, secret, api_version, cursor_seq)"
                f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_HOOK_COLUMNS}",
                (uuid.uuid4(), player_id, url, names, secret, api_version, found[0]),
            )
            row = await cursor.fetchone()
        assert row is not None
        return _hook(row), secret

    async def list(self, player_id: uuid.UUID, limit: int, cursor: str | None) -> Page:
        """The account's hooks, newest first, a page at a time."""
        key = None if cursor is None else _hook_key(cursor)
        async with self.pool.connection() as conn:
            rows = await (await conn.cursor(row_factory=tuple_row).execute(
                f"SELECT {_HOOK_COLUMNS} FROM webhooks WHERE player_id = %(player)s"
                " AND (%(created)s::timestamptz IS NULL OR (created_at, id) < (%(created)s, %(id)s))"
                " ORDER BY created_at DESC, id DESC LIMIT %(limit)s",
                {"player": player_id, "created": key and key[0], "id": key and key[1], "limit": limit + 1},
            )).fetchall()
        hooks = [_hook(row) for row in rows]
        page = hooks[:limit]
        following = cursors.encode(_HOOKS, page[-1].created_at, page[-1].id) if len(hooks) > limit else None
        return Page(page, following)

    async def delete(self, player_id: uuid.UUID, hook_id: uuid.UUID) -> None:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("DELETE FROM webhooks WHERE id = %s AND player_id = %s", (hook_id, player_id))
            if cursor.rowcount == 0:
                raise NotFound(f"you have no webhook {hook_id}")

    async def deliveries(self, player_id: uuid.UUID, hook_id: uuid.UUID, limit: int, cursor: str | None) -> Page:
        """The hook's delivery attempts, newest first, a page at a time (kept as long as events are)."""
        before = None if cursor is None else _delivery_key(cursor)
        async with self.pool.connection() as conn:
            owner = await (await conn.execute("SELECT player_id FROM webhooks WHERE id = %s", (hook_id,))).fetchone()
            if owner is None or owner[0] != player_id:
                raise NotFound(f"you have no webhook {hook_id}")
            rows = await (await conn.cursor(row_factory=tuple_row).execute(
                "SELECT id, message_id, event_type, attempt, attempted_at, status, latency_ms, error"
                " FROM webhook_deliveries WHERE webhook_id = %s AND (%s::bigint IS NULL OR id < %s)"
                " ORDER BY id DESC LIMIT %s",
                (hook_id, before, before, limit + 1),
            )).fetchall()
        found = [Delivery(*row) for row in rows]
        page = found[:limit]
        following = cursors.encode(_DELIVERIES, page[-1].id) if len(found) > limit else None
        return Page(page, following)


def _hook_key(cursor: str) -> tuple[datetime, uuid.UUID]:
    fields = cursors.decode(_HOOKS, cursor, _REFUSAL)
    if len(fields) != 2:
        raise BadRequest(_REFUSAL)
    return cursors.instant(fields[0], _REFUSAL), cursors.identifier(fields[1], _REFUSAL)


def _delivery_key(cursor: str) -> int:
    fields = cursors.decode(_DELIVERIES, cursor, _REFUSAL)
    if len(fields) != 1:
        raise BadRequest(_REFUSAL)
    return cursors.whole(fields[0], _REFUSAL)
