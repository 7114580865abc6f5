"""The account outbox: each account's events (``account_events``, migration 0021), the one thing
``GET /players/me/stream`` and webhooks read (service.following).

Any feature tells an account of something with ``append(conn, player, type, data)`` inside the
transaction of the change itself, so the event exists exactly when the change does: a rollback
takes both back, a commit keeps both, a restart loses neither. Events are rare (a race started or
finished, a game ended, an analysis done); a move that does not end its game writes none.

Numbering: each account's events are numbered 1, 2, 3, ... in commit order. ``append`` bumps
``players.event_seq`` (``UPDATE ... RETURNING``), which holds the account's row lock until the
transaction ends: a second writer for the same account waits, then numbers after the first one's
commit. A reader that has seen event n never later finds a lower number it missed (which a shared
serial read as ``id > last`` would allow: a lower id that commits late). Several accounts in one
transaction are locked in id order, so two such transactions cannot deadlock on each other.

Live delivery: every ``append`` notifies ``canfield_account_events`` with ``<player id>:<seq>``
(delivered on commit, service.streams.hub); the payload is only a hint, a reader always reads the
table. A channel of its own, so the previous release's listeners never see a payload they do not know.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

ACCOUNT_CHANNEL = "canfield_account_events"

RACE_STARTED = "raceStarted"
RACE_FINISHED = "raceFinished"
GAME_ENDED = "gameEnded"
ANALYSIS_DONE = "analysisDone"
WEBHOOK_DISABLED = "webhookDisabled"
CHALLENGE = "challenge"
TOURNAMENT_STARTED = "tournamentStarted"
TOURNAMENT_FINISHED = "tournamentFinished"
EVENT_TYPES = (
    RACE_STARTED, RACE_FINISHED, GAME_ENDED, ANALYSIS_DONE, WEBHOOK_DISABLED,
    CHALLENGE, TOURNAMENT_STARTED, TOURNAMENT_FINISHED,
)
"""Every type an account event may have."""


@dataclass(frozen=True, slots=True)
class AccountEvent:
    """An event to tell ``player_id`` of: its type (one of ``EVENT_TYPES``) and its data (JSON)."""

    player_id: uuid.UUID
    type: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredAccountEvent:
    seq: int
    type: str
    data: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class FeedPosition:
    """Where an account's outbox stands: its last event's number (0: none yet) and the oldest one
    still kept (None: none kept)."""

    last: int
    oldest: int | None


_BUMP = "UPDATE players SET event_seq = event_seq + %s WHERE id = %s RETURNING event_seq"
_INSERT = (
    "INSERT INTO account_events (player_id, seq, type, data)"
    " SELECT %s, s, t, d FROM unnest(%s::bigint[], %s::text[], %s::jsonb[]) AS e(s, t, d)"
)
_NOTIFY = f"SELECT pg_notify('{ACCOUNT_CHANNEL}', %s)"


async def append(conn: AsyncConnection[Any], player_id: uuid.UUID, type: str, data: Mapping[str, Any]) -> int | None:
    """Tell ``player_id`` of one event, in ``conn``'s transaction (the change's own); its number,
    None when the account does not exist."""
    return (await append_all(conn, [AccountEvent(player_id, type, data)])).get(player_id)


async def append_all(conn: AsyncConnection[Any], events: Iterable[AccountEvent]) -> dict[uuid.UUID, int]:
    """Write ``events`` in ``conn``'s transaction, in order per account, the accounts locked in id
    order; each account's last number (accounts that do not exist are left out)."""
    by_player: dict[uuid.UUID, list[AccountEvent]] = {}
    for event in events:
        if event.type not in EVENT_TYPES:
            raise ValueError(f"unknown account event type {event.type!r}")
        by_player.setdefault(event.player_id, []).append(event)
    last: dict[uuid.UUID, int] = {}
    for player_id in sorted(by_player):
        mine = by_player[player_id]
        row = await (await conn.execute(_BUMP, (len(mine), player_id))).fetchone()
        if row is None:
            continue
        top = int(row[0])
        first = top - len(mine) + 1
        await conn.execute(_INSERT, (player_id, list(range(first, top + 1)), [e.type for e in mine],
                                     [Jsonb(dict(e.data)) for e in mine]))
        await conn.execute(_NOTIFY, (f"{player_id}:{top}",))
        last[player_id] = top
    return last


async def position(conn: AsyncConnection[Any], player_id: uuid.UUID) -> FeedPosition | None:
    """The account's last event number and the oldest kept; None: no such account."""
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(
        "SELECT p.event_seq, (SELECT min(seq) FROM account_events e WHERE e.player_id = p.id)"
        " FROM players p WHERE p.id = %s",
        (player_id,),
    )
    row = await cursor.fetchone()
    return None if row is None else FeedPosition(int(row[0]), None if row[1] is None else int(row[1]))


async def events_after(
    conn: AsyncConnection[Any], player_id: uuid.UUID, after: int, limit: int, types: Sequence[str] | None = None
) -> list[StoredAccountEvent]:
    """The account's events numbered above ``after``, in order, at most ``limit`` (only ``types``, if given)."""
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(
        "SELECT seq, type, data, created_at FROM account_events WHERE player_id = %s AND seq > %s"
        " AND (%s::text[] IS NULL OR type = ANY(%s::text[])) ORDER BY seq LIMIT %s",
        (player_id, after, None if types is None else list(types), None if types is None else list(types), limit),
    )
    return [StoredAccountEvent(int(seq), kind, data, at) for seq, kind, data, at in await cursor.fetchall()]


async def remove_older(conn: AsyncConnection[Any], seconds: float, batch: int) -> int:
    """Remove at most ``batch`` events older than ``seconds`` (the retention); how many went."""
    cursor = await conn.execute(
        "DELETE FROM account_events WHERE ctid = ANY(ARRAY(SELECT ctid FROM account_events"
        " WHERE created_at < now() - make_interval(secs => %s) LIMIT %s))",
        (seconds, batch),
    )
    return cursor.rowcount
