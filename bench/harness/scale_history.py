"""The scale bench's history, from the domain's own events, written set-based.

``templates`` plays games by the rules; ``load_templates`` stores them in two bench tables;
``grow`` copies them under new ids (``INSERT ... SELECT`` over ``generate_series``, a chunk of
games a statement, ``FILL_JOBS`` connections at once: the chunks share nothing, so they run in
any order and side by side) with the players, races, leaderboards and stats that go with them.
The indexes and constraints are dropped for the copy and made again after it (``bulk_load``).
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

RULESETS = ("classic", "draw-one", "open-runs")
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
SPACING = "2 seconds"  # between two history games' starts: 10,000,000 games span 231 days
CHUNK = 25_000  # history games a statement
FILL_JOBS = int(os.environ.get("SCALE_FILL_JOBS", "2"))
MIN_PLAYERS = 1_000  # the smallest size's board: 334 ranked entries, so a page a third down is full
MIN_GAMES = 4_000  # the smallest size's bot: 800 games, about 130 of them in progress


def templates(count: int) -> list[dict[str, Any]]:
    """Games played by the rules with a seeded random player (1 to 60 moves, undos now and then;
    most resigned, the rest left in progress): each its figures, events and final snapshot."""
    import domain
    from domain import Resign, Undo, apply, event_data, event_type
    from domain.codec import state_to_snapshot

    rng = random.Random(30)
    found = []
    for number in range(count):
        ruleset = domain.get_ruleset(RULESETS[number % 3])
        source = {"source": "seed", "seed": number + 1}
        dealt = domain.deal(ruleset, domain.shuffled_deck(number + 1), source)
        state = domain.initial_state(dealt)
        events = [(1, event_type(dealt), event_data(dealt))]
        for _ in range(rng.randint(1, 60)):
            legal = domain.legal_moves(state) if state.playing else []
            moves = [m for m in legal if not isinstance(m, (Resign, Undo))]
            if not moves:
                break
            undo = any(isinstance(m, Undo) for m in legal) and rng.random() < 0.05
            before = state.version
            state, new = apply(state, Undo() if undo else rng.choice(moves))
            events += [(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(new)]
        if state.playing and rng.random() < 0.8:
            before = state.version
            state, new = apply(state, Resign())
            events += [(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(new)]
        found.append({"ruleset": (ruleset.id, ruleset.version), "deal": source, "state": state,
                      "snapshot": state_to_snapshot(state), "events": events})
    return found


def load_templates(url: str, games: list[dict[str, Any]]) -> None:
    import psycopg
    from psycopg.types.json import Json, Jsonb

    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TABLE bench_template_games (t int PRIMARY KEY, ruleset_id text, ruleset_version int, deal jsonb,"
            " status text, version int, move_count int, undo_count int, assisted bool, snapshot json)"
        )
        conn.execute("CREATE TABLE bench_template_events (t int, version int, type text, data jsonb,"
                     " PRIMARY KEY (t, version))")
        with conn.cursor() as cursor:
            for number, game in enumerate(games):
                state = game["state"]
                cursor.execute(
                    "INSERT INTO bench_template_games VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (number, *game["ruleset"], Jsonb(game["deal"]), state.status.value, state.version,
                     state.move_count, state.undo_count, state.assisted, Json(game["snapshot"])),
                )
            with cursor.copy("COPY bench_template_events (t, version, type, data) FROM STDIN") as copy:
                for number, game in enumerate(games):
                    for version, kind, data in game["events"]:
                        copy.write_row((number, version, kind, Jsonb(data)))


def targets(size: int) -> dict[str, int]:
    """What a size holds: N games, N / 10 players, N / 4 finished races, N / 500 open races, with
    minimums that fill every page the bench reads."""
    return {"players": max(MIN_PLAYERS, size // 10), "games": max(MIN_GAMES, size),
            "finished races": max(40, size // 4), "open races": max(40, size // 500)}


# Game i: template i % templates, the bot's if i % 5 = 0, else non-bot game k = i - i / 5 - 1 of
# player k % players; started SPACING after game i - 1.
_GAME_OF = """
FROM generate_series(%(first)s::int, %(last)s::int) i
JOIN bench_template_games t ON t.t = i %% %(templates)s::int
CROSS JOIN LATERAL (SELECT md5('game:' || i)::uuid AS id,
    CASE WHEN i %% 5 = 0 THEN md5('bot')::uuid ELSE md5('player:' || ((i - i / 5 - 1) %% %(players)s::int))::uuid END
        AS player_id,
    %(epoch)s::timestamptz + i * %(spacing)s::interval AS started_at) g
"""


def _games(url: str, first: int, end: int, players: int, count: int) -> None:
    """Games ``first`` .. ``end - 1``: each a template's game row, snapshot and events under a new
    id, in one transaction; its events in version order."""
    import psycopg

    params = {"first": first, "last": end - 1, "templates": count, "players": players, "epoch": EPOCH,
              "spacing": SPACING}
    with psycopg.connect(url) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute(
            "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version, started_at,"
            " finished_at, updated_at, move_count, undo_count, assisted)"
            " SELECT g.id, g.player_id, t.ruleset_id, t.ruleset_version, t.deal, t.status, t.version, g.started_at,"
            " CASE WHEN t.status <> 'playing' THEN g.started_at + t.version * interval '3 seconds' END,"
            " g.started_at + t.version * interval '3 seconds', t.move_count, t.undo_count, t.assisted" + _GAME_OF,
            params,
        )
        conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot) SELECT g.id, t.version, t.snapshot"
                     + _GAME_OF, params)
        conn.execute(
            "INSERT INTO events (game_id, version, type, data, recorded_at)"
            " SELECT g.id, e.version, e.type, e.data, g.started_at + e.version * interval '3 seconds'" + _GAME_OF
            + " JOIN bench_template_events e ON e.t = t.t ORDER BY i, e.version",
            params,
        )


def grow(url: str, have: dict[str, int], size: int, count: int) -> dict[str, int]:
    """Add history from what ``have`` counts up to ``size`` games (``count`` templates)."""
    import psycopg

    from . import scale_boards

    target = targets(size)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO players (id, name, created_at) VALUES (md5('bot')::uuid, 'bot', %s)"
                     " ON CONFLICT DO NOTHING", (EPOCH,))
        conn.execute("INSERT INTO players (id, name, created_at) SELECT md5('player:' || q)::uuid, 'player ' || q, %s"
                     " FROM generate_series(%s::int, %s::int) q", (EPOCH, have["players"], target["players"] - 1))
    chunks = [(first, min(first + CHUNK, target["games"])) for first in range(have["games"], target["games"], CHUNK)]
    with ThreadPoolExecutor(max(1, FILL_JOBS)) as pool:
        for done in pool.map(lambda chunk: _games(url, *chunk, target["players"], count), chunks):
            assert done is None
    with psycopg.connect(url, autocommit=True) as conn:
        scale_boards.races(conn, have, target)
        scale_boards.leaderboards(conn, have, target, EPOCH, SPACING)
        scale_boards.stats(conn)
    have.update(target)
    return target

