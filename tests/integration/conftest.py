"""Shared by the store-level integration tests: a "server process" (its own pool and cache on
the shared test database) and a new game in it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import pytest

from service.bootstrap import Services, build_services, close
from service.clock import utc_now
from service.settings import Settings
from service.store.connections import PoolOptions, open_pool
from service.store.event_store import EventStore


@asynccontextmanager
async def server_process(
    url: str, pool_size: int, statement_timeout_ms: int = 5000, clock: Callable[[], datetime] = utc_now, **settings: Any
) -> AsyncIterator[Services]:
    """What one server process has: its own pool and its own cache, on the shared database."""
    pool = open_pool(url, PoolOptions(1, pool_size, statement_timeout_ms))
    await pool.open()
    services = build_services(EventStore(pool), Settings(database_url=url, **settings), clock)
    try:
        yield services
    finally:
        await close(services)
        await pool.close()


@pytest.fixture
async def services(clean_database: str) -> AsyncIterator[Services]:
    async with server_process(clean_database, 8) as services:
        yield services


async def register(services: Services, name: str, bot: bool = False) -> dict[str, Any]:
    """A new player, as ``POST /players`` answers: their id and their first token."""
    player, token = await services.accounts.create_player(name, None, bot)
    return {"id": player.id, "name": player.name, "token": token.secret, "bot": player.bot}


async def new_game(services: Services, seed: int = 1, ruleset: str = "open-runs") -> tuple[str, uuid.UUID]:
    player = await register(services, "tester")
    view = await services.games.create_game(player["token"], ruleset, {"seed": seed})
    return player["token"], view.id


