"""Past states from checkpoints, against the real database: the state at any version read from the
nearest checkpoint at or below it is the fold of the events from the deal, undo window included,
in long games with runs of undos deeper than the undo window (which need the stored undo stack)."""

from __future__ import annotations

import asyncio
import random
import uuid

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import Command, GameState, apply, deal, event_data, event_type, get_ruleset, initial_state, legal_moves
from domain.codec import state_to_snapshot
from domain.commands import Resign, Undo
from domain.events import Event
from domain.rules import replay
from domain.undo_stack import WINDOW
from service.bootstrap import Services
from service.clock import utc_now
from service.games.past_states import Checkpoints
from service.store.checkpoints import CHECKPOINT_EVERY
from service.store.event_store import insert_game
from service.store.game_records import NewEvent, NewGame

from .conftest import register, server_process


def long_game(seed: int, length: int, ruleset: str = "classic") -> list[Event]:
    """The events of a game of ``length`` versions or so, played at random from ``seed``'s deck:
    moves, with runs of undos now and then, some of them deeper than the undo window."""
    rng = random.Random(seed)
    rules = get_ruleset(ruleset)
    deck = list(range(52))
    rng.shuffle(deck)
    first = deal(rules, tuple(deck), {"source": "seed", "seed": seed})
    state: GameState = initial_state(first)
    events: list[Event] = [first]
    undos = 0
    while state.version < length and state.status.value == "playing":
        if undos == 0 and state.undo_depth and rng.random() < 0.03:
            undos = rng.choice([1, 3, 20, WINDOW + 5, WINDOW * 2 + 7])
        command: Command
        if undos and state.undo_depth:
            command, undos = Undo(), undos - 1
        else:
            undos = 0
            choices = [move for move in legal_moves(state) if not isinstance(move, (Undo, Resign))]
            if not choices:
                break
            command = rng.choice(choices)
        state, made = apply(state, command, events)
        events.extend(made)
    return events


async def _store(services: Services, events: list[Event]) -> tuple[uuid.UUID, str]:
    """The game of ``events`` stored as the service stores a game (its snapshot at its last version),
    and its player's token."""
    player = await register(services, "long")
    final = replay(events)
    game_id = uuid.uuid4()
    stored = [NewEvent(n, event_type(event), event_data(event)) for n, event in enumerate(events, start=1)]
    async with services.store.pool.connection() as conn, conn.transaction():
        await insert_game(conn, NewGame(game_id, uuid.UUID(str(player["id"])),
                                        (final.ruleset.id, final.ruleset.version), {"source": "seed", "seed": 1},
                                        final.status.value, state_to_snapshot(final), stored, utc_now()))
    return game_id, str(player["token"])


def _checkpoints(url: str, game_id: uuid.UUID) -> list[int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version FROM game_checkpoints WHERE game_id = %s ORDER BY version",
                            (game_id,)).fetchall()
    return [row[0] for row in rows]


@pytest.mark.asyncio
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), every=st.sampled_from([7, 50, 64]), data=st.data())
async def test_a_state_from_a_checkpoint_is_the_fold_from_the_deal(
    clean_database: str, seed: int, every: int, data: st.DataObject
) -> None:
    events = long_game(seed, 1300)
    async with server_process(clean_database, 4) as services:
        game_id, _ = await _store(services, events)
        past = Checkpoints(services.store, every)
        last = len(events)
        asked = data.draw(st.lists(st.integers(1, last), min_size=5, max_size=25), label="versions")
        for version in [*asked, last, every, 2 * every - 1, 2 * every, 2 * every + 1]:
            if not 1 <= version <= last:
                continue
            assert await past.state_at(game_id, version) == replay(events[:version]), version
        stored = _checkpoints(clean_database, game_id)
        assert stored == list(range(every, max([*asked, last]) // every * every + 1, every))
        # read again, now from the stored checkpoints alone
        again = Checkpoints(services.store, every)
        for version in asked:
            assert await again.state_at(game_id, version) == replay(events[:version]), version


@pytest.mark.asyncio
async def test_the_states_read_folds_from_the_nearest_checkpoint(clean_database: str) -> None:
    """``GET /games/{id}/states/{v}``'s path: the game's view at every tenth version, as a replay
    from the deal gives it, and the checkpoints it stored at the multiples of CHECKPOINT_EVERY."""
    events = long_game(7, 2 * CHECKPOINT_EVERY + 150)
    assert len(events) > 2 * CHECKPOINT_EVERY
    undone = [n for n, event in enumerate(events) if type(event).__name__ == "MoveUndone"]
    assert undone, "the game has undos"
    async with server_process(clean_database, 4) as services:
        game_id, _ = await _store(services, events)
        stored_snapshot_at = len(events)
        for version in range(1, stored_snapshot_at, 10):
            view = await services.games.state_at(game_id, version)
            want = replay(events[:version])
            assert view.version == version
            assert view.move_count == want.move_count
            assert view.undo_count == want.undo_count
            assert await services.games.checkpoints.state_at(game_id, version) == want
        assert _checkpoints(clean_database, game_id) == [CHECKPOINT_EVERY, 2 * CHECKPOINT_EVERY]


@pytest.mark.asyncio
async def test_a_move_reaching_a_multiple_stores_its_checkpoint(clean_database: str) -> None:
    """The move that reaches version CHECKPOINT_EVERY stores that checkpoint (in the background)."""
    events = long_game(11, CHECKPOINT_EVERY + 40)
    assert len(events) > CHECKPOINT_EVERY
    async with server_process(clean_database, 4) as services:
        game_id, token = await _store(services, events[: CHECKPOINT_EVERY - 3])
        log = events[: CHECKPOINT_EVERY - 3]
        state = replay(log)
        while state.version < CHECKPOINT_EVERY + 2:
            move = next(m for m in legal_moves(state) if not isinstance(m, Resign))
            played = await services.moves.play(game_id, token, move)
            state, made = apply(state, move, log)
            log = [*log, *made]
            assert played.version == state.version
        await asyncio.gather(*services.games.checkpoints._writing)
        assert _checkpoints(clean_database, game_id) == [CHECKPOINT_EVERY]
