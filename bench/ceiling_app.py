"""The ceiling for the API benchmark: a bare Litestar app whose only work is one INSERT per request.

``POST /ceiling`` takes a small JSON body ``{"game": "<uuid>", "type": "draw"}``, inserts it into
``bench_ceiling`` (created by the bench) through a psycopg ``AsyncConnectionPool`` opened with the
same arguments as the service's (``service.store.connections.open_pool`` with the ``Settings`` defaults), and
returns a small JSON body. Served like the service: ``uvicorn bench.ceiling_app:app`` with
``DATABASE_URL`` set. ``GET /health`` is there for the bench to wait on; it is not measured.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, get, post

from bench.harness.service_api import PoolOptions, Settings, libpq_url, open_pool

_INSERT = "INSERT INTO bench_ceiling (game_id, body) VALUES (%s, %s) RETURNING id"


def create_app(database_url: str) -> Litestar:
    from psycopg.types.json import Jsonb

    defaults = Settings()
    pool = open_pool(
        libpq_url(database_url),
        PoolOptions(defaults.pool_min_size, defaults.pool_max_size, defaults.statement_timeout_ms),
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        await pool.open(wait=False)
        try:
            yield
        finally:
            await pool.close()

    @post("/ceiling", status_code=200)
    async def ceiling(data: dict[str, Any]) -> dict[str, Any]:
        async with pool.connection() as conn:
            cursor = await conn.execute(_INSERT, (data.get("game"), Jsonb(data)))
            row = await cursor.fetchone()
        assert row is not None
        return {"id": row[0], "ok": True}

    @get("/health")
    async def health() -> dict[str, str]:
        async with pool.connection(timeout=2) as conn:
            await conn.execute("SELECT 1")
        return {"status": "ok"}

    return Litestar(route_handlers=[ceiling, health], lifespan=[lifespan], logging_config=None, debug=False)


def _app_from_env() -> Litestar | None:
    url = os.environ.get("DATABASE_URL")
    return create_app(url) if url else None


app = _app_from_env()  # uvicorn bench.ceiling_app:app (None when imported without DATABASE_URL)
