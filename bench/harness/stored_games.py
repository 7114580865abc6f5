"""Games for the store bench: open-runs games played by the rules into the batch's
``Append``s, and a database holding them among others that do not move."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

Played = tuple[Any, list[Any]]
"""A game: (id, first snapshot, deal event type, deal event data) and its moves as ``Append``s."""


def played_games(count: int, moves_each: int) -> list[Played]:
    """Seeds 1..``count``: each game's first state and ``moves_each`` draws/recycles, made by the rules."""
    from domain import Draw, Recycle, apply, deal, event_data, event_type, get_ruleset, initial_state, shuffled_deck
    from domain.codec import state_to_snapshot

    from .service_api import NewEvent, pending_append

    now = datetime.now(UTC)
    games = []
    for seed in range(1, count + 1):
        dealt = deal(get_ruleset("open-runs"), shuffled_deck(seed), {"source": "seed", "seed": seed})
        state = initial_state(dealt)
        first = (uuid.uuid4(), state_to_snapshot(state), event_type(dealt), event_data(dealt))
        moves = []
        for _ in range(moves_each):
            before = state.version
            state, events = apply(state, Draw() if state.stock else Recycle())
            new = [NewEvent(before + i + 1, event_type(e), event_data(e)) for i, e in enumerate(events)]
            moves.append(pending_append(first[0], before, new, state, now))
        games.append((first, moves))
    return games


async def _deal(url: str, player: uuid.UUID, games: list[Played]) -> None:
    """The moving games, dealt by the store's own insert."""
    import psycopg

    from .service_api import NewEvent, NewGame, insert_game

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for (game_id, snapshot, kind, data), _ in games:
            await insert_game(conn, NewGame(game_id, player, ("open-runs", 1), {}, "playing", snapshot,
                                            [NewEvent(1, kind, data)], datetime.now(UTC)))


def fill(conn: Any, url: str, games: list[Played], others: int) -> None:
    """``others`` stored games that do not move (a table with history), then ``games`` dealt;
    statistics and a checkpoint, so that every round starts alike."""
    player = uuid.uuid4()
    conn.execute("INSERT INTO players (id, name) VALUES (%s, 'bench')", (player,))
    conn.execute(
        "INSERT INTO games (id, player_id, ruleset_id, ruleset_version, deal, status, version)"
        " SELECT gen_random_uuid(), %s, 'open-runs', 1, '{}', 'playing', 1 FROM generate_series(1, %s)",
        (player, others),
    )
    conn.execute("INSERT INTO game_snapshots (game_id, version, snapshot) SELECT id, 1, '{}' FROM games")
    asyncio.run(_deal(url, player, games))
    conn.execute("ANALYZE")
    conn.execute("CHECKPOINT")  # each round starts with the same full-page-write debt
