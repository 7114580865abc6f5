"""How the service connects to PostgreSQL: the URL psycopg takes, the connection pool (with its
reconnect policy), the JSON codec and the errors that mean the database is down."""

from __future__ import annotations

import re

import msgspec
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import AsyncConnectionPool, PoolTimeout


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
