"""Reads that tolerate a replica, and when they go to it (``DATABASE_READ_URL``).

``ReadPool.connection()`` stands where a read took ``pool.connection()``: it hands out a
connection to the streaming replica when the replica is fresh enough for this request, else one
to the primary. Everything else (every write, a game in progress) keeps using the primary's pool.

Fresh enough means both of:

* **Read-your-writes.** After a write, the primary's WAL insert position (``write_position``,
  taken after the write committed, so at or past its commit record) is returned to the client
  (the ``Read-After`` header, service.http.replica_reads) and kept in this process per bearer
  token. A read that names such a position (``ReadContext.after``) is served by the replica only
  once ``pg_last_wal_replay_lsn()`` has reached it: when the last known replay position is
  behind, the replica is asked again, for at most ``wait_seconds``, then the primary serves it.
* **Bounded lag.** Every ``check_seconds`` ``watch`` samples the primary's WAL position and the
  replica's replay position; a read is never served by a replica that has not yet replayed what
  the primary had written ``max_lag_seconds`` ago.

A replica that is down, or fails during a read, is left alone until ``watch`` sees it answer
again; its reads go to the primary meanwhile (``ReadContext.replica_failed`` lets the HTTP layer
run a read that failed on it again on the primary), never a 5xx of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from .connections import DATABASE_DOWN_ERRORS

log = logging.getLogger("canfield")

REPLAYED = "SELECT coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn()) - '0/0'::pg_lsn"
"""How far the replica has replayed, in bytes of WAL (a server not in recovery: all it wrote)."""
WRITTEN = "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn"
"""The primary's WAL insert position in bytes: at or past the commit of every finished write."""
REMEMBERED_TOKENS = 10_000
"""Bearer tokens whose last write position this process keeps (the least recent go first)."""


def position_text(position: int) -> str:
    """A WAL position as PostgreSQL writes an LSN: ``16/B374D848``."""
    return f"{position >> 32:X}/{position & 0xFFFF_FFFF:X}"


def parse_position(text: str) -> int | None:
    """The position of an LSN in PostgreSQL's form, None when ``text`` is not one."""
    high, slash, low = text.strip().partition("/")
    if not slash or not 1 <= len(high) <= 8 or not 1 <= len(low) <= 8:
        return None
    try:
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        return None


@dataclass(slots=True)
class ReadContext:
    """One request's reads: the position they must not be older than, and what happened."""

    after: int = 0  # the client's own last write (Read-After, or this process's memory of its token)
    primary_only: bool = False  # a second try after the replica failed during the request
    replica_failed: bool = False


READ_CONTEXT: ContextVar[ReadContext | None] = ContextVar("canfield_read_context", default=None)


class ReadPool:
    """The primary's pool and, when configured, the replica's: ``connection()`` picks one per read."""

    def __init__(
        self, primary: AsyncConnectionPool, replica: AsyncConnectionPool | None = None, *,
        wait_seconds: float = 0.01, max_lag_seconds: float = 5.0, check_seconds: float = 1.0,
        connect_seconds: float = 0.5,
    ) -> None:
        self.primary = primary
        self.replica = replica
        self.wait_seconds = wait_seconds
        self.max_lag_seconds = max_lag_seconds
        self.check_seconds = check_seconds
        self.connect_seconds = connect_seconds
        self.replayed = 0  # the replica's replay position, as last seen
        self.down_until = 0.0  # monotonic: no replica reads before this (it failed)
        self.samples: deque[tuple[float, int]] = deque()  # (monotonic, primary's WAL position)
        self.reads: Counter[str] = Counter()  # replica, primary, behind (fell back), down (fell back)
        self._written: OrderedDict[str, int] = OrderedDict()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A connection for a read: the replica's when it is fresh enough for this request."""
        context = READ_CONTEXT.get()
        if self.replica is not None and await self._replica_serves(context):
            entered = False
            try:
                async with self.replica.connection(timeout=self.connect_seconds) as conn:
                    entered = True
                    self.reads["replica"] += 1
                    yield conn
                return
            except DATABASE_DOWN_ERRORS as error:
                self._lost(error)
                if entered:  # the read failed part way: the caller's request may run again on the primary
                    if context is not None:
                        context.replica_failed = True
                    raise
        self.reads["primary"] += 1
        async with self.primary.connection() as conn:
            yield conn

    async def _replica_serves(self, context: ReadContext | None) -> bool:
        if (context is not None and context.primary_only) or time.monotonic() < self.down_until:
            return False
        required = max(context.after if context is not None else 0, self.stale_bound())
        if self.replayed >= required:
            return True
        assert self.replica is not None
        deadline = time.monotonic() + self.wait_seconds
        try:
            async with self.replica.connection(timeout=self.connect_seconds) as conn:
                while True:
                    self.replayed = max(self.replayed, await _position(conn, REPLAYED))
                    if self.replayed >= required:
                        return True
                    if time.monotonic() >= deadline:
                        break
                    await asyncio.sleep(0.001)
        except DATABASE_DOWN_ERRORS as error:
            self._lost(error)
            self.reads["down"] += 1
            return False
        self.reads["behind"] += 1
        return False

    def stale_bound(self) -> int:
        """What the primary had written ``max_lag_seconds`` ago (0 before the first such sample)."""
        horizon = time.monotonic() - self.max_lag_seconds
        while len(self.samples) > 1 and self.samples[1][0] <= horizon:
            self.samples.popleft()
        if self.samples and self.samples[0][0] <= horizon:
            return self.samples[0][1]
        return 0

    def _lost(self, error: BaseException) -> None:
        if time.monotonic() >= self.down_until:
            log.warning("the read replica is not answering (%s): reads go to the primary", type(error).__name__)
        self.down_until = time.monotonic() + self.check_seconds

    async def write_position(self) -> int:
        """The primary's WAL position now: a read that waits for it sees every write finished before."""
        async with self.primary.connection() as conn:
            return await _position(conn, WRITTEN)

    def remember(self, token: str, position: int) -> None:
        """The last write position of a bearer token's client, for its reads in this process."""
        self._written[token] = position
        self._written.move_to_end(token)
        if len(self._written) > REMEMBERED_TOKENS:
            self._written.popitem(last=False)

    def written_by(self, token: str | None) -> int:
        return 0 if token is None else self._written.get(token, 0)

    async def check(self) -> None:
        """Sample the primary's position and the replica's replay position (``watch``)."""
        assert self.replica is not None
        try:
            async with self.primary.connection() as conn:
                self.samples.append((time.monotonic(), await _position(conn, WRITTEN)))
        except DATABASE_DOWN_ERRORS:
            pass  # the primary's own probes say so; the replica is still worth checking
        try:
            async with self.replica.connection(timeout=self.connect_seconds) as conn:
                self.replayed = max(self.replayed, await _position(conn, REPLAYED))
        except DATABASE_DOWN_ERRORS as error:
            self._lost(error)
        else:
            self.down_until = 0.0

    async def watch(self) -> None:
        """``check`` every ``check_seconds`` until cancelled (the app's lifespan)."""
        while True:
            try:
                await self.check()
            except Exception as error:  # never let the watch die: the next round tries again
                log.warning("checking the read replica failed: %r", error)
            await asyncio.sleep(self.check_seconds)

    def status(self) -> Literal["up", "behind", "down"]:
        """``up``, ``behind`` (more than max_lag_seconds behind the primary) or ``down`` (readiness)."""
        if time.monotonic() < self.down_until:
            return "down"
        return "behind" if self.replayed < self.stale_bound() else "up"


async def _position(conn: AsyncConnection[Any], query: str) -> int:
    row = await (await conn.execute(query)).fetchone()
    return 0 if row is None or row[0] is None else int(row[0])
