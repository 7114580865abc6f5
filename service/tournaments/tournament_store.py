"""Tournaments in PostgreSQL: ``tournaments``, ``tournament_deals``, ``tournament_entrants`` and
``tournament_games`` (migration 0023).

Every write that changes a tournament takes its row lock first (``SELECT ... FOR UPDATE``) and
checks it under the lock, in one transaction: a join against the finish, two requests for an
entrant's next deal, two finishes, each has one outcome in any number of server processes. Each
such write bumps ``tournaments.version`` and notifies the stream channel
(``<tournament id>:<version>``, delivered on commit), so tournament streams wake up.

The next deal and the finish are a ``TournamentWork``: the tournaments use case opens it
(``TournamentStore.locked``), decides on what it reads, and makes its writes on it; the store runs
SQL and never calls a function of the layer above. Its records are service.tournaments.rows'.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from ..errors import Conflict, NotFound
from ..store import outbox
from ..store.event_store import CHANNEL, LOG_QUERY, insert_game
from ..store.game_records import NewGame
from .rows import (
    FINISHED,
    PREPARING,
    RUNNING,
    UPCOMING,
    DealtGame,
    EntrantRow,
    Final,
    GameFigures,
    Logs,
    NewTournamentRow,
    TournamentRow,
    over,
)

_TOURNAMENT = """
SELECT t.id, t.creator_id, p.name, p.bot, t.ruleset_id, t.ruleset_version, t.deal_count, t.starts_at, t.minutes,
       t.ends_at, t.rated, t.version, t.created_at, t.prepared_at, t.finished_at
FROM tournaments t JOIN players p ON p.id = t.creator_id WHERE t.id = %s
"""
_ENTRANTS = """
SELECT e.player_id, p.name, p.bot, e.joined_at, e.standing, e.place
FROM tournament_entrants e JOIN players p ON p.id = e.player_id
WHERE e.tournament_id = %s ORDER BY e.joined_at, e.player_id
"""
_GAMES = """
SELECT tg.player_id, tg.number, g.id, g.status, g.move_count, g.started_at, g.finished_at
FROM tournament_games tg JOIN games g ON g.id = tg.game_id
WHERE tg.tournament_id = %s ORDER BY tg.player_id, tg.number
"""
_LISTED = """
SELECT t.id, t.creator_id, p.name, p.bot, t.ruleset_id, t.ruleset_version, t.deal_count, t.starts_at, t.minutes,
       t.ends_at, t.rated, t.version, t.created_at, t.prepared_at, t.finished_at,
       (SELECT count(*) FROM tournament_entrants e WHERE e.tournament_id = t.id)
FROM tournaments t JOIN players p ON p.id = t.creator_id
WHERE {status}{after}
ORDER BY t.created_at DESC, t.id DESC LIMIT %(limit)s
"""
_UNFINISHED = "t.finished_at IS NULL AND t.ends_at > %(now)s"
_STATUS_IS = {  # the conditions of ``tournaments.status_of``, as SQL
    None: "TRUE",
    PREPARING: f"{_UNFINISHED} AND t.prepared_at IS NULL",
    UPCOMING: f"{_UNFINISHED} AND t.prepared_at IS NOT NULL AND t.starts_at > %(now)s",
    RUNNING: f"{_UNFINISHED} AND t.prepared_at IS NOT NULL AND t.starts_at <= %(now)s",
    FINISHED: "(t.finished_at IS NOT NULL OR t.ends_at <= %(now)s)",
}
ENTRANT_ORDER = "SELECT player_id FROM tournament_entrants WHERE tournament_id = %s ORDER BY joined_at, player_id"
"""The entrants in the order the finish rates them (the rebuild reads them in it too: same floats)."""
_NOTIFY = f"SELECT pg_notify('{CHANNEL}', %s::text || ':' || %s::text)"


def _row(found: Sequence[Any]) -> TournamentRow:
    (tournament_id, creator, name, bot, ruleset_id, version_of_ruleset, deals, starts_at, minutes, ends_at, rated,
     version, created_at, prepared_at, finished_at) = found
    return TournamentRow(tournament_id, creator, name, bot, (ruleset_id, version_of_ruleset), deals, starts_at,
                         minutes, ends_at, rated, version, created_at, prepared_at, finished_at)


async def _load(conn: AsyncConnection[Any], tournament_id: uuid.UUID, lock: bool = False) -> TournamentRow | None:
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(_TOURNAMENT + (" FOR UPDATE OF t" if lock else ""), (tournament_id,))
    found = await cursor.fetchone()
    return None if found is None else _row(found)


async def _locked(conn: AsyncConnection[Any], tournament_id: uuid.UUID) -> TournamentRow:
    found = await _load(conn, tournament_id, lock=True)
    if found is None:
        raise NotFound(f"no tournament {tournament_id}")
    return found


async def _bump(conn: AsyncConnection[Any], tournament_id: uuid.UUID, changes: str = "",
                params: Sequence[Any] = ()) -> None:
    """tournaments.version + 1 (with ``changes``, more SET clauses) and the notification of streams."""
    cursor = await conn.execute(
        f"UPDATE tournaments SET version = version + 1{changes} WHERE id = %s RETURNING version",
        (*params, tournament_id),
    )
    row = await cursor.fetchone()
    assert row is not None
    await conn.execute(_NOTIFY, (str(tournament_id), row[0]))


async def _games(conn: AsyncConnection[Any], tournament_id: uuid.UUID) -> list[GameFigures]:
    cursor = conn.cursor(row_factory=tuple_row)
    await cursor.execute(_GAMES, (tournament_id,))
    return [GameFigures(*row) for row in await cursor.fetchall()]


class TournamentStore:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def create(self, row: NewTournamentRow) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO tournaments (id, creator_id, ruleset_id, ruleset_version, deal_count, starts_at, minutes,"
                " ends_at, rated, version, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s,"
                " %s + make_interval(mins => %s), %s, 1, %s)",
                (row.id, row.creator_id, row.ruleset[0], row.ruleset[1], row.deal_count, row.starts_at, row.minutes,
                 row.starts_at, row.minutes, row.rated, row.now),
            )

    async def load(self, tournament_id: uuid.UUID) -> TournamentRow | None:
        async with self.pool.connection() as conn:
            return await _load(conn, tournament_id)

    async def board(self, tournament_id: uuid.UUID) -> tuple[TournamentRow, list[EntrantRow], list[GameFigures]] | None:
        """The tournament, its entrants and their games' figures, read in one snapshot (one transaction)."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            tournament = await _load(conn, tournament_id)
            if tournament is None:
                return None
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(_ENTRANTS, (tournament_id,))
            entrants = [EntrantRow(*row) for row in await cursor.fetchall()]
            return tournament, entrants, await _games(conn, tournament_id)

    async def listing(self, status: str | None, now: datetime, before: tuple[datetime, uuid.UUID] | None,
                      limit: int) -> list[tuple[TournamentRow, int]]:
        """Tournaments (each with how many entered), newest first, strictly before the ``before`` key
        (created, id); only those of ``status`` at ``now`` when it is given (one of ``STATUSES``)."""
        parameters: dict[str, Any] = {"now": now, "limit": limit}
        after = ""
        if before is not None:
            after = " AND (t.created_at, t.id) < (%(created)s, %(id)s)"
            parameters |= {"created": before[0], "id": before[1]}
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(_LISTED.format(status=_STATUS_IS[status], after=after), parameters)
            return [(_row(found[:-1]), found[-1]) for found in await cursor.fetchall()]

    async def stored_deals(self, tournament_id: uuid.UUID) -> set[int]:
        """The numbers of the deals proven and stored so far."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT number FROM tournament_deals WHERE tournament_id = %s",
                                        (tournament_id,))
            return {row[0] for row in await cursor.fetchall()}

    async def store_deal(self, tournament_id: uuid.UUID, number: int, deck: list[str], fingerprint: str,
                         proof: dict[str, Any]) -> None:
        """Deal ``number``, proven (every process derives the same one: the first stored stays)."""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO tournament_deals (tournament_id, number, deck, fingerprint, proof)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tournament_id, number, Jsonb(deck), fingerprint, Jsonb(proof)),
            )

    async def mark_prepared(self, tournament_id: uuid.UUID, now: datetime) -> None:
        """The tournament is ready once all its deals are stored (once: the first call that sees them)."""
        async with self.pool.connection() as conn, conn.transaction():
            tournament = await _locked(conn, tournament_id)
            cursor = await conn.execute("SELECT count(*) FROM tournament_deals WHERE tournament_id = %s",
                                        (tournament_id,))
            stored = await cursor.fetchone()
            if tournament.prepared_at is None and stored is not None and stored[0] == tournament.deal_count:
                await _bump(conn, tournament_id, ", prepared_at = %s", (now,))

    async def join(self, tournament_id: uuid.UUID, player_id: uuid.UUID, now: datetime) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            tournament = await _locked(conn, tournament_id)
            if over(tournament, now):
                raise Conflict("the tournament is over: entries are closed", "tournament_over")
            cursor = await conn.execute(
                "INSERT INTO tournament_entrants (tournament_id, player_id, joined_at) VALUES (%s, %s, %s)"
                " ON CONFLICT DO NOTHING RETURNING 1", (tournament_id, player_id, now))
            if await cursor.fetchone() is None:
                raise Conflict("you have already entered this tournament", "already_entered")
            await _bump(conn, tournament_id)

    async def touch(self, tournament_id: uuid.UUID) -> None:
        """A game of the tournament ended: its streams read the standings again."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute("SELECT finished_at FROM tournaments WHERE id = %s FOR UPDATE",
                                        (tournament_id,))
            found = await cursor.fetchone()
            if found is not None and found[0] is None:
                await _bump(conn, tournament_id)

    @asynccontextmanager
    async def locked(self, tournament_id: uuid.UUID) -> AsyncIterator[TournamentWork | None]:
        """One change of the tournament (a ``TournamentWork``), its row locked for the whole
        transaction; committed when the block ends, rolled back when it raises. None: no such
        tournament."""
        async with self.pool.connection() as conn, conn.transaction():
            tournament = await _load(conn, tournament_id, lock=True)
            yield None if tournament is None else TournamentWork(conn, tournament)


class TournamentWork:
    """One change of a tournament, in one transaction with its row locked (``TournamentStore.locked``):
    ``tournament`` as read under the lock, the reads the change decides on, and its writes, run on
    that transaction as the use case makes them and committed together when the work ends. The
    use case (service.tournaments.tournaments) decides; the work never calls back into it."""

    __slots__ = ("conn", "tournament")

    def __init__(self, conn: AsyncConnection[Any], tournament: TournamentRow) -> None:
        self.conn = conn  # the transaction: a rated finish rates in it too (service.ratings)
        self.tournament = tournament

    @property
    def _id(self) -> uuid.UUID:
        return self.tournament.id

    async def entered(self, player_id: uuid.UUID) -> bool:
        cursor = await self.conn.execute(
            "SELECT 1 FROM tournament_entrants WHERE tournament_id = %s AND player_id = %s", (self._id, player_id))
        return await cursor.fetchone() is not None

    async def last_game(self, player_id: uuid.UUID) -> tuple[int, datetime | None] | None:
        """The entrant's last deal: its number and when its game ended (None: still in play)."""
        cursor = self.conn.cursor(row_factory=tuple_row)
        await cursor.execute(
            "SELECT tg.number, g.finished_at FROM tournament_games tg JOIN games g ON g.id = tg.game_id"
            " WHERE tg.tournament_id = %s AND tg.player_id = %s ORDER BY tg.number DESC LIMIT 1",
            (self._id, player_id))
        last = await cursor.fetchone()
        return None if last is None else (last[0], last[1])

    async def deck(self, number: int) -> list[str]:
        """Deal ``number``'s deck (prepared: every deal is stored)."""
        cursor = await self.conn.execute(
            "SELECT deck FROM tournament_deals WHERE tournament_id = %s AND number = %s", (self._id, number))
        found = await cursor.fetchone()
        assert found is not None
        deck: list[str] = found[0]
        return deck

    async def deal(self, player_id: uuid.UUID, number: int, game: DealtGame, now: datetime) -> None:
        """The entrant's game of deal ``number``, inserted at ``now``."""
        await insert_game(self.conn, NewGame(game.game_id, player_id, self.tournament.ruleset, game.deal,
                                             game.status, game.snapshot, game.events, now))
        await self.conn.execute(
            "INSERT INTO tournament_games (tournament_id, player_id, number, game_id) VALUES (%s, %s, %s, %s)",
            (self._id, player_id, number, game.game_id))

    async def games(self) -> list[GameFigures]:
        return await _games(self.conn, self._id)

    async def entrant_order(self) -> list[uuid.UUID]:
        """The entrants in the order the finish rates them (``ENTRANT_ORDER``)."""
        cursor = await self.conn.execute(ENTRANT_ORDER, (self._id,))
        return [row[0] for row in await cursor.fetchall()]

    async def logs(self, players: Sequence[uuid.UUID], games: Sequence[GameFigures], cutoff: datetime | None) -> Logs:
        """Each of ``players``' ``games`` (by player, then deal number) as its stored log cut at ``cutoff``."""
        logs: Logs = {player: [] for player in players}
        cursor = self.conn.cursor(row_factory=tuple_row)
        for game in games:
            await cursor.execute(LOG_QUERY, {"game": game.game_id, "cutoff": cutoff})
            logs[game.player_id].append((game.number, list(await cursor.fetchall())))
        return logs

    async def decks(self) -> dict[int, list[str]]:
        """Every deal's deck, by number."""
        cursor = self.conn.cursor(row_factory=tuple_row)
        await cursor.execute("SELECT number, deck FROM tournament_deals WHERE tournament_id = %s", (self._id,))
        return dict(await cursor.fetchall())

    async def record_finals(self, finals: Sequence[Final]) -> None:
        """Each entrant's frozen tally and place."""
        async with self.conn.cursor() as cursor:
            await cursor.executemany(
                "UPDATE tournament_entrants SET standing = %s, place = %s WHERE tournament_id = %s AND player_id = %s",
                [(Jsonb(final.standing), final.place, self._id, final.player_id) for final in finals])

    async def tell(self, events: Sequence[outbox.AccountEvent]) -> None:
        """``events`` appended to their accounts' outboxes, in this transaction."""
        await outbox.append_all(self.conn, list(events))

    async def changed(self, finished_at: datetime | None = None) -> None:
        """The tournament has changed (its version bumped, its streams told); ``finished_at``: it finished then."""
        if finished_at is None:
            await _bump(self.conn, self._id)
        else:
            await _bump(self.conn, self._id, ", finished_at = %s", (finished_at,))
