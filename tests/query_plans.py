"""The plans of the statements the service really runs: a pool that records every statement (and
its parameters) the service's code sends, and the check that a plan reads a big table only
through an index, in the index's order (no Seq Scan of it, no Sort above a read of it).

Shared by tests/integration/test_history_indexes.py and ``python -m bench scale``."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import date
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

BIG_TABLES = frozenset({
    "games", "events", "game_snapshots", "races", "race_entrants", "daily_leaderboard", "player_stats", "players",
})
"""The tables that grow with history."""


class _Recording:
    """A connection or cursor whose ``execute`` calls are noted (then passed on)."""

    def __init__(self, inner: Any, seen: list[tuple[str, Any]]) -> None:
        self._inner, self._seen = inner, seen

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        self._seen.append((str(query), params))
        result = await self._inner.execute(query, params, **kwargs)
        return self if result is self._inner else result

    def cursor(self, *args: Any, **kwargs: Any) -> _Recording:
        return _Recording(self._inner.cursor(*args, **kwargs), self._seen)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class RecordingPool:
    """Stands in for the service's pool: ``seen`` lists every statement, in order."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.seen: list[tuple[str, Any]] = []

    @contextlib.asynccontextmanager
    async def connection(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with self.pool.connection(*args, **kwargs) as conn:
            yield _Recording(conn, self.seen)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


INDEX_ONLY = ("SET enable_seqscan = off", "SET enable_bitmapscan = off", "SET enable_sort = off")
"""Planner settings under which a plan still holds a Seq Scan or a Sort only if no index serves it."""


def plan(url: str, query: str, params: Any, *, settings: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON plan of one recorded statement (parameters bound client-side), under ``settings``."""
    with psycopg.connect(url, cursor_factory=psycopg.ClientCursor) as conn:
        for setting in settings:
            conn.execute(setting)
        row = conn.execute(f"EXPLAIN (FORMAT JSON) {query}", params).fetchone()  # type: ignore[arg-type]
        conn.rollback()
    assert row is not None
    found: dict[str, Any] = row[0][0]["Plan"]
    return found


def nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from nodes(child)


def _reads(node: dict[str, Any]) -> set[str]:
    return {n["Relation Name"] for n in nodes(node) if n.get("Relation Name") in BIG_TABLES}


def problems(node: dict[str, Any]) -> list[str]:
    """What in a plan reads history whole: a Seq Scan of a big table, a Sort over a read of one,
    or a Bitmap Heap Scan of many of its rows (``counts`` finds the aggregates over one)."""
    found = []
    for each in nodes(node):
        kind = each["Node Type"]
        if kind == "Seq Scan" and each.get("Relation Name") in BIG_TABLES:
            found.append(f"Seq Scan on {each['Relation Name']}")
        if kind in ("Sort", "Incremental Sort") and _reads(each):
            found.append(f"{kind} over {', '.join(sorted(_reads(each)))}")
        if kind == "Bitmap Heap Scan" and each.get("Relation Name") in BIG_TABLES and each.get("Plan Rows", 0) > 5000:
            found.append(f"Bitmap Heap Scan of {each['Plan Rows']} rows of {each['Relation Name']}")
    return found


def _unbounded_reads(node: dict[str, Any]) -> set[str]:
    """The big tables a node's subtree reads with no Limit between the read and the node."""
    if node["Node Type"] == "Limit":
        return set()
    found = {node["Relation Name"]} if node.get("Relation Name") in BIG_TABLES else set()
    for child in node.get("Plans", []):
        found |= _unbounded_reads(child)
    return found


def counts(node: dict[str, Any]) -> list[str]:
    """The aggregates a plan runs over a big table's rows (a count or a sum of every row that
    matches, not a maximum read as the last entry of an index): each reads a number of rows that
    grows with the table."""
    return [
        f"{each['Node Type']} over {', '.join(sorted(_unbounded_reads(each)))}"
        for each in nodes(node)
        if each["Node Type"] == "Aggregate" and any(_unbounded_reads(child) for child in each.get("Plans", []))
    ]


def summary(node: dict[str, Any]) -> str:
    """The plan in one line: each scan of a table with its index, in plan order."""
    parts = []
    for each in nodes(node):
        if "Relation Name" in each:
            index = f" using {each['Index Name']}" if "Index Name" in each else ""
            parts.append(f"{each['Node Type']} on {each['Relation Name']}{index}")
    return "; ".join(parts) or node["Node Type"]


Read = Callable[[], Awaitable[Any]]


def growing_reads(services: Any, stats: Any, player: uuid.UUID, day: date, after: Any) -> dict[str, Read]:
    """Each read that grows with history, as the service's code runs it: ``services`` the ``Services`` and
    ``stats`` a ``Stats`` on a ``RecordingPool``, ``player`` one with many games, ``day`` a date
    with a leaderboard and ``after`` a ranked ``BoardKey`` of it, with its rank."""
    return {
        "leaderboard": lambda: stats.leaderboard(day, 100),
        "leaderboard, later page": lambda: stats.leaderboard(day, 100, after),
        "leaderboard, later page, its rank counted": lambda: stats.leaderboard(
            day, 100, dataclasses.replace(after, rank=None, wins=None)
        ),
        "player's games": lambda: services.store.player_games(player, None, None, 101),
        "player's ended games": lambda: services.store.player_games(player, True, None, 101),
        "player's games in progress": lambda: services.store.player_games(player, False, None, 101),
        "export page": lambda: services.store.player_game_keys(player, None, None, None, 20),
        "lobby": lambda: services.races.store.open_races(21),
        "stats over all players": lambda: stats.overall_stats(("classic", "draw-one", "open-runs")),
        "a player's race record": lambda: services.races.store.record(player),
        "personal export": lambda: services.accounts.store.personal_rows(player),
    }
