"""How the service connects to PostgreSQL: the URL psycopg takes, the connection pool (with its
reconnect policy), the JSON codec and the errors that mean the database is down."""

from __future__ import annotations

import msgspec
import psycopg
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import AsyncConnectionPool, PoolTimeout


def libpq_url(url: str) -> str:
    """The same database as a plain libpq URL (what psycopg connects with)."""
    for prefix in ("postgresql+psycopg://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url


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


def open_pool(
    url: str, min_size: int, max_size: int, statement_timeout_ms: int, timeout: float = 5.0
) -> AsyncConnectionPool:
    use_msgspec_for_json()
    return AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        open=False,
        timeout=timeout,
        reconnect_timeout=RECONNECT_SECONDS,
        reconnect_failed=_reconnect_again,
        kwargs={"autocommit": True, "options": f"-c statement_timeout={statement_timeout_ms}"},
    )


DATABASE_DOWN_ERRORS: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout)
"""The errors that mean the database cannot be reached (down, restarting, the pool exhausted):
a request that meets one is answered ``503`` with ``Retry-After``, never ``500``."""
