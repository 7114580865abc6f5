"""Loading a lot of history fast, and checking it: the indexes and constraints of the history
tables dropped for the load and made again after it (exactly as the catalog had them), the server
set for a bulk load meanwhile, and a sample of the loaded games replayed through the domain."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

BULK_TABLES = ("games", "events", "game_snapshots", "daily_leaderboard", "races", "race_entrants", "player_stats")
"""The tables a fill writes most of: loaded without their indexes and constraints."""

_CONSTRAINTS = """
SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid), c.contype
FROM pg_constraint c
WHERE c.contype IN ('p', 'u', 'f')
  AND (c.conrelid = ANY(%(tables)s::regclass[]) OR (c.contype = 'f' AND c.confrelid = ANY(%(tables)s::regclass[])))
ORDER BY c.contype <> 'f', c.conname
"""
_INDEXES = """
SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
FROM pg_index i
WHERE i.indrelid = ANY(%(tables)s::regclass[])
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u'))
ORDER BY 1
"""
# For the load only: no checkpoint in the middle of it at up to 1,000,000 games (each would write
# every page it touched again, whole, to the WAL), commits that do not wait for the disk, and no
# autovacuum competing for the cores (the load ends with a VACUUM ANALYZE of its own).
_BULK_SETTINGS = {"max_wal_size": "'16GB'", "checkpoint_timeout": "'1h'", "synchronous_commit": "off",
                  "autovacuum": "off"}


def schema(conn: Any) -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str]]]:
    """The history tables' primary keys, unique and foreign keys (those between them and the
    others too), and their other indexes: (table, name, definition, kind), (name, CREATE INDEX)."""
    tables = list(BULK_TABLES)
    constraints = conn.execute(_CONSTRAINTS, {"tables": tables}).fetchall()
    return [tuple(row) for row in constraints], [tuple(row) for row in conn.execute(_INDEXES, {"tables": tables})]


@contextmanager
def without_indexes(url: str, timings: dict[str, float]) -> Iterator[None]:
    """The history tables bare (foreign keys, then keys and indexes dropped) while the block
    runs, then everything made again in the catalog's own words: keys and indexes first, then the
    foreign keys, validated against the rows loaded. ``timings`` gets the seconds of each part."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        constraints, indexes = schema(conn)
        for setting, value in _BULK_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {setting} = {value}")
        conn.execute("SELECT pg_reload_conf()")
        for table, name, _, _ in constraints:  # foreign keys come first in the list
            conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
    started = time.monotonic()
    yield
    timings["load"] = time.monotonic() - started
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.monotonic()
        conn.execute("SET maintenance_work_mem = '1GB'")
        for table, name, definition, kind in constraints:
            if kind != "f":
                conn.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
        for _, definition in indexes:
            conn.execute(definition)
        timings["indexes"] = time.monotonic() - started
        started = time.monotonic()
        for table, name, definition, kind in constraints:
            if kind == "f":
                conn.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
        timings["foreign keys"] = time.monotonic() - started
        for setting in _BULK_SETTINGS:
            conn.execute(f"ALTER SYSTEM RESET {setting}")
        conn.execute("SELECT pg_reload_conf()")
        if schema(conn) != (constraints, indexes):
            raise SystemExit("the history tables' keys and indexes did not come back as they were")
        started = time.monotonic()
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")
        timings["vacuum"] = time.monotonic() - started


def replay_sample(url: str, games: int, sample: int) -> int:
    """Replay ``sample`` of the first ``games`` history games (spread over them) through the domain
    from their stored events: each must end in its stored snapshot and its games row's figures.
    Returns how many were checked; raises SystemExit on the first that does not."""
    import psycopg

    from domain import replay
    from domain.codec import event_from_data, state_to_snapshot

    from .service_api import use_msgspec_for_json

    use_msgspec_for_json()
    step = max(1, games // max(1, sample))
    checked = 0
    with psycopg.connect(url) as conn:
        for i in range(0, games, step):
            row = conn.execute(
                "SELECT g.status, g.version, g.move_count, g.undo_count, g.assisted, s.version, s.snapshot"
                " FROM games g JOIN game_snapshots s ON s.game_id = g.id WHERE g.id = md5('game:' || %s)::uuid", (i,)
            ).fetchone()
            events = conn.execute("SELECT type, data FROM events WHERE game_id = md5('game:' || %s)::uuid"
                                  " ORDER BY version", (i,)).fetchall()
            state = replay(event_from_data(kind, data) for kind, data in events)
            replayed = (state.status.value, state.version, state.move_count, state.undo_count, state.assisted,
                        state.version)
            snapshot = _plain(state_to_snapshot(state))
            if row is None or tuple(row[:6]) != replayed or _plain(row[6]) != snapshot:
                raise SystemExit(f"history game {i} does not replay to its stored row: {row and row[:6]} != {replayed}")
            checked += 1
    return checked


def _plain(value: Any) -> Any:
    """JSON-shaped data with its tuples as lists, to compare a snapshot with one read back."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value
