"""Migration 0012 queues again the analyses of abandoned games, made when the abandonment was taken
for part of the player's last move: no answer or result kept, the total counted with the
abandonment's position; the analyses of other games stay as they are."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command
from psycopg.types.json import Jsonb

from domain import (
    Abandon,
    Draw,
    Event,
    Resign,
    apply,
    deal,
    event_data,
    event_type,
    get_ruleset,
    initial_state,
    shuffled_deck,
)
from domain.analysis import positions
from service.store.migrations import alembic_config, migrate

from .test_snapshot_migration import scratch_url  # noqa: F401  (a fixture: an empty database of its own)

_JOB = ("SELECT status, total, done, answers, result, error, lease_until, finished_at, attempt FROM analysis_jobs"
        " WHERE game_id = %s")


def _events(last: Abandon | Resign) -> list[Event]:
    dealt = deal(get_ruleset("open-runs"), shuffled_deck(4), {"source": "seed", "seed": 4})
    state = initial_state(dealt)
    events: list[Event] = [dealt]
    for move in (Draw(), Draw(), Draw(), last):
        state, new = apply(state, move)
        events += new
    return events


def _store(conn: psycopg.Connection, player: uuid.UUID, events: list[Event], total: int) -> uuid.UUID:
    """A resigned game of ``events`` and its analysis, done as it was before 0012 (``total`` positions)."""
    game = uuid.uuid4()
    conn.execute(
        "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, finished_at)"
        " VALUES (%s, %s, 'open-runs', 1, '{}', 'resigned', %s, now())",
        (game, player, len(events)),
    )
    for version, event in enumerate(events, start=1):
        conn.execute("INSERT INTO events (game_id, version, type, data) VALUES (%s, %s, %s, %s)",
                     (game, version, event_type(event), Jsonb(event_data(event))))
    result = {"positions": [{"version": 0, "verdict": "lost", "movesToWin": None}], "turningPoint": None, "solved": 1}
    conn.execute(
        "INSERT INTO analysis_jobs (game_id, status, version, done, total, answers, result, attempt, started_at,"
        " finished_at) VALUES (%s, 'done', %s, %s, %s, %s, %s, 1, now(), now())",
        (game, len(events), total, total, Jsonb([{"index": 3, "result": "lost", "line": None}]), Jsonb(result)),
    )
    return game


def test_the_analyses_of_abandoned_games_are_queued_again_and_the_others_kept(scratch_url: str) -> None:  # noqa: F811
    config = alembic_config(scratch_url)
    command.upgrade(config, "0011")  # the revision before this one
    abandoned, resigned = _events(Abandon(31)), _events(Resign())
    player = uuid.uuid4()
    with psycopg.connect(scratch_url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name) VALUES (%s, 'Ann')", (player,))
        # before 0012 the abandonment was no position: the deal and the three draws
        abandoned_game = _store(conn, player, abandoned, 4)
        resigned_game = _store(conn, player, resigned, 5)
        kept = conn.execute(_JOB, (resigned_game,)).fetchone()

    command.upgrade(config, "0012")
    with psycopg.connect(scratch_url) as conn:
        again = conn.execute(_JOB, (abandoned_game,)).fetchone()
        assert conn.execute(_JOB, (resigned_game,)).fetchone() == kept
    assert again == ("queued", len(positions(abandoned)), 0, [], None, None, None, None, 1)
    assert len(positions(abandoned)) == 5  # the deal, the three draws and the abandonment

    command.downgrade(config, "0011")  # nothing to undo: the job stays queued, to be analysed again
    with psycopg.connect(scratch_url) as conn:
        assert conn.execute(_JOB, (abandoned_game,)).fetchone() == again
    migrate(scratch_url)
