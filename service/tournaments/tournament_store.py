"""Tournaments in PostgreSQL: ``tournaments``, ``tournament_deals``, ``tournament_entrants`` and
``tournament_games`` (migration 0023).

Every write that changes a tournament takes its row lock first (``SELECT ... FOR UPDATE``) and
checks it under the lock, in one transaction: a join against the finish, two requests for an
entrant's next deal, two finishes, each has one outcome in any number of server processes. Each
such write bumps ``tournaments.version`` and notifies the stream channel
(``<tournament id>:<version>``, delivered on commit), so tournament streams wake up.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from ..errors import Conflict, NotFound
from ..store import outbox
from ..store.event_store import CHANNEL, LOG_QUERY, insert_game
from ..store.game_records import NewEvent, NewGame

LogRow = tuple[int, str, dict[str, Any], datetime]
PREPARING, UPCOMING, RUNNING, FINISHED = "preparing", "upcoming", "running", "finished"


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    creator_name: str
    creator_bot: bool
    ruleset: tuple[str, int]
    deal_count: int
    starts_at: datetime
    minutes: int
    ends_at: datetime
    rated: bool
    version: int
    created_at: datetime
    prepared_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class EntrantRow:
    player_id: uuid.UUID
    name: str
    bot: bool
    joined_at: datetime
    standing: dict[str, Any] | None  # frozen at the finish
    place: int | None


@dataclass(frozen=True, slots=True)
class GameFigures:
    """One entrant's game of one deal, as its row shows it now."""

    player_id: uuid.UUID
    number: int
    game_id: uuid.UUID
    status: str
    move_count: int
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewTournamentRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal_count: int
    starts_at: datetime
    minutes: int
    rated: bool
    now: datetime


@dataclass(frozen=True, slots=True)
class DealtGame:
    """The game to deal an entrant for their next deal (``store.insert_game``)."""

    game_id: uuid.UUID
    deal: dict[str, Any]
    status: str
    snapshot: dict[str, Any]
    events: list[NewEvent]


@dataclass(frozen=True, slots=True)
class Final:
    """What the finish writes for one entrant: the frozen tally and the place (None: unplaced)."""

    player_id: uuid.UUID
    standing: dict[str, Any]
    place: int | None


Logs = dict[uuid.UUID, list[tuple[int, list[LogRow]]]]
"""Each entrant's games as (deal number, stored log cut at the end), by player."""
Judge = Callable[[TournamentRow, Logs, dict[int, list[str]]], Sequence[Final]]
RateTournament = Callable[[AsyncConnection[Any], TournamentRow, Sequence[Final], datetime], Awaitable[object]]

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
STATUSES = (PREPARING, UPCOMING, RUNNING, FINISHED)
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


def over(tournament: TournamentRow, now: datetime) -> bool:
    return tournament.finished_at is not None or now >= tournament.ends_at


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

    async def deal_next(self, tournament_id: uuid.UUID, player_id: uuid.UUID, now: datetime,
                        make_game: Callable[[TournamentRow, int, list[str]], DealtGame]) -> uuid.UUID:
        """Deal the entrant their next deal (the one after their last), if the tournament runs, they
        are in it and their last game has ended; the new game's id."""
        async with self.pool.connection() as conn, conn.transaction():
            tournament = await _locked(conn, tournament_id)
            _check_running(tournament, now)
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute("SELECT 1 FROM tournament_entrants WHERE tournament_id = %s AND player_id = %s",
                                 (tournament_id, player_id))
            if await cursor.fetchone() is None:
                raise Conflict("you have not entered this tournament: join it first (POST /tournaments/{id}/entries)",
                               "not_in_tournament")
            await cursor.execute(
                "SELECT tg.number, g.finished_at FROM tournament_games tg JOIN games g ON g.id = tg.game_id"
                " WHERE tg.tournament_id = %s AND tg.player_id = %s ORDER BY tg.number DESC LIMIT 1",
                (tournament_id, player_id))
            last = await cursor.fetchone()
            if last is not None and last[1] is None:
                raise Conflict(f"your game of deal {last[0]} is still in play: finish it (win, or resign) first",
                               "tournament_game_in_play")
            number = 1 if last is None else last[0] + 1
            if number > tournament.deal_count:
                raise Conflict(f"you have played all {tournament.deal_count} deals of this tournament",
                               "tournament_deals_done")
            await cursor.execute("SELECT deck FROM tournament_deals WHERE tournament_id = %s AND number = %s",
                                 (tournament_id, number))
            deck = await cursor.fetchone()
            assert deck is not None  # prepared: every deal is stored
            game = make_game(tournament, number, deck[0])
            await insert_game(conn, NewGame(game.game_id, player_id, tournament.ruleset, game.deal, game.status,
                                            game.snapshot, game.events, now))
            await conn.execute(
                "INSERT INTO tournament_games (tournament_id, player_id, number, game_id) VALUES (%s, %s, %s, %s)",
                (tournament_id, player_id, number, game.game_id))
            if number == 1:  # the account stream: the entrant's tournament has begun for them
                await outbox.append(conn, player_id, outbox.TOURNAMENT_STARTED, {
                    "tournament": str(tournament_id), "game": str(game.game_id), "deals": tournament.deal_count,
                    "endsAt": tournament.ends_at.isoformat()})
            await _bump(conn, tournament_id)
            return game.game_id

    async def touch(self, tournament_id: uuid.UUID) -> None:
        """A game of the tournament ended: its streams read the standings again."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute("SELECT finished_at FROM tournaments WHERE id = %s FOR UPDATE",
                                        (tournament_id,))
            found = await cursor.fetchone()
            if found is not None and found[0] is None:
                await _bump(conn, tournament_id)

    async def settle(
        self, tournament_id: uuid.UUID, due: Callable[[TournamentRow, list[GameFigures], int], datetime | None],
        judge: Judge, rate: RateTournament | None = None,
    ) -> bool:
        """Finish the tournament if ``due`` says when it ended (else leave it): under its lock, read every
        entrant's logs cut at the end (``due``'s instant when it is the time limit), let ``judge`` decide
        the tallies and places, write them with the tournament finished, and rate it (``rate``) in the
        same transaction. True when this call finished it."""
        async with self.pool.connection() as conn, conn.transaction():
            tournament = await _load(conn, tournament_id, lock=True)
            if tournament is None or tournament.finished_at is not None:
                return False
            games = await _games(conn, tournament_id)
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(ENTRANT_ORDER, (tournament_id,))
            players = [row[0] for row in await cursor.fetchall()]
            finished_at = due(tournament, games, len(players))
            if finished_at is None:
                return False
            cutoff = tournament.ends_at if finished_at >= tournament.ends_at else None
            logs: Logs = {player: [] for player in players}
            for game in games:  # by player, then deal number
                await cursor.execute(LOG_QUERY, {"game": game.game_id, "cutoff": cutoff})
                logs[game.player_id].append((game.number, list(await cursor.fetchall())))
            await cursor.execute("SELECT number, deck FROM tournament_deals WHERE tournament_id = %s",
                                 (tournament_id,))
            decks: dict[int, list[str]] = dict(await cursor.fetchall())
            finals = judge(tournament, logs, decks)
            await cursor.executemany(
                "UPDATE tournament_entrants SET standing = %s, place = %s WHERE tournament_id = %s AND player_id = %s",
                [(Jsonb(final.standing), final.place, tournament_id, final.player_id) for final in finals])
            if tournament.rated and rate is not None:
                await rate(conn, tournament, finals, finished_at)
            await outbox.append_all(conn, [outbox.AccountEvent(final.player_id, outbox.TOURNAMENT_FINISHED, {
                "tournament": str(tournament_id), "place": final.place, "entrants": len(finals),
                "dealsWon": final.standing["dealsWon"], "rated": tournament.rated}) for final in finals])
            await _bump(conn, tournament_id, ", finished_at = %s", (min(finished_at, tournament.ends_at),))
            return True


def _check_running(tournament: TournamentRow, now: datetime) -> None:
    if over(tournament, now):
        raise Conflict("the tournament is over: no more deals are dealt", "tournament_over")
    if tournament.prepared_at is None:
        raise Conflict("the tournament's deals are still being proven winnable: try again in a moment",
                       "tournament_preparing")
    if now < tournament.starts_at:
        raise Conflict(f"the tournament starts at {tournament.starts_at.isoformat()}", "tournament_not_started")
