"""Shared by the store-level integration tests: a "server process" (its own pool and cache on
the shared test database) and a new game in it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import pytest

from service.games.games import Games, utc_now
from service.settings import Settings
from service.store.connections import open_pool
from service.store.event_store import EventStore


@asynccontextmanager
async def server_process(
    url: str, pool_size: int, statement_timeout_ms: int = 5000, clock: Callable[[], datetime] = utc_now, **settings: Any
) -> AsyncIterator[Games]:
    """What one server process has: its own pool and its own cache, on the shared database."""
    pool = open_pool(url, 1, pool_size, statement_timeout_ms)
    await pool.open()
    games = Games(EventStore(pool), Settings(database_url=url, **settings), clock)
    try:
        yield games
    finally:
        await games.batcher.close()
        await games.daily.close()
        await pool.close()


@pytest.fixture
async def games(clean_database: str) -> AsyncIterator[Games]:
    async with server_process(clean_database, 8) as games:
        yield games


async def new_game(games: Games, seed: int = 1, ruleset: str = "open-runs") -> tuple[str, uuid.UUID]:
    player = await games.create_player("tester")
    view = await games.create_game(player["token"], ruleset, {"seed": seed})
    return player["token"], uuid.UUID(view["id"])


