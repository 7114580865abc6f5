"""Races in PostgreSQL: the ``races`` and ``race_entrants`` tables (migration 0004).

Every write that changes a race takes the race's row lock first (``SELECT ... FOR UPDATE``) and
checks the race's status under it, in one transaction: so of two joins for the last seat, a join
and the start, or two starts, exactly one happens and the other sees what it did (a 409 for the
caller), in any number of server processes. Each such write bumps ``races.version`` and notifies
the stream channel (``<race id>:<version>``, delivered on commit) so race streams wake up.
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

from ..errors import Conflict, Forbidden, NotFound, NotRaceCreator
from ..store import outbox
from ..store.event_store import CHANNEL, insert_game
from ..store.game_records import NewEvent, NewGame
from ..store.replica import ReadPool
from ..store.snapshots import TAIL

OPEN, RUNNING, FINISHED = "open", "running", "finished"
CANCELLED = "cancelled"
"""Shown, never stored: a race cancelled before it started is stored as finished with its
``cancelled_reason`` (a status the previous release knows) and shown as cancelled."""


@dataclass(frozen=True, slots=True)
class EntrantRow:
    player_id: uuid.UUID
    name: str
    seat: int
    joined_at: datetime
    game_id: uuid.UUID | None
    standing: dict[str, Any] | None  # frozen when the race finished
    place: int | None
    game_version: int | None  # the game as it is now (None before the start)
    game_snapshot: dict[str, Any] | None  # with the events after it, the game's state (domain.codec.restore)
    game_finished_at: datetime | None
    game_tail: list[tuple[str, dict[str, Any]]]  # the events after the snapshot (none before the start)
    bot: bool = False  # the player is a bot account
    rating_before: float | None = None  # a rated entrant's rating (mu) before and after the race
    rating_after: float | None = None


@dataclass(frozen=True, slots=True)
class RaceRow:
    id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal: dict[str, Any]
    deck: list[str]
    max_entrants: int
    time_limit_seconds: int | None
    status: str
    version: int
    created_at: datetime
    started_at: datetime | None
    ends_at: datetime | None
    finished_at: datetime | None
    entrants: tuple[EntrantRow, ...]
    cancelled_reason: str | None = None  # why a cancelled race ended, in words
    rated: bool = False  # finishing it rates its entrants (service.ratings)
    creator_name: str = ""
    creator_bot: bool = False

    @property
    def games_ended(self) -> bool:
        """Every entrant's game has ended (False before the start)."""
        return self.status != OPEN and all(e.game_finished_at is not None for e in self.entrants)


@dataclass(frozen=True, slots=True)
class DealtGame:
    """A game the start deals one entrant: its row and first event (``store.insert_game``)."""

    game_id: uuid.UUID
    player_id: uuid.UUID
    deal: dict[str, Any]
    status: str
    snapshot: dict[str, Any]
    events: list[NewEvent]


@dataclass(frozen=True, slots=True)
class Result:
    """What settling writes for one entrant: the frozen standing and the place (None: unranked)."""

    player_id: uuid.UUID
    standing: dict[str, Any]
    place: int | None


@dataclass(frozen=True, slots=True)
class Ending:
    """When a race finished, and where its entrants' logs are cut (None: they ended before it, whole)."""

    finished_at: datetime
    cutoff: datetime | None


LogRow = tuple[int, str, dict[str, Any], datetime]
Judge = Callable[[RaceRow, dict[uuid.UUID, list[LogRow]]], Sequence[Result]]
RateRace = Callable[[AsyncConnection[Any], RaceRow, Sequence[Result], datetime], Awaitable[object]]
"""What a rated race's finish also does, in its transaction (service.ratings: the entrants' ratings)."""

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
LOG_QUERY = _LOG = """
SELECT version, type, data, recorded_at FROM events
WHERE game_id = %(game)s AND (%(cutoff)s::timestamptz IS NULL OR recorded_at < %(cutoff)s::timestamptz)
ORDER BY version
"""
"""An entrant's stored log, cut at ``cutoff`` (None: whole): what ``judge`` checks (service.ratings' rebuild too)."""


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


@dataclass(frozen=True, slots=True)
class NewRaceRow:
    """A race to insert, open, with its creator as the first entrant."""

    race_id: uuid.UUID
    creator_id: uuid.UUID
    ruleset: tuple[str, int]
    deal: dict[str, Any]
    deck: list[str]
    max_entrants: int
    time_limit_seconds: int | None
    now: datetime
    proof: dict[str, Any] | None = None  # a secret deal's, kept unshown
    fingerprint: str | None = None  # its deck's (service.deals.live_decks)
    rated: bool = False


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


async def _deal_and_run(
    conn: AsyncConnection[Any], race: RaceRow, now: datetime, deal_games: Callable[[RaceRow], list[DealtGame]]
) -> None:
    """Deal every entrant their game, all at ``now``, and set the race running (the race row locked);
    each entrant's account hears of it, with their own game (``raceStarted``)."""
    dealt = deal_games(race)
    for game in dealt:
        await insert_game(conn, NewGame(game.game_id, game.player_id, race.ruleset, game.deal, game.status,
                                        game.snapshot, game.events, now))
        await conn.execute(
            "UPDATE race_entrants SET game_id = %s WHERE race_id = %s AND player_id = %s",
            (game.game_id, race.id, game.player_id),
        )
    await _bump(
        conn, race.id,
        ", status = %s, started_at = %s, ends_at = %s + make_interval(secs => time_limit_seconds)",
        (RUNNING, now, now),
    )
    await outbox.append_all(conn, [
        outbox.AccountEvent(game.player_id, outbox.RACE_STARTED, {
            "race": str(race.id), "game": str(game.game_id), "entrants": len(dealt),
            "timeLimitSeconds": race.time_limit_seconds,
        })
        for game in dealt
    ])


def _race_finished(race: RaceRow, result: Result, ending: Ending) -> outbox.AccountEvent:
    """The ``raceFinished`` event of one entrant: their place (None: unranked) among how many, and
    whether the time limit ended the race."""
    game = next((e.game_id for e in race.entrants if e.player_id == result.player_id), None)
    return outbox.AccountEvent(result.player_id, outbox.RACE_FINISHED, {
        "race": str(race.id), "game": None if game is None else str(game), "place": result.place,
        "entrants": len(race.entrants), "timeUp": ending.cutoff is not None, "rated": race.rated,
    })


async def _locked(conn: AsyncConnection[Any], race_id: uuid.UUID) -> RaceRow:
    """The race with its row locked (``_load``), or 404."""
    race = await _load(conn, race_id, lock=True)
    if race is None:
        raise NotFound(f"no race {race_id}")
    return race


def _still_open(race: RaceRow, what: str) -> None:
    """Refuse (409 race_not_open) to change a race that is no longer open."""
    if race.status == RUNNING:
        raise Conflict(f"the race has started: it can no longer be {what}", "race_not_open")
    if race.status != OPEN:
        ended = "was cancelled" if race.cancelled_reason is not None else "has finished"
        raise Conflict(f"the race {ended}: it can no longer be {what}", "race_not_open")


async def _cancel(conn: AsyncConnection[Any], race_id: uuid.UUID, now: datetime, reason: str) -> None:
    """End the open race, never started, with ``reason`` (the race row locked). Stored as finished with
    its reason: a status value of its own would reach the processes of the release before this one,
    and the clients of the API versions served, as one they do not know. Its streams end (``_bump``)."""
    await _bump(conn, race_id, ", status = %s, finished_at = %s, cancelled_reason = %s", (FINISHED, now, reason))


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

    async def open_and_start(
        self, conn: AsyncConnection[Any], row: NewRaceRow, opponent: uuid.UUID,
        deal_games: Callable[[RaceRow], list[DealtGame]],
    ) -> None:
        """A race of two made and started at once, in the caller's transaction (an accepted
        challenge): ``row``'s creator in seat 1, ``opponent`` in seat 2, each dealt their game."""
        await _insert_race(conn, row)
        await conn.execute(
            "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) VALUES (%s, %s, 2, %s)",
            (row.race_id, opponent, row.now),
        )
        race = await _load(conn, row.race_id, lock=True)
        assert race is not None
        await _deal_and_run(conn, race, row.now, deal_games)

    async def join(self, race_id: uuid.UUID, player_id: uuid.UUID, now: datetime) -> None:
        """A new entrant, if the race is open, has a free seat and does not have them yet."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _locked(conn, race_id)
            if race.status != OPEN:
                raise Conflict(f"the race has {'started' if race.status == RUNNING else 'finished'}: "
                               "entries are closed", "race_not_open")
            if any(e.player_id == player_id for e in race.entrants):
                raise Conflict("you have already entered this race", "already_entered")
            if len(race.entrants) >= race.max_entrants:
                raise Conflict(f"the race is full: all {race.max_entrants} places are taken", "race_full")
            await conn.execute(
                "INSERT INTO race_entrants (race_id, player_id, seat, joined_at) VALUES (%s, %s, %s, %s)",
                (race_id, player_id, len(race.entrants) + 1, now),
            )
            await _bump(conn, race_id)

    async def start(
        self, race_id: uuid.UUID, caller: uuid.UUID, now: datetime, deal_games: Callable[[RaceRow], list[DealtGame]]
    ) -> None:
        """Deal every entrant their game, all at ``now``, and set the race running: one transaction."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _locked(conn, race_id)
            if caller != race.creator_id:
                raise Forbidden("only the player who created the race can start it")
            if race.status != OPEN:
                raise Conflict(f"the race has already {'started' if race.status == RUNNING else 'finished'}",
                               "race_not_open")
            await _deal_and_run(conn, race, now, deal_games)

    async def settle(
        self, race_id: uuid.UUID, due: Callable[[RaceRow], Ending | None], judge: Judge, rate: RateRace | None = None,
    ) -> bool:
        """Finish the race if ``due`` says it is over (else leave it): under the race's lock, read each
        entrant's stored log up to the ending's cutoff, let ``judge`` decide the standings and places,
        and write them with the race finished; a rated race is rated (``rate``) in the same
        transaction. True when this call finished the race."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _load(conn, race_id, lock=True)
            if race is None or race.status != RUNNING:
                return False
            ending = due(race)
            if ending is None:
                return False
            logs: dict[uuid.UUID, list[LogRow]] = {}
            cursor = conn.cursor(row_factory=tuple_row)
            for entrant in race.entrants:
                if entrant.game_id is not None:
                    await cursor.execute(_LOG, {"game": entrant.game_id, "cutoff": ending.cutoff})
                    logs[entrant.game_id] = list(await cursor.fetchall())
            results = judge(race, logs)
            for result in results:
                await conn.execute(
                    "UPDATE race_entrants SET standing = %s, place = %s WHERE race_id = %s AND player_id = %s",
                    (Jsonb(result.standing), result.place, race_id, result.player_id),
                )
            if race.rated and rate is not None:
                await rate(conn, race, results, ending.finished_at)
            await _bump(conn, race_id, ", status = %s, finished_at = %s", (FINISHED, ending.finished_at))
            await outbox.append_all(conn, [_race_finished(race, result, ending) for result in results])
            return True

    async def due(self, now: datetime, limit: int) -> list[uuid.UUID]:
        """Running races whose time limit has passed at ``now`` (the periodic job finishes them)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT id FROM races WHERE status = %s AND ends_at <= %s ORDER BY ends_at LIMIT %s",
                (RUNNING, now, limit),
            )
            return [row[0] for row in await cursor.fetchall()]

    async def record_standing(
        self, race_id: uuid.UUID, game_id: uuid.UUID, judge_one: Callable[[RaceRow, EntrantRow, list[LogRow]], Result]
    ) -> None:
        """An entrant's game has ended while the race runs: ``judge_one`` checks its whole stored log
        now, and its standing is kept (the race's finish decides again, over every log). Under a
        shared lock of the race, so a finish in progress is waited for and never overwritten."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute("SELECT status FROM races WHERE id = %s FOR SHARE", (race_id,))
            found = await cursor.fetchone()
            if found is None or found[0] != RUNNING:
                return
            race = await _load(conn, race_id)
            entrant = None if race is None else next((e for e in race.entrants if e.game_id == game_id), None)
            if race is None or entrant is None:
                return
            await cursor.execute(_LOG, {"game": game_id, "cutoff": None})
            result = judge_one(race, entrant, list(await cursor.fetchall()))
            await conn.execute(
                "UPDATE race_entrants SET standing = %s WHERE race_id = %s AND game_id = %s",
                (Jsonb(result.standing), race_id, game_id),
            )

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

    async def leave_open(self, race_id: uuid.UUID, player_id: uuid.UUID, now: datetime, reason: str) -> str | None:
        """Take ``player_id`` out of the race if it is still open. A creator who leaves hands the race
        to the entrant who joined first after them; with nobody left it is cancelled: finished, never
        started, with ``reason`` as its ``cancelled_reason``.
        What happened: "left", "handed" or "cancelled" (None: not open, or not in it)."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _load(conn, race_id, lock=True)
            if race is None or race.status != OPEN or all(e.player_id != player_id for e in race.entrants):
                return None
            await conn.execute("DELETE FROM race_entrants WHERE race_id = %s AND player_id = %s", (race_id, player_id))
            if race.creator_id != player_id:
                await _bump(conn, race_id)
                return "left"
            others = sorted((e for e in race.entrants if e.player_id != player_id), key=lambda e: (e.joined_at, e.seat))
            if others:
                await _bump(conn, race_id, ", creator_id = %s", (others[0].player_id,))
                return "handed"
            await _cancel(conn, race_id, now, reason)
            return "cancelled"

    async def leave(self, race_id: uuid.UUID, player_id: uuid.UUID, now: datetime, reason: str) -> str:
        """``player_id`` leaves the open race (``DELETE /races/{id}/entries/me``); a creator who leaves
        cancels it, with ``reason``. What happened: "left" or "cancelled". Refused, changing nothing,
        for a race they are not in (409 not_in_race) or one that has started (409 race_not_open)."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _locked(conn, race_id)
            if all(e.player_id != player_id for e in race.entrants):
                raise Conflict("you are not an entrant of this race: there is no entry of yours to take back",
                               "not_in_race")
            _still_open(race, "left")
            await conn.execute("DELETE FROM race_entrants WHERE race_id = %s AND player_id = %s", (race_id, player_id))
            if race.creator_id != player_id:
                await _bump(conn, race_id)
                return "left"
            await _cancel(conn, race_id, now, reason)
            return "cancelled"

    async def cancel(self, race_id: uuid.UUID, caller: uuid.UUID, now: datetime, reason: str) -> None:
        """The creator cancels the open race (``POST /races/{id}/cancel``): it ends, never started, with
        ``reason``. Refused, changing nothing, for anyone else (403 not_race_creator) and once it has
        started (409 race_not_open)."""
        async with self.pool.connection() as conn, conn.transaction():
            race = await _locked(conn, race_id)
            if caller != race.creator_id:
                raise NotRaceCreator("only the player who created the race can cancel it")
            _still_open(race, "cancelled")
            await _cancel(conn, race_id, now, reason)

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

