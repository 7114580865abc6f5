"""Races in PostgreSQL: the ``races`` and ``race_entrants`` tables (migration 0004).

Every write that changes a race takes the race's row lock first (``SELECT ... FOR UPDATE``) and
checks the race's status under it, in one transaction: so of two joins for the last seat, a join
and the start, or two starts, exactly one happens and the other sees what it did (a 409 for the
caller), in any number of server processes. Each such write bumps ``races.version`` and notifies
the stream channel (``<race id>:<version>``, delivered on commit) so race streams wake up.

A change is a ``RaceWork``: the races use case opens it (``RaceStore.locked``), decides on the
race it gives (service.races.races), and makes its writes on it; the store runs SQL, and never
calls a function of the layer above. Its records are service.races.rows'.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from ..errors import NotFound
from ..store import outbox
from ..store.event_store import CHANNEL, LOG_QUERY, insert_game
from ..store.game_records import LogRow, NewGame
from ..store.replica import ReadPool
from ..store.snapshots import TAIL
from .rows import FINISHED, OPEN, RUNNING, DealtGame, EntrantRow, NewRaceRow, RaceRow, Result

_RACE = """
SELECT id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants, time_limit_seconds, status,
       version, created_at, started_at, ends_at, finished_at, cancelled_reason, rated,
       (SELECT p.name FROM players p WHERE p.id = creator_id), (SELECT p.bot FROM players p WHERE p.id = creator_id)
FROM races WHERE id = %s
"""
_ENTRANTS = f"""
SELECT e.player_id, p.name, e.seat, e.joined_at, e.game_id, e.standing, e.place, g.version, s.snapshot, g.finished_at,
       {TAIL}, p.bot, rc.mu_before, rc.mu_after
FROM race_entrants e JOIN players p ON p.id = e.player_id LEFT JOIN games g ON g.id = e.game_id
LEFT JOIN game_snapshots s ON s.game_id = g.id
LEFT JOIN rating_changes rc ON rc.race_id = e.race_id AND rc.player_id = e.player_id
WHERE e.race_id = %s ORDER BY e.seat
"""
_NOTIFY = f"SELECT pg_notify('{CHANNEL}', %s::text || ':' || %s::text)"


async def _load(conn: AsyncConnection[Any], race_id: uuid.UUID, lock: bool = False) -> RaceRow | None:
    """The race and its entrants; with ``lock``, the race's row locked first. Two statements on
    purpose: the entrants are read after the lock is held, so they include whatever the previous
    holder of the lock wrote (a join would read them from the snapshot taken before the wait).
    Without the lock a view may, for a moment, see entrants a step ahead of the race row."""
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(_RACE + (" FOR UPDATE" if lock else ""), (race_id,))
    race = await cursor.fetchone()
    if race is None:
        return None
    await cursor.execute(_ENTRANTS, (race_id,))
    entrants = tuple(EntrantRow(*row) for row in await cursor.fetchall())
    (race_id, creator, ruleset_id, ruleset_version, deal, deck, max_entrants, time_limit, status, version, created_at,
     started_at, ends_at, finished_at, cancelled_reason, rated, creator_name, creator_bot) = race
    return RaceRow(race_id, creator, (ruleset_id, ruleset_version), deal, deck, max_entrants, time_limit, status,
                   version, created_at, started_at, ends_at, finished_at, entrants, cancelled_reason, rated,
                   creator_name, creator_bot)


async def _bump(conn: AsyncConnection[Any], race_id: uuid.UUID, changes: str = "", params: Sequence[Any] = ()) -> None:
    """races.version + 1 (with ``changes``, more SET clauses) and the notification of streams."""
    cursor = await conn.execute(
        f"UPDATE races SET version = version + 1{changes} WHERE id = %s RETURNING version", (*params, race_id)
    )
    row = await cursor.fetchone()
    assert row is not None
    await conn.execute(_NOTIFY, (str(race_id), row[0]))


async def _insert_race(conn: AsyncConnection[Any], row: NewRaceRow) -> None:
    creator = await conn.execute("SELECT 1 FROM players WHERE id = %s FOR SHARE", (row.creator_id,))
    if await creator.fetchone() is None:
        raise NotFound("the player behind this token no longer exists")  # gone while the deal was proven
    await conn.execute(
        "INSERT INTO races (id, creator_id, ruleset_id, ruleset_version, deal, deck, max_entrants,"
        " time_limit_seconds, status, version, created_at, deal_proof, fingerprint, rated)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s)",
        (row.race_id, row.creator_id, row.ruleset[0], row.ruleset[1], Jsonb(row.deal), Jsonb(row.deck),
         row.max_entrants, row.time_limit_seconds, OPEN, row.now, None if row.proof is None else Jsonb(row.proof),
         row.fingerprint, row.rated),
    )
    await conn.execute(
        "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) VALUES (%s, %s, 1, %s)",
        (row.race_id, row.creator_id, row.now),
    )


class RaceWork:
    """One change of a race, in one transaction with the race's row locked (``RaceStore.locked``;
    ``RaceStore.shared`` for a standing kept while it runs): ``race`` as read under the lock, its
    entrants' stored logs, and the change's writes, run on that transaction as the use case makes
    them and committed together when the work ends (nothing, when it raises). The use case decides
    what to write; the work never calls back into it."""

    __slots__ = ("conn", "race")

    def __init__(self, conn: AsyncConnection[Any], race: RaceRow) -> None:
        self.conn = conn  # the transaction: a rated finish rates in it too (service.ratings)
        self.race = race

    async def logs(self, game_ids: Iterable[uuid.UUID], cutoff: datetime | None) -> dict[uuid.UUID, list[LogRow]]:
        """The stored logs of ``game_ids``, each cut at ``cutoff`` (None: whole)."""
        logs: dict[uuid.UUID, list[LogRow]] = {}
        cursor = self.conn.cursor(row_factory=tuple_row)
        for game_id in game_ids:
            await cursor.execute(LOG_QUERY, {"game": game_id, "cutoff": cutoff})
            logs[game_id] = list(await cursor.fetchall())
        return logs

    async def enter(self, player_id: uuid.UUID, seat: int, now: datetime) -> None:
        """A new entrant, in ``seat``."""
        await self.conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) VALUES (%s, %s, %s, %s)",
            (self.race.id, player_id, seat, now),
        )

    async def remove(self, player_id: uuid.UUID) -> None:
        """An entrant out of the race."""
        await self.conn.execute("DELETE FROM race_entrants WHERE race_id = %s AND player_id = %s",
                                (self.race.id, player_id))

    async def changed(self, creator_id: uuid.UUID | None = None) -> None:
        """The race has changed (its version bumped, its streams told); ``creator_id``: handed to them."""
        if creator_id is None:
            await _bump(self.conn, self.race.id)
        else:
            await _bump(self.conn, self.race.id, ", creator_id = %s", (creator_id,))

    async def run(self, dealt: Sequence[DealtGame], now: datetime) -> None:
        """Insert every entrant's game, all at ``now``, and set the race running."""
        race = self.race
        for game in dealt:
            await insert_game(self.conn, NewGame(game.game_id, game.player_id, race.ruleset, game.deal, game.status,
                                                 game.snapshot, game.events, now))
            await self.conn.execute(
                "UPDATE race_entrants SET game_id = %s WHERE race_id = %s AND player_id = %s",
                (game.game_id, race.id, game.player_id),
            )
        await _bump(
            self.conn, race.id,
            ", status = %s, started_at = %s, ends_at = %s + make_interval(secs => time_limit_seconds)",
            (RUNNING, now, now),
        )

    async def cancel(self, now: datetime, reason: str) -> None:
        """End the open race, never started, with ``reason``. Stored as finished with its reason: a
        status value of its own would reach the processes of the release before this one, and the
        clients of the API versions served, as one they do not know. Its streams end."""
        await _bump(self.conn, self.race.id, ", status = %s, finished_at = %s, cancelled_reason = %s",
                    (FINISHED, now, reason))

    async def keep_standing(self, game_id: uuid.UUID, result: Result) -> None:
        """The standing of the entrant playing ``game_id``, kept while the race runs (no place)."""
        await self.conn.execute(
            "UPDATE race_entrants SET standing = %s WHERE race_id = %s AND game_id = %s",
            (Jsonb(result.standing), self.race.id, game_id),
        )

    async def record_results(self, results: Sequence[Result]) -> None:
        """Each entrant's frozen standing and place."""
        for result in results:
            await self.conn.execute(
                "UPDATE race_entrants SET standing = %s, place = %s WHERE race_id = %s AND player_id = %s",
                (Jsonb(result.standing), result.place, self.race.id, result.player_id),
            )

    async def finish(self, finished_at: datetime) -> None:
        """The race finished at ``finished_at``."""
        await _bump(self.conn, self.race.id, ", status = %s, finished_at = %s", (FINISHED, finished_at))

    async def tell(self, events: Sequence[outbox.AccountEvent]) -> None:
        """``events`` appended to their accounts' outboxes, in this transaction."""
        await outbox.append_all(self.conn, list(events))


class RaceStore:
    def __init__(self, pool: AsyncConnectionPool, reads: ReadPool | None = None) -> None:
        self.pool = pool
        self.reads = reads or ReadPool(pool)  # the lobby tolerates a replica (service.store.replica)

    async def load(self, race_id: uuid.UUID) -> RaceRow | None:
        async with self.pool.connection() as conn:
            return await _load(conn, race_id)

    async def create(self, row: NewRaceRow) -> None:
        """The race, open, with its creator as the first entrant."""
        async with self.pool.connection() as conn, conn.transaction():
            await _insert_race(conn, row)

    @asynccontextmanager
    async def locked(self, race_id: uuid.UUID) -> AsyncIterator[RaceWork | None]:
        """One change of the race (a ``RaceWork``), its row locked for the whole transaction first,
        then its entrants read (after the lock is held, so they include whatever the previous holder
        wrote); committed when the block ends, rolled back when it raises. None: no such race."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _load(conn, race_id, lock=True)
            yield None if race is None else RaceWork(conn, race)

    @asynccontextmanager
    async def shared(self, race_id: uuid.UUID) -> AsyncIterator[RaceWork | None]:
        """A change of a running race under a shared lock of its row (a finish in progress is waited
        for, and none starts until the block ends); None when it is not running (or not there)."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute("SELECT status FROM races WHERE id = %s FOR SHARE", (race_id,))
            found = await cursor.fetchone()
            race = None if found is None or found[0] != RUNNING else await _load(conn, race_id)
            yield None if race is None else RaceWork(conn, race)

    async def open_pair(self, conn: AsyncConnection[Any], row: NewRaceRow, opponent: uuid.UUID) -> RaceWork:
        """A race of two made in the caller's transaction (an accepted challenge): ``row``'s creator in
        seat 1, ``opponent`` in seat 2; its work, the race locked, for its start."""
        await _insert_race(conn, row)
        await conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) VALUES (%s, %s, 2, %s)",
            (row.race_id, opponent, row.now),
        )
        race = await _load(conn, row.race_id, lock=True)
        assert race is not None
        return RaceWork(conn, race)

    async def due(self, now: datetime, limit: int) -> list[uuid.UUID]:
        """Running races whose time limit has passed at ``now`` (the periodic job finishes them)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT id FROM races WHERE status = %s AND ends_at <= %s ORDER BY ends_at LIMIT %s",
                (RUNNING, now, limit),
            )
            return [row[0] for row in await cursor.fetchall()]

    async def open_races(self, limit: int, before: tuple[datetime, uuid.UUID] | None = None) -> list[tuple[Any, ...]]:
        """The open races, newest first, strictly before the ``before`` key (created, id), in the order
        of the open races' own index (migration 0010): (id, creator, creator's name, ruleset id,
        version, deal source, seats, time limit, created, entrants, rated, the creator a bot)."""
        after_key = "" if before is None else " AND (r.created_at, r.id) < (%(created)s, %(id)s)"
        parameters = {"status": OPEN, "limit": limit, "created": None, "id": None}
        if before is not None:
            parameters |= {"created": before[0], "id": before[1]}
        async with self.reads.connection() as conn:
            cursor = await conn.execute(
                "SELECT r.id, r.creator_id, p.name, r.ruleset_id, r.ruleset_version, r.deal->>'source', r.max_entrants,"
                " r.time_limit_seconds, r.created_at, (SELECT count(*) FROM race_entrants e WHERE e.race_id = r.id),"
                " r.rated, p.bot"
                f" FROM races r JOIN players p ON p.id = r.creator_id WHERE r.status = %(status)s{after_key}"
                " ORDER BY r.created_at DESC, r.id DESC LIMIT %(limit)s",
                parameters,
            )
            return list(await cursor.fetchall())

    async def unsettled(self, player_id: uuid.UUID) -> list[uuid.UUID]:
        """The running races ``player_id`` is in (settled before their race stats are read)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT r.id FROM races r JOIN race_entrants e ON e.race_id = r.id"
                " WHERE e.player_id = %s AND r.status = %s",
                (player_id, RUNNING),
            )
            return [row[0] for row in await cursor.fetchall()]

    async def entries_of(self, player_id: uuid.UUID) -> list[tuple[uuid.UUID, str, uuid.UUID | None]]:
        """(race, its status, the player's game) of every open or running race ``player_id`` is in."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT r.id, r.status, e.game_id FROM races r JOIN race_entrants e ON e.race_id = r.id"
                " WHERE e.player_id = %s AND r.status IN (%s, %s) ORDER BY r.created_at",
                (player_id, OPEN, RUNNING),
            )
            return [(row[0], row[1], row[2]) for row in await cursor.fetchall()]

    async def record(self, player_id: uuid.UUID) -> tuple[int, int]:
        """(races played, races won) of a player: finished races they were dealt a game in; won: place 1."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE e.place = 1) FROM race_entrants e"
                " JOIN races r ON r.id = e.race_id WHERE e.player_id = %s AND r.status = %s AND e.game_id IS NOT NULL",
                (player_id, FINISHED),
            )
            row = await cursor.fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

