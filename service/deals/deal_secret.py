"""The secret that daily and race deals are derived from (service.deals.daily, service.races.race_deals).

A configured ``DAILY_SECRET`` wins. Without one the server makes a random secret the first time
it needs one and keeps it in ``service_secrets`` (``INSERT ... ON CONFLICT DO NOTHING``, then
read back), so every process on the database uses the same one, also after a restart, and no
deck can be computed from the source code. The process that made it logs that once.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from psycopg_pool import AsyncConnectionPool

log = logging.getLogger("canfield")

SECRET_NAME = "deal-secret"
_MAKE = "INSERT INTO service_secrets (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING RETURNING name"
_READ = "SELECT value FROM service_secrets WHERE name = %s"


class DealSecret:
    """The deal secret of this process: the configured one, or the database's (made if missing)."""

    def __init__(self, pool: AsyncConnectionPool, configured: str | None) -> None:
        self.pool = pool
        self._value = configured or None
        self._lock = asyncio.Lock()

    async def value(self) -> str:
        if self._value is not None:
            return self._value
        async with self._lock:
            if self._value is None:
                self._value = await self._stored()
        return self._value

    async def _stored(self) -> str:
        async with self.pool.connection() as conn:
            made = await (await conn.execute(_MAKE, (SECRET_NAME, secrets.token_urlsafe(32)))).fetchone()
            row = await (await conn.execute(_READ, (SECRET_NAME,))).fetchone()
        assert row is not None
        if made is not None:
            log.warning("canfield: DAILY_SECRET is not set: made a random deal secret and stored it in the "
                        "database (service_secrets); every server process on this database uses it")
        return str(row[0])
