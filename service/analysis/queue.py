"""The analysis queue in PostgreSQL: the ``analysis_jobs`` table (migration 0009).

One row per game. A worker takes the oldest job that is ``queued``, or ``running`` with a lease that
ran out (the process that ran it died), with ``SELECT ... FOR UPDATE SKIP LOCKED``: two workers never
take the same job, and a job runs in one place at a time. Taking it starts a new ``attempt``; every
later write names that attempt and the job's ``running`` status, so a worker whose lease was taken
over writes nothing (``False``) and stops. Progress and the end notify the game's stream channel
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

from ..store.event_store import CHANNEL

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
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
INSERT INTO analysis_jobs AS j (game_id, status, version, total)
SELECT %(id)s, 'queued', %(version)s, 1 + moves.n FROM moves
ON CONFLICT (game_id) DO UPDATE SET status = 'queued', error = NULL, lease_until = NULL,
    answers = '[]', done = 0, result = NULL, finished_at = NULL
    WHERE j.status = 'failed'
RETURNING {_COLUMNS}
"""
_CLAIM = """
UPDATE analysis_jobs j
SET status = 'running', attempt = j.attempt + 1, lease_until = now() + make_interval(secs => %(lease)s),
    started_at = coalesce(j.started_at, now())
FROM (
    SELECT game_id FROM analysis_jobs
    WHERE (status = 'queued' OR (status = 'running' AND lease_until < now())) {game}
    ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
) picked
WHERE j.game_id = picked.game_id
RETURNING j.game_id, j.attempt, j.version, j.total, j.answers
"""
_OURS = "WHERE game_id = %(id)s AND attempt = %(attempt)s AND status = 'running'"
_NOTIFY = f"RETURNING pg_notify('{CHANNEL}', game_id::text || ':' || version::text)"


class AnalysisQueue:
    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def request(self, game_id: uuid.UUID, version: int) -> JobRow:
        """The game's job: a new one queued, a failed one queued again, else the one there is."""
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(_REQUEST, {"id": game_id, "version": version, "moves": MOVE_EVENTS})
            row = await cursor.fetchone()
            if row is None:  # there is one, not failed
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
        """Take the oldest job waiting (or this game's), running from now on under a lease."""
        query = _CLAIM.format(game="" if game_id is None else "AND game_id = %(id)s")
        async with self.pool.connection() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            await cursor.execute(query, {"lease": lease_seconds, "id": game_id})
            row = await cursor.fetchone()
        return None if row is None else Claimed(*row)

    async def progress(self, job: Claimed, answer: dict[str, Any], done: int, lease_seconds: float) -> bool:
        """Keep one more answer and the positions settled; renew the lease. False: not ours any more."""
        return await self._ours(
            "UPDATE analysis_jobs SET answers = answers || %(answer)s, done = %(done)s, "
            f"lease_until = now() + make_interval(secs => %(lease)s) {_OURS} {_NOTIFY}",
            job, answer=Jsonb([answer]), done=done, lease=lease_seconds,
        )

    async def renew(self, job: Claimed, lease_seconds: float) -> bool:
        return await self._ours(
            f"UPDATE analysis_jobs SET lease_until = now() + make_interval(secs => %(lease)s) {_OURS} RETURNING 1",
            job, lease=lease_seconds,
        )

    async def finish(self, job: Claimed, result: dict[str, Any], done: int) -> bool:
        return await self._ours(
            "UPDATE analysis_jobs SET status = 'done', result = %(result)s, done = %(done)s, lease_until = NULL, "
            f"finished_at = now() {_OURS} {_NOTIFY}",
            job, result=Jsonb(result), done=done,
        )

    async def fail(self, job: Claimed, error: str) -> bool:
        return await self._ours(
            "UPDATE analysis_jobs SET status = 'failed', error = %(error)s, lease_until = NULL, finished_at = now() "
            f"{_OURS} {_NOTIFY}",
            job, error=error[:2000],
        )

    async def release(self, job: Claimed) -> bool:
        """Give a job back (this process is stopping): queued again, for any worker to take at once."""
        return await self._ours(f"UPDATE analysis_jobs SET status = 'queued', lease_until = NULL {_OURS} RETURNING 1",
                                job)

    async def _ours(self, statement: str, job: Claimed, **values: Any) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(statement, {"id": job.game_id, "attempt": job.attempt, **values})
            return await cursor.fetchone() is not None
