"""Migration 0005 moves each game's snapshot into ``game_snapshots`` and its list figures into
columns; a database of games made before it plays on after it, and a downgrade puts the old
layout back only when no snapshot is behind its game."""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from alembic import command
from psycopg import sql
from psycopg.types.json import Json, Jsonb

from domain import (
    Draw,
    Recycle,
    Undo,
    UseSolverHint,
    apply,
    deal,
    event_data,
    event_type,
    get_ruleset,
    initial_state,
    shuffled_deck,
)
from domain.codec import restore, snapshot_to_state, state_to_snapshot
from service.store.embedded_db import with_database
from service.store.migrations import alembic_config

from ..conftest import TEST_DB_PREFIX


@pytest.fixture
def scratch_url(postgres_server_url: str) -> Iterator[str]:
    """An empty database of its own (migrated by the test, step by step)."""
    name = f"{TEST_DB_PREFIX}{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(postgres_server_url, name)
    finally:
        with psycopg.connect(postgres_server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_game_stored_before_0005_keeps_its_state_and_figures(scratch_url: str) -> None:
    config = alembic_config(scratch_url)
    command.upgrade(config, "0004")
    dealt = deal(get_ruleset("open-runs"), shuffled_deck(3), {"source": "seed", "seed": 3})
    state, events = initial_state(dealt), [dealt]
    for _ in range(20):
        state, new = apply(state, Draw() if state.stock else Recycle())
        events += new
    for move in (Undo(), UseSolverHint(), Draw()):  # figures that differ from the columns' defaults
        state, new = apply(state, move)
        events += new
    player, game = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:  # the old layout: the snapshot in the row
        conn.execute("INSERT INTO players (id, name, token_hash) VALUES (%s, 'Ann', %s)", (player, b"hash"))
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, snapshot)"
            " VALUES (%s, %s, 'open-runs', 1, '{}', 'playing', %s, %s)",
            (game, player, state.version, Json(state_to_snapshot(state))),
        )
        for version, event in enumerate(events, start=1):
            conn.execute("INSERT INTO events (game_id, version, type, data) VALUES (%s, %s, %s, %s)",
                         (game, version, event_type(event), Jsonb(event_data(event))))

    command.upgrade(config, "0005")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        figures = conn.execute("SELECT version, move_count, undo_count, assisted FROM games").fetchone()
        snapshot_version, snapshot = conn.execute("SELECT version, snapshot FROM game_snapshots").fetchone()
        columns = {row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'games'"
        )}
    assert figures == (state.version, state.move_count, state.undo_count, state.assisted)
    assert state.undo_count == 1
    assert state.assisted
    assert snapshot_version == state.version
    assert restore(snapshot, [], state.version) == state
    assert "snapshot" not in columns

    command.downgrade(config, "0004")  # every snapshot is current: the old layout comes back whole
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        (stored,) = conn.execute("SELECT snapshot FROM games").fetchone()
    assert snapshot_to_state(stored) == state

    command.upgrade(config, "0005")
    with psycopg.connect(scratch_url, autocommit=True) as conn:  # a move written after 0005 without a snapshot
        conn.execute("UPDATE games SET version = version + 1")
    with pytest.raises(RuntimeError, match="1 game\\(s\\) have a snapshot older than their last event"):
        command.downgrade(config, "0004")
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0005", "nothing undone"
        assert conn.execute("SELECT count(*) FROM game_snapshots").fetchone()[0] == 1


def test_a_downgrade_waits_for_a_move_being_written_and_then_refuses(scratch_url: str) -> None:
    """A server still writing while the downgrade runs: the move's transaction is open when the
    downgrade starts. Without its lock the check would see the old, current version, pass, and the
    copy would then take the snapshot the move left behind."""
    config = alembic_config(scratch_url)
    command.upgrade(config, "0005")
    dealt = deal(get_ruleset("open-runs"), shuffled_deck(5), {"source": "seed", "seed": 5})
    state = initial_state(dealt)
    player, game = uuid.uuid4(), uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name, token_hash) VALUES (%s, 'Ann', %s)", (player, b"hash"))
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
            " VALUES (%s, %s, 'open-runs', 1, '{}', 'playing', %s)",
            (game, player, state.version),
        )
        conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot) VALUES (%s, %s, %s)",
                     (game, state.version, Json(state_to_snapshot(state))))

    outcome: list[BaseException | None] = []

    def downgrade() -> None:
        try:
            command.downgrade(config, "0004")
        except BaseException as error:  # handed to the test's thread
            outcome.append(error)
        else:
            outcome.append(None)

    with psycopg.connect(scratch_url) as mover, psycopg.connect(scratch_url, autocommit=True) as watcher:
        mover.execute("UPDATE games SET version = version + 1 WHERE id = %s", (game,))  # not committed yet
        worker = threading.Thread(target=downgrade)
        worker.start()
        deadline = time.monotonic() + 30
        while not watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND pid <> %s",
            (mover.info.backend_pid,),
        ).fetchone()[0]:
            assert worker.is_alive(), f"the downgrade ended without waiting for the move: {outcome}"
            assert time.monotonic() < deadline, "the downgrade never waited for the move"
            time.sleep(0.05)
        mover.commit()  # the move lands while the downgrade waits
        worker.join(timeout=60)
    assert not worker.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], RuntimeError), f"the downgrade went through: {outcome}"
    assert "1 game(s) have a snapshot older than their last event" in str(outcome[0])
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0005", "nothing undone"
