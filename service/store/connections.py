"""How the service connects to PostgreSQL: the URL psycopg takes, the connection pool (with its
reconnect policy), the JSON codec and the errors that mean the database is down."""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any

import msgspec
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import AsyncConnectionPool, PoolTimeout

log = logging.getLogger("canfield")

CONNECT_TIMEOUT_SECONDS = 2
"""libpq's ``connect_timeout`` when the connection string sets none (``DB_CONNECT_TIMEOUT_SECONDS``)."""


def connect_timeout(conninfo: str, seconds: int = CONNECT_TIMEOUT_SECONDS) -> dict[str, Any]:
    """The ``connect_timeout`` keyword to connect to ``conninfo`` with: ``seconds``, unless the
    string (or ``PGCONNECT_TIMEOUT``) sets its own. Without one, a host that is down rather than
    refusing (no answer to the TCP handshake) holds a connection attempt for the kernel's minutes;
    with several hosts, libpq gives each host this long before it tries the next."""
    if os.environ.get("PGCONNECT_TIMEOUT"):
        return {}
    try:
        if conninfo_to_dict(conninfo).get("connect_timeout") not in (None, ""):
            return {}
    except psycopg.Error:
        pass  # checked_url says what is wrong with it; connecting fails with libpq's words
    return {"connect_timeout": max(1, int(seconds))}


def libpq_url(url: str) -> str:
    """The same database as a plain libpq connection string (what psycopg connects with): a
    ``postgresql+psycopg://`` or ``postgres://`` URL becomes ``postgresql://``; any other form
    libpq reads (a URL naming several hosts, ``key=value`` pairs) is passed on as it is."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


class DatabaseURLError(ValueError):
    """A connection string libpq cannot read (the message never repeats a password)."""


def masked(text: str) -> str:
    """``text`` with the password of any URL or ``password=`` pair in it replaced by ***."""
    text = re.sub(r"(://[^/@\s:]*:)[^@\s/]*@", r"\1***@", text)
    return re.sub(r"(password\s*=\s*)('[^']*'|[^\s&]+)", r"\1***", text)


def checked_url(url: str, variable: str = "DATABASE_URL") -> str:
    """``url`` as psycopg takes it (``libpq_url``) once libpq's own parser has read it: a
    ``postgresql://`` URL, one naming several hosts (``postgresql://u@h1:5432,h2:5432/db?
    target_session_attrs=read-write``) or ``key=value`` pairs (``host=h1,h2 dbname=db``).
    Raises ``DatabaseURLError`` saying what is wrong, in one line, for anything else."""
    conninfo = libpq_url(url.strip())
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseURLError(
            f"{variable} is not a connection string PostgreSQL reads (a postgresql:// URL, "
            f"with one host or several, or key=value pairs): {masked(reason)}"
        ) from None
    ports = str(params.get("port") or "")
    bad = [port for port in ports.split(",") if port and not (port.isascii() and port.isdigit())]
    if bad:
        raise DatabaseURLError(f"{variable} names the port {masked(bad[0])!r}: a port is a number")
    return conninfo


def use_msgspec_for_json() -> None:
    """psycopg reads and writes json/jsonb with msgspec (faster than the standard library, and it
    takes UUIDs and datetimes). Process-wide; called wherever the service opens connections."""
    set_json_dumps(msgspec.json.encode)
    set_json_loads(msgspec.json.decode)


RECONNECT_SECONDS = 2.0
"""How long the pool retries one lost connection before starting over (see ``_reconnect_again``)."""


async def _reconnect_again(pool: AsyncConnectionPool) -> None:
    """The pool's ``reconnect_failed`` hook: start a fresh attempt at once.

    psycopg_pool retries a lost connection with exponential backoff (1, 2, 4, ... 128 s) for
    ``reconnect_timeout``; after an outage of a minute the next try could be half a minute away,
    so the service would stay down long after PostgreSQL is back. With a short
    ``reconnect_timeout`` and this hook, a new attempt (first one immediate, then about every
    second) starts whenever one gives up, for as long as the database is away."""
    if not pool.closed:
        await pool.check()  # also drops idle connections that died; then grows the pool by one


NOT_ANSWERING = "the database is not answering"
STANDBY = (
    "the database is a read-only standby, not the primary: DATABASE_URL must name the primary "
    "(with several hosts, add target_session_attrs=read-write)"
)
_PRIMARY_QUERY = (
    "SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN NULL "
    "ELSE pg_walfile_name(pg_current_wal_lsn()) END"
)
"""Whether the server is a standby, and if not the WAL file it writes, whose first 8 hex digits
are its timeline: the timeline a promotion started, at once (``pg_control_checkpoint()``'s
``timeline_id`` keeps the old one until the first checkpoint after the promotion)."""


class PrimaryUnavailable(psycopg.OperationalError):
    """There is no primary to write on: none answers, the one that answers is a standby, or it is
    behind the timeline this process has written on. The message says which (clients and
    ``/readyz`` read it); a request that meets it is a 503 like any database outage."""


class Primary:
    """What this process knows of the primary, kept by the pool's connection attempts, never by a
    request: why there is no primary now (``problem``; None while the last attempt succeeded),
    and the highest timeline a connection was made on.

    Fencing: after a failover the promoted standby writes on a new, higher timeline. An old
    primary that comes back on its own is still on the old one; a connection to it (a multi-host
    URL may well reach it) is refused here, so nothing acknowledged is written where the promoted
    primary never sees it. The check is one query per new connection (``check``, the pool's
    ``configure`` callback), nothing per move. The timeline is remembered per process: a process
    started after the failover knows only what it has seen."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.timeline = 0  # the highest timeline this process has had a connection on (0: none yet)
        self.since: float | None = None  # time.monotonic() when the current problem began

    def failed(self, reason: str) -> None:
        if self.problem != reason:
            log.warning("primary unavailable: %s", reason)
        if self.problem is None:
            self.since = time.monotonic()
        self.problem = reason

    def answered(self) -> None:
        if self.problem is not None:
            down = time.monotonic() - (self.since or time.monotonic())
            log.warning("primary answers again after %.1f s (timeline %d)", down, self.timeline)
        self.problem, self.since = None, None

    async def check(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """The pool's ``configure`` callback: refuse (close, raise ``PrimaryUnavailable``) a new
        connection to a standby or to a primary behind the highest timeline seen."""
        cursor = await conn.execute(_PRIMARY_QUERY)
        row = await cursor.fetchone()
        reason = None
        if row is None or row[0]:
            reason = STANDBY
        else:
            timeline = int(str(row[1])[:8], 16)
            if timeline < self.timeline:
                reason = (
                    f"the database answering as primary is on timeline {timeline}, behind timeline "
                    f"{self.timeline} this service has written on (an old primary back after a failover); "
                    "writes wait for the promoted primary"
                )
            else:
                self.timeline = timeline
        if reason is not None:
            await conn.close()
            raise PrimaryUnavailable(reason)


class PrimaryPool(AsyncConnectionPool[psycopg.AsyncConnection[Any]]):
    """The primary's pool: while ``primary`` knows of no primary, a request waits at most
    ``down_wait`` seconds for a connection (not the pool's whole ``timeout``), then fails with
    ``PrimaryUnavailable`` saying why. Every connection attempt, the pool's own reconnects
    included, updates ``primary``; the first one that succeeds ends the outage. While the
    primary answers, ``getconn`` costs one attribute read more than the plain pool's."""

    def __init__(self, conninfo: str, *, primary: Primary, down_wait: float, **kwargs: Any) -> None:
        self.primary = primary
        self.down_wait = down_wait
        super().__init__(conninfo, configure=primary.check, **kwargs)

    async def getconn(self, timeout: float | None = None) -> psycopg.AsyncConnection[Any]:
        if self.primary.problem is not None:
            timeout = min(self.timeout if timeout is None else timeout, self.down_wait)
        try:
            return await super().getconn(timeout)
        except PoolTimeout:
            problem = self.primary.problem
            if problem is None:
                raise
            raise PrimaryUnavailable(problem) from None

    async def probe(self) -> None:
        """One connection attempt outside the pool's own (which stop once the pool is full), so a
        readiness probe sees a primary come back, or an old one fenced off, on its own."""
        conn = await self._connect()
        await conn.close()

    async def _connect(self, timeout: float | None = None) -> psycopg.AsyncConnection[Any]:
        try:
            conn = await super()._connect(timeout)
        except PrimaryUnavailable as error:
            self.primary.failed(str(error))
            raise
        except Exception:
            self.primary.failed(NOT_ANSWERING)
            raise
        self.primary.answered()
        return conn


def primary_of(pool: AsyncConnectionPool) -> Primary | None:
    """The ``Primary`` a pool keeps (None for a pool opened without one: a replica's, a tool's)."""
    return pool.primary if isinstance(pool, PrimaryPool) else None


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """A pool's size (``min_size`` to ``max_size`` connections), each connection's
    ``statement_timeout`` (ms), how long a request waits for a connection (``timeout``, seconds;
    ``down_wait`` while no primary answers, for a ``PrimaryPool``) and libpq's connect timeout
    (``connect_timeout_seconds``, unless the URL sets its own)."""

    min_size: int
    max_size: int
    statement_timeout_ms: int
    timeout: float = 5.0
    connect_timeout_seconds: int = CONNECT_TIMEOUT_SECONDS
    down_wait: float = 1.0


def open_pool(url: str, options: PoolOptions, primary: Primary | None = None) -> AsyncConnectionPool:
    """A pool on ``url`` (not opened yet), its connections in autocommit; with ``primary``, a
    ``PrimaryPool`` (fails fast while no primary answers, refuses standbys and old primaries)."""
    use_msgspec_for_json()
    arguments: dict[str, Any] = {
        "min_size": options.min_size,
        "max_size": options.max_size,
        "open": False,
        "timeout": options.timeout,
        "reconnect_timeout": RECONNECT_SECONDS,
        "reconnect_failed": _reconnect_again,
        "kwargs": {
            "autocommit": True,
            "options": f"-c statement_timeout={options.statement_timeout_ms}",
            **connect_timeout(url, options.connect_timeout_seconds),
        },
    }
    if primary is None:
        return AsyncConnectionPool(url, **arguments)
    return PrimaryPool(url, primary=primary, down_wait=options.down_wait, **arguments)


DATABASE_DOWN_ERRORS: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)
"""The errors that mean the database cannot be reached (down, restarting, the pool exhausted):
a request that meets one is answered ``503`` with ``Retry-After``, never ``500``."""
