"""The analysis queue in PostgreSQL: the ``analysis_jobs`` table (migrations 0009 and 0015).

One row per game, with who asked for it (``requester``: ``player:<uuid>``, and the client
``address``). A new job is refused (``QueueFull``) while its requester already has
``per_player`` jobs queued or running, or its address ``per_address``; the count and the insert run
under one transaction-level advisory lock, so two requests at once cannot both pass the last place.

A worker takes a job in fair order (``_CLAIM``): round robin across requesters, not the oldest job
first overall. ``SELECT ... FOR UPDATE SKIP LOCKED`` still makes sure two workers never take the
same job and a job runs in one place at a time. Taking it starts a new ``attempt``; every later
write names that attempt and the job's ``running`` status, so a worker whose lease was taken over
writes nothing (``False``) and stops. Progress and the end notify the game's stream channel
(``canfield_events``, as an append does), which wakes the game's live streams in every process.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from domain.analysis import STARTS_A_MOVE

from ..store import outbox
from ..store.event_store import CHANNEL

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
REQUEST_LOCK = 0x43414E46_414E5251 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock (transaction-level) under which a new job's caps are counted and it is inserted."""
CLAIM_LOCK = 0x43414E46_414E434C & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock (transaction-level) under which a worker picks its job: claims one after the
other see each other's ``claimed_at``, so the round robin holds across processes."""
MOVE_EVENTS = [kind.__name__ for kind in STARTS_A_MOVE]
"""The stored types of the events that start a move (``domain.analysis.STARTS_A_MOVE``): a job's
total is one more position than the game has of them."""


@dataclass(frozen=True, slots=True)
class JobRow:
    game_id: uuid.UUID
    status: str
    version: int
    done: int
    total: int
    result: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Caps:
    """At most this many queued-or-running jobs per player and per client address (0: no cap)."""

    per_player: int
    per_address: int


class QueueFull(Exception):
    """A new job refused: its requester (``who``: ``player`` or ``address``) has ``limit`` waiting."""

    def __init__(self, who: str, limit: int) -> None:
        super().__init__(f"{who} has {limit} analyses queued or running")
        self.who = who
        self.limit = limit


@dataclass(frozen=True, slots=True)
class Claimed:
    """A job a worker has taken: its attempt, the game's version and the answers kept so far."""

    game_id: uuid.UUID
    attempt: int
    version: int
    total: int
    answers: list[dict[str, Any]]


_COLUMNS = "game_id, status, version, done, total, result"
_REQUEST = f"""
WITH moves AS (
    SELECT count(*) FILTER (WHERE type = ANY(%(moves)s)) AS n FROM events WHERE game_id = %(id)s
)
INSERT INTO analysis_jobs AS j (game_id, status, version, total, requester, address)
SELECT %(id)s, 'queued', %(version)s, 1 + moves.n, %(requester)s, %(address)s FROM moves
ON CONFLICT (game_id) DO UPDATE SET status = 'queued', error = NULL, lease_until = NULL,
    answers = '[]', done = 0, result = NULL, finished_at = NULL,
    requester = excluded.requester, address = excluded.address
    WHERE j.status = 'failed'
RETURNING {_COLUMNS}
"""
_WAITING = """
SELECT count(*) FILTER (WHERE requester = %(requester)s), count(*) FILTER (WHERE address = %(address)s)
FROM analysis_jobs
WHERE status IN ('queued', 'running') AND (requester = %(requester)s OR address = %(address)s)
"""
_CLAIM = """
UPDATE analysis_jobs j
SET status = 'running', attempt = j.attempt + 1, lease_until = now() + make_interval(secs => %(lease)s),
    started_at = coalesce(j.started_at, now()), claimed_at = clock_timestamp()
FROM (
    SELECT w.game_id FROM analysis_jobs w
    WHERE (w.status = 'queued' OR (w.status = 'running' AND w.lease_until < now())) {game}
    ORDER BY
        CASE WHEN w.requester IS NULL
            THEN (SELECT count(*) FROM analysis_jobs r
                  WHERE r.requester IS NULL AND r.status = 'running' AND r.lease_until >= now())
            ELSE (SELECT count(*) FROM analysis_jobs r
                  WHERE r.requester = w.requester AND r.status = 'running' AND r.lease_until >= now())
        END,
        CASE WHEN w.requester IS NULL
            THEN (SELECT max(r.claimed_at) FROM analysis_jobs r WHERE r.requester IS NULL)
            ELSE (SELECT max(r.claimed_at) FROM analysis_jobs r WHERE r.requester = w.requester)
        END NULLS FIRST,
        w.created_at, w.game_id
    LIMIT 1 FOR UPDATE OF w SKIP LOCKED
) picked
WHERE j.game_id = picked.game_id
RETURNING j.game_id, j.attempt, j.version, j.total, j.answers
"""
"""Take one job, in fair order. The jobs waiting (queued, or running under a lease that ran out)
are ordered by their requester, then by age:

1. how many jobs the requester has running now (under a live lease): fewest first, so with
   several workers one requester does not hold them all;
2. when a job of the requester's was last taken (``claimed_at``, the latest over all their jobs,
   finished ones included): a requester never served, or served longest ago, first. Once taken, a
   requester's turn moves to the back, so the requesters take turns (round robin) whatever the
   size of their backlogs, and someone asking for the first time goes next;
3. the requester's own jobs oldest first (``created_at``; the game id breaks ties).

Jobs with no requester (queued by ``canfield analyse``, or by the previous release, which does not
record one) take their turns as one requester. Each requester's figures are index probes
(``analysis_jobs_requester_waiting`` and ``analysis_jobs_requester_claims``), and only waiting jobs
are ordered, which the caps keep few. ``FOR UPDATE OF w SKIP LOCKED`` passes over a job another
worker is taking at this moment: two workers never take the same job. The claim runs under the
transaction-level ``CLAIM_LOCK``, so the next claim (in any process) sees this one's
``claimed_at``; the previous release's workers take no such lock and take the oldest job, which
stays safe (SKIP LOCKED), just not fair."""
_OURS = "WHERE game_id = %(id)s AND attempt = %(attempt)s AND status = 'running'"
_NOTIFY = f"RETURNING pg_notify('{CHANNEL}', game_id::text || ':' || version::text)"
_ENDED = (
    f"RETURNING pg_notify('{CHANNEL}', game_id::text || ':' || version::text), status, requester,"
    " (SELECT player_id FROM games g WHERE g.id = analysis_jobs.game_id)"
)


class AnalysisQueue:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def request(
        self, game_id: uuid.UUID, version: int, requester: str | None = None, address: str | None = None,
        caps: Caps | None = None,
    ) -> JobRow:
        """The game's job: a new one queued, a failed one queued again, else the one there is. A new
        (or failed) job is refused with ``QueueFull`` while ``requester`` or ``address`` already has
        its cap of jobs queued or running; asking about a job that is there never is."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(f"SELECT {_COLUMNS} FROM analysis_jobs WHERE game_id = %s", (game_id,))
            row = await cursor.fetchone()
            if row is not None and row[1] != FAILED:
                return JobRow(*row)
            if caps is not None and (caps.per_player > 0 or caps.per_address > 0):
                await cursor.execute("SELECT pg_advisory_xact_lock(%s)", (REQUEST_LOCK,))
                await cursor.execute(_WAITING, {"requester": requester, "address": address})
                counts = await cursor.fetchone()
                assert counts is not None
                if requester is not None and 0 < caps.per_player <= counts[0]:
                    raise QueueFull("player", caps.per_player)
                if address is not None and 0 < caps.per_address <= counts[1]:
                    raise QueueFull("address", caps.per_address)
            await cursor.execute(_REQUEST, {"id": game_id, "version": version, "moves": MOVE_EVENTS,
                                            "requester": requester, "address": address})
            row = await cursor.fetchone()
            if row is None:  # one was queued meanwhile, not failed
                await cursor.execute(f"SELECT {_COLUMNS} FROM analysis_jobs WHERE game_id = %s", (game_id,))
                row = await cursor.fetchone()
        assert row is not None
        return JobRow(*row)

    async def get(self, game_id: uuid.UUID) -> JobRow | None:
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(f"SELECT {_COLUMNS} FROM analysis_jobs WHERE game_id = %s", (game_id,))
            row = await cursor.fetchone()
        return None if row is None else JobRow(*row)

    async def claim(self, lease_seconds: float, game_id: uuid.UUID | None = None) -> Claimed | None:
        """Take the next job in fair order (``_CLAIM``), or this game's, running from now on under a lease."""
        query = _CLAIM.format(game="" if game_id is None else "AND w.game_id = %(id)s")
        async with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute("SELECT pg_advisory_xact_lock(%s)", (CLAIM_LOCK,))
            await cursor.execute(query, {"lease": lease_seconds, "id": game_id})
            row = await cursor.fetchone()
        return None if row is None else Claimed(*row)

    async def progress(self, job: Claimed, answers: list[dict[str, Any]], done: int, lease_seconds: float) -> bool:
        """Keep more answers and the positions settled; renew the lease. False: not ours any more."""
        return await self._ours(
            "UPDATE analysis_jobs SET answers = answers || %(answers)s, done = %(done)s, "
            f"lease_until = now() + make_interval(secs => %(lease)s) {_OURS} {_NOTIFY}",
            job, answers=Jsonb(answers), done=done, lease=lease_seconds,
        )

    async def renew(self, job: Claimed, lease_seconds: float) -> bool:
        return await self._ours(
            f"UPDATE analysis_jobs SET lease_until = now() + make_interval(secs => %(lease)s) {_OURS} RETURNING 1",
            job, lease=lease_seconds,
        )

    async def finish(self, job: Claimed, result: dict[str, Any], done: int) -> bool:
        return await self._ended(
            "UPDATE analysis_jobs SET status = 'done', result = %(result)s, done = %(done)s, lease_until = NULL, "
            f"finished_at = now() {_OURS} {_ENDED}",
            job, result=Jsonb(result), done=done,
        )

    async def fail(self, job: Claimed, error: str) -> bool:
        return await self._ended(
            "UPDATE analysis_jobs SET status = 'failed', error = %(error)s, lease_until = NULL, finished_at = now() "
            f"{_OURS} {_ENDED}",
            job, error=error[:2000],
        )

    async def _ended(self, statement: str, job: Claimed, **values: Any) -> bool:
        """The job's end, and in its transaction the ``analysisDone`` event of the game's player and
        of the player who asked (service.store.outbox)."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(statement, {"id": job.game_id, "attempt": job.attempt, **values})
            row = await cursor.fetchone()
            if row is None:
                return False
            status, requester, player = row[1], row[2], row[3]
            told = {player} | _player_of(requester)
            data = {"game": str(job.game_id), "status": status}
            await outbox.append_all(conn, [outbox.AccountEvent(who, outbox.ANALYSIS_DONE, data) for who in told])
            return True

    async def release(self, job: Claimed) -> bool:
        """Give a job back (this process is stopping): queued again, for any worker to take at once."""
        return await self._ours(f"UPDATE analysis_jobs SET status = 'queued', lease_until = NULL {_OURS} RETURNING 1",
                                job)

    async def _ours(self, statement: str, job: Claimed, **values: Any) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(statement, {"id": job.game_id, "attempt": job.attempt, **values})
            return await cursor.fetchone() is not None


def _player_of(requester: str | None) -> set[uuid.UUID]:
    """The player who asked for a job (``player:<uuid>``), if a player did."""
    if requester is None or not requester.startswith("player:"):
        return set()
    try:
        return {uuid.UUID(requester.removeprefix("player:"))}
    except ValueError:
        return set()
