"""Every import of the service's own code (and of the tests' helpers) by the benchmarks, in one
place: when the service renames or moves something, this module is the one to follow it.

The server app ``bench/ceiling_app.py`` takes its own from here too. The tests' helpers are
imported on use, since only ``movepath`` and ``soak`` need them.
"""

from __future__ import annotations

from typing import Any

from service.bootstrap import build_services, close
from service.deals.pool_solving import solve_seed
from service.games import moves as game_moves
from service.http.app import create_app
from service.http.move_route import make_move
from service.http.server import LOOP, uvicorn_arguments  # served as in production: see service/http/server.py
from service.ratings.rating_store import record_race
from service.settings import Settings
from service.store import embedded_db, embedded_replica, event_store
from service.store.connections import PoolOptions, libpq_url, open_pool, use_msgspec_for_json
from service.store.event_store import insert_game
from service.store.game_records import NewEvent, NewGame
from service.store.migrations import migrate

__all__ = [
    "LOOP",
    "NewEvent",
    "NewGame",
    "PoolOptions",
    "Settings",
    "build_services",
    "close",
    "create_app",
    "embedded_db",
    "embedded_replica",
    "event_store",
    "fake_store",
    "game_moves",
    "insert_game",
    "libpq_url",
    "log_audit",
    "make_move",
    "migrate",
    "open_pool",
    "pending_append",
    "record_race",
    "solve_seed",
    "use_msgspec_for_json",
    "uvicorn_arguments",
]


def pending_append(*args: Any) -> Any:
    """A decided move as the batch's ``Append`` (snapshot only when due), as the service makes it."""
    return game_moves.pending_append(*args)


def fake_store() -> Any:
    """The unit tests' in-memory store class (``tests/unit/fake_store.py``)."""
    from tests.unit.fake_store import FakeStore

    return FakeStore


def log_audit() -> tuple[Any, Any]:
    """The tests' audit of stored games: ``(stored, log_problems)`` of ``tests/live.py``."""
    from tests.live import log_problems, stored

    return stored, log_problems
